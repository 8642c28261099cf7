"""measures.json: one versioned record per trial, the input of every statistic."""

from __future__ import annotations

from typing import Any

from sounding.checks import Status
from sounding.runner._trial import TrialOutcome
from sounding.scoring import TrialScore

MEASURES_SCHEMA = "sounding.measures/1"


def trial_measures(outcome: TrialOutcome) -> dict[str, Any]:
    """A trial's metrics: `passed` and `composite`, one bool per check (None when unjudged)."""
    metrics: dict[str, Any] = {"passed": None, "composite": None}
    reasons: dict[str, str] = {}
    if outcome.score is not None:
        metrics.update(_score_metrics(outcome.score))
        reasons = {m.name: m.result.reason for m in outcome.score.checks if m.result.reason}
    metrics.update(outcome.metrics)
    reasons.update(outcome.metric_reasons)
    return {
        **outcome.key.as_dict(),
        "state": outcome.state,
        "verdict": outcome.verdict,
        "reason": outcome.reason,  # the first failure, or what stopped an errored trial
        "usage": outcome.usage,
        "duration_ms": round(outcome.duration_ms, 3),
        "attempts": outcome.attempts,
        "metrics": metrics,
        "reasons": reasons,
    }


def _score_metrics(score: TrialScore) -> dict[str, Any]:
    metrics: dict[str, Any] = {
        "passed": None if score.verdict.value == "error" else score.verdict.value == "pass",
        "composite": score.composite,
    }
    for m in score.checks:
        judged = m.result.status in (Status.PASSED, Status.FAILED)
        metrics[m.name] = m.result.status is Status.PASSED if judged else None
    return metrics


def measures_document(run_id: str, outcomes: list[TrialOutcome]) -> dict[str, Any]:
    return {
        "schema": MEASURES_SCHEMA,
        "run_id": run_id,
        "trials": [trial_measures(o) for o in outcomes],
    }
