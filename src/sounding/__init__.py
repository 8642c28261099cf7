"""sounding: does my agent work, reliably?

The public API: load case files, read run records, measure a record with the checks of a
scenario, and aggregate trials into pass@k, pass^k and a verdict. The command line
(`sounding run`, `score`, `validate`, `report`, `compare`) is built on these names.
"""

from sounding.checks import CheckContext, CheckResult, Evidence, Params, Status, registry
from sounding.record import RecordError, RunRecord, Trace, load_record
from sounding.scoring import (
    ScenarioResult,
    ScenarioVerdict,
    TrialScore,
    TrialVerdict,
    aggregate,
    measure_trial,
    pass_at_k,
    pass_hat_k,
)
from sounding.spec import Case, Scenario, SpecError, load_case, load_cases

__version__ = "0.1.0"

__all__ = [
    "Case",
    "CheckContext",
    "CheckResult",
    "Evidence",
    "Params",
    "RecordError",
    "RunRecord",
    "Scenario",
    "ScenarioResult",
    "ScenarioVerdict",
    "SpecError",
    "Status",
    "Trace",
    "TrialScore",
    "TrialVerdict",
    "aggregate",
    "load_case",
    "load_cases",
    "load_record",
    "measure_trial",
    "pass_at_k",
    "pass_hat_k",
    "registry",
]
