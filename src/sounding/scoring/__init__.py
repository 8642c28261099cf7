"""Scoring: the composite of one trial, verdicts over trials, and comparisons of cells."""

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
from sounding.scoring._sequential import Stop, StopRule, decide, lower_bound, trials_needed
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
    "Comparison",
    "Direction",
    "GapState",
    "Interval",
    "Kind",
    "Measured",
    "ScenarioResult",
    "ScenarioVerdict",
    "Statistic",
    "Stop",
    "StopRule",
    "Summary",
    "Tally",
    "TrialScore",
    "TrialVerdict",
    "aggregate",
    "compare",
    "composite",
    "decide",
    "interval",
    "lower_bound",
    "measure_gap",
    "measure_trial",
    "pass_at_k",
    "pass_hat_k",
    "publishable",
    "run_check",
    "score_error_kind",
    "score_trial",
    "summarize",
    "trials_needed",
]
