"""Validators: a finished trial measured into named metrics (script, judge and form modes).

For validator authors: `Run`, `Metric`, `CannotJudge` and `@validator` (docs/validators.md).
For the runner: `run_validators` on a `FinishedTrial`, `blinding_notes` to print once per
run. For `sounding form`: `export_form` and `import_form`.
"""

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
