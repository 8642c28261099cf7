"""Scoring: the composite of one trial, verdicts over trials, and comparisons of cells."""

from sounding.scoring._gaps import compare, measure_gap, publishable
from sounding.scoring._scenario import (
    Aggregation,
    ScenarioResult,
    ScenarioVerdict,
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
from sounding.scoring._trial import Kind, Measured, TrialScore, TrialVerdict, composite, score_trial

__all__ = [
    "Aggregation",
    "Comparison",
    "Direction",
    "GapState",
    "Interval",
    "Kind",
    "Measured",
    "ScenarioResult",
    "ScenarioVerdict",
    "Statistic",
    "Summary",
    "TrialScore",
    "TrialVerdict",
    "aggregate",
    "compare",
    "composite",
    "interval",
    "measure_gap",
    "pass_at_k",
    "pass_hat_k",
    "publishable",
    "score_trial",
    "summarize",
]
