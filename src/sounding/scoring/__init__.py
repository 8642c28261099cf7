"""Scoring: the composite of one trial, verdicts over trials, and comparisons of cells."""

from sounding.scoring._gaps import compare, measure_gap, publishable
from sounding.scoring._measure import measure_trial, run_check
from sounding.scoring._scenario import (
    CurvePoint,
    ScenarioResult,
    ScenarioVerdict,
    Tally,
    aggregate,
    mean_curve,
    pass_at_curve,
    pass_at_k,
    pass_hat_curve,
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
    "Comparison",
    "CurvePoint",
    "Direction",
    "GapState",
    "Interval",
    "Kind",
    "Measured",
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
    "mean_curve",
    "measure_gap",
    "measure_trial",
    "pass_at_curve",
    "pass_at_k",
    "pass_hat_curve",
    "pass_hat_k",
    "publishable",
    "run_check",
    "score_error_kind",
    "score_trial",
    "summarize",
]
