"""The public surface of `sounding.validators` cannot drift unnoticed."""

from __future__ import annotations

import types

import sounding.validators as validators

PINNED = [
    "CONTEXT_SCHEMA",
    "FORM_SCHEMA",
    "KEY_SCHEMA",
    "Answer",
    "CannotJudge",
    "CellLike",
    "ContextDocument",
    "ContextError",
    "FinishedTrial",
    "FormError",
    "FormResult",
    "Metric",
    "Reference",
    "Run",
    "Validation",
    "ValidatorProgram",
    "blinding_note",
    "blinding_notes",
    "check_answer",
    "export_form",
    "import_form",
    "read_answer",
    "run_validators",
    "validator",
]


def test_all_is_sorted_and_names_exactly_the_public_objects() -> None:
    public = {
        name
        for name, value in vars(validators).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert validators.__all__ == sorted(validators.__all__, key=lambda n: (not n.isupper(), n))
    assert set(validators.__all__) == public
    assert validators.__all__ == PINNED


def test_the_schemas_are_versioned() -> None:
    assert validators.CONTEXT_SCHEMA == "sounding.validation-context/1"
    assert validators.FORM_SCHEMA == "sounding.form/1"
    assert validators.KEY_SCHEMA == "sounding.form-key/1"
