"""Case files: models, loading and validation with file:line errors."""

from sounding.spec._duration import parse_duration
from sounding.spec._errors import Problem, SpecError
from sounding.spec._load import load_case, load_cases, resolve_case
from sounding.spec._models import (
    Assertion,
    Case,
    CheckSpec,
    Invariant,
    Scenario,
    Scoring,
    Workspace,
)
from sounding.spec._validators import ValidatorSpec

__all__ = [
    "Assertion",
    "Case",
    "CheckSpec",
    "Invariant",
    "Problem",
    "Scenario",
    "Scoring",
    "SpecError",
    "ValidatorSpec",
    "Workspace",
    "load_case",
    "load_cases",
    "parse_duration",
    "resolve_case",
]
