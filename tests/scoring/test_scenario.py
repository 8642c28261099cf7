"""pass@k, pass^k and the scenario verdict over trials."""

from __future__ import annotations

import os
from math import comb

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sounding.scoring import (
    ScenarioVerdict,
    TrialScore,
    TrialVerdict,
    aggregate,
    pass_at_k,
    pass_hat_k,
)
from sounding.spec import Aggregation


def trials(*verdicts: str, composite: float | None = None) -> list[TrialScore]:
    out = []
    for v in verdicts:
        verdict = TrialVerdict(v)
        value = composite if composite is not None else (1.0 if v == "pass" else 0.0)
        out.append(
            TrialScore(
                verdict=verdict, composite=None if v == "error" else value, threshold=1.0, checks=[]
            )
        )
    return out


def test_all_passing_is_pass() -> None:
    result = aggregate(trials("pass", "pass", "pass"))
    assert (result.verdict, result.pass_at_k, result.pass_hat_k) == (ScenarioVerdict.PASS, 1, 1)
    assert result.gate


def test_some_passing_is_flaky_and_does_not_gate_under_all() -> None:
    result = aggregate(trials("pass", "fail", "pass"))
    assert result.verdict is ScenarioVerdict.FLAKY
    assert (result.pass_at_k, result.pass_hat_k) == (1.0, 0.0)
    assert not result.gate
    assert aggregate(trials("pass", "fail", "pass"), aggregation=Aggregation.ANY).gate
    assert aggregate(trials("pass", "fail", "pass"), aggregation=Aggregation.MAJORITY).gate
    assert not aggregate(trials("pass", "fail", "fail"), aggregation=Aggregation.MAJORITY).gate


def test_none_passing_is_fail() -> None:
    assert aggregate(trials("fail", "fail")).verdict is ScenarioVerdict.FAIL


def test_a_single_trial_is_only_pass_or_fail() -> None:
    assert aggregate(trials("pass")).verdict is ScenarioVerdict.PASS
    assert aggregate(trials("fail")).verdict is ScenarioVerdict.FAIL


def test_mean_aggregation_gates_on_the_mean_composite() -> None:
    scores = trials("pass", "fail")
    assert aggregate(scores, aggregation=Aggregation.MEAN, threshold=0.5).gate
    assert not aggregate(scores, aggregation=Aggregation.MEAN, threshold=0.6).gate


def test_unbiased_estimators_with_more_trials_than_k() -> None:
    result = aggregate(trials("pass", "pass", "fail", "fail", "pass"), k=2)
    assert result.pass_at_k == pytest.approx(1 - comb(2, 2) / comb(5, 2))
    assert result.pass_hat_k == pytest.approx(comb(3, 2) / comb(5, 2))
    assert result.verdict is ScenarioVerdict.FLAKY


def test_errors_stand_apart_and_leave_the_verdict_open_only_when_they_could_change_it() -> None:
    open_ = aggregate(trials("pass", "pass", "error"))
    assert open_.verdict is ScenarioVerdict.ERROR  # the error could have been a failure
    assert (open_.passed, open_.errors, open_.pass_hat_k) == (2, 1, 1.0)
    assert not open_.gate
    settled = aggregate(trials("pass", "fail", "error"))
    assert settled.verdict is ScenarioVerdict.FLAKY  # flaky whatever the error trial did
    assert not settled.gate
    assert aggregate(trials("error", "error")).verdict is ScenarioVerdict.ERROR


@given(
    st.integers(1, 30).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
    )
)
def test_estimators_are_probabilities_and_agree_at_the_extremes(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    at, hat = pass_at_k(n, c, k), pass_hat_k(n, c, k)
    assert 0.0 <= hat <= at <= 1.0
    assert (at == 0.0) == (c == 0)
    assert (hat == 1.0) == (c == n)


def test_property_tests_run_under_the_ci_profile() -> None:
    """A loaded machine cannot fail them: no deadline, no "too slow", bounded examples."""
    if os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci":
        pytest.skip("another Hypothesis profile was asked for")
    current = settings()
    assert current.deadline is None and current.max_examples <= 100
    assert HealthCheck.too_slow in current.suppress_health_check


def test_estimators_refuse_impossible_counts() -> None:
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(3, 1, 4)
