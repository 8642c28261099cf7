"""Case files: models, loading and validation with file:line errors."""

from sounding._problems import Problem
from sounding.spec._duration import parse_duration
from sounding.spec._errors import SpecError
from sounding.spec._load import case_files, load_case, load_cases, resolve_case
from sounding.spec._models import (
    Assertion,
    Case,
    CheckSpec,
    Invariant,
    JudgeCheck,
    Scenario,
    Scoring,
    Simulation,
    StandIn,
    Workspace,
)
from sounding.spec._raw import Aggregation
from sounding.spec._toml import read_toml
from sounding.spec._validators import ValidatorSpec

__all__ = [
    "Aggregation",
    "Assertion",
    "Case",
    "CheckSpec",
    "Invariant",
    "JudgeCheck",
    "Problem",
    "Scenario",
    "Scoring",
    "Simulation",
    "SpecError",
    "StandIn",
    "ValidatorSpec",
    "Workspace",
    "case_files",
    "load_case",
    "load_cases",
    "parse_duration",
    "read_toml",
    "resolve_case",
]
