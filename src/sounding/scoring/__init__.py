"""Scoring: the composite of one trial, and verdicts over trials."""

from sounding.scoring._scenario import (
    Aggregation,
    ScenarioResult,
    ScenarioVerdict,
    aggregate,
    pass_at_k,
    pass_hat_k,
)
from sounding.scoring._trial import Kind, Measured, TrialScore, TrialVerdict, composite, score_trial

__all__ = [
    "Aggregation",
    "Kind",
    "Measured",
    "ScenarioResult",
    "ScenarioVerdict",
    "TrialScore",
    "TrialVerdict",
    "aggregate",
    "composite",
    "pass_at_k",
    "pass_hat_k",
    "score_trial",
]
