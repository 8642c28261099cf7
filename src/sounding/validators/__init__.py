"""Validators: a finished trial measured into named metrics (script, judge and form modes).

For validator authors: `Run`, `Metric`, `CannotJudge` and `@validator` (docs/validators.md).
For the runner: `run_validators` on a `FinishedTrial`, `blinding_notes` to print once per
run, `gate_judges` to keep a judge people have not validated from gating. For `sounding
form`: `export_form` and `import_form`; for `sounding agreement`: `measure_agreement`.
"""

from sounding.validators._agreement import (
    AGREEMENT_FILE,
    AGREEMENT_SCHEMA,
    Agreement,
    AgreementError,
    AgreementReport,
    measure_agreement,
    read_agreement,
    save_agreement,
    suite_cases,
)
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
from sounding.validators._gating import (
    gate_judges,
    judge_of,
    may_gate,
    suite_judge,
    unvalidated_judges,
)
from sounding.validators._judge import CellLike, blinding_note, blinding_notes
from sounding.validators._program import Metric, ValidatorProgram, validator
from sounding.validators._run import CannotJudge, ContextError, Run
from sounding.validators._validate import Validation, run_validators

__all__ = [
    "AGREEMENT_FILE",
    "AGREEMENT_SCHEMA",
    "CONTEXT_SCHEMA",
    "FORM_SCHEMA",
    "KEY_SCHEMA",
    "Agreement",
    "AgreementError",
    "AgreementReport",
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
    "gate_judges",
    "import_form",
    "judge_of",
    "may_gate",
    "measure_agreement",
    "read_agreement",
    "read_answer",
    "run_validators",
    "save_agreement",
    "suite_cases",
    "suite_judge",
    "unvalidated_judges",
    "validator",
]
