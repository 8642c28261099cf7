"""Scoring: the composite of one trial, verdicts over trials, and comparisons of cells."""

from sounding.scoring._audit import (
    AUDIT_SCHEMA,
    Audit,
    AuditOutcome,
    Probe,
    ProbeRole,
    ScenarioAudit,
)
from sounding.scoring._gaps import compare, measure_gap, publishable
from sounding.scoring._measure import measure_trial, run_check
from sounding.scoring._scenario import (
    ScenarioResult,
    ScenarioVerdict,
    Tally,
    aggregate,
    pass_at_k,
    pass_hat_k,
)
from sounding.scoring._stats import (
    Comparison,
    Direction,
    GapState,
    Interval,
    Statistic,
    Summary,
    interval,
    summarize,
)
from sounding.scoring._trial import (
    Kind,
    Measured,
    TrialScore,
    TrialVerdict,
    composite,
    score_error_kind,
    score_trial,
)

__all__ = [
    "AUDIT_SCHEMA",
    "Audit",
    "AuditOutcome",
    "Comparison",
    "Direction",
    "GapState",
    "Interval",
    "Kind",
    "Measured",
    "Probe",
    "ProbeRole",
    "ScenarioAudit",
    "ScenarioResult",
    "ScenarioVerdict",
    "Statistic",
    "Summary",
    "Tally",
    "TrialScore",
    "TrialVerdict",
    "aggregate",
    "compare",
    "composite",
    "interval",
    "measure_gap",
    "measure_trial",
    "pass_at_k",
    "pass_hat_k",
    "publishable",
    "run_check",
    "score_error_kind",
    "score_trial",
    "summarize",
]
