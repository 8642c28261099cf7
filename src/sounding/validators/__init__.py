"""Validators: a finished trial measured into named metrics (script, judge and form modes).

For validator authors: `Run`, `Metric`, `CannotJudge` and `@validator` (docs/validators.md).
For the runner: `run_validators` on a `FinishedTrial`, `blinding_notes` to print once per
run. For `sounding form`: `export_form` and `import_form`.
"""

import typing as _typing

from sounding._lazy import lazy_names as _lazy_names

if _typing.TYPE_CHECKING:
    from sounding.validators._answer import Answer, check_answer, read_answer
    from sounding.validators._context import (
        CONTEXT_SCHEMA,
        ContextDocument,
        FinishedTrial,
        Reference,
    )
    from sounding.validators._form import (
        FORM_SCHEMA,
        KEY_SCHEMA,
        FormError,
        FormResult,
        export_form,
        import_form,
    )
    from sounding.validators._judge import CellLike, blinding_note, blinding_notes
    from sounding.validators._program import Metric, ValidatorProgram, validator
    from sounding.validators._run import CannotJudge, ContextError, Run
    from sounding.validators._validate import Validation, run_validators

# each name, by the module that defines it: a case without validators loads few of them
_HOMES = {
    **dict.fromkeys(("Answer", "check_answer", "read_answer"), "_answer"),
    **dict.fromkeys(
        ("CONTEXT_SCHEMA", "ContextDocument", "FinishedTrial", "Reference"), "_context"
    ),
    **dict.fromkeys(
        ("FORM_SCHEMA", "KEY_SCHEMA", "FormError", "FormResult", "export_form", "import_form"),
        "_form",
    ),
    **dict.fromkeys(("CellLike", "blinding_note", "blinding_notes"), "_judge"),
    **dict.fromkeys(("Metric", "ValidatorProgram", "validator"), "_program"),
    **dict.fromkeys(("CannotJudge", "ContextError", "Run"), "_run"),
    **dict.fromkeys(("Validation", "run_validators"), "_validate"),
}
__getattr__ = _lazy_names(__name__, _HOMES)

__all__ = [
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
