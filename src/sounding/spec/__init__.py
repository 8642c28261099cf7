"""Case files: models, loading and validation with file:line errors."""

from sounding.spec._models import (
    Assertion,
    Case,
    CheckSpec,
    Invariant,
    Scenario,
    Scoring,
    Workspace,
)

__all__ = [
    "Assertion",
    "Case",
    "CheckSpec",
    "Invariant",
    "Scenario",
    "Scoring",
    "Workspace",
]
