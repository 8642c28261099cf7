"""The stop rule of `--until-decided`: the Clopper-Pearson bound, when a scenario is decided,
how many trials its finished ones justify, and the rule's error rates, exactly."""

from __future__ import annotations

import random
from functools import cache
from math import comb

import pytest

from sounding.scoring import Stop, StopRule, decide, lower_bound, trials_needed

RULE = StopRule()  # at least 2, at most 10 trials; 95 % sure of a 70 % rate


def _tail(successes: int, trials: int, rate: float) -> float:
    return sum(
        comb(trials, k) * rate**k * (1 - rate) ** (trials - k) for k in range(successes, trials + 1)
    )


@pytest.mark.parametrize(
    ("successes", "trials", "expected"),
    [
        (7, 10, 0.3933758),
        (10, 10, 0.05**0.1),
        (1, 1, 0.05),
        (9, 9, 0.05 ** (1 / 9)),
        (3, 20, 0.0422),
    ],
)
def test_the_lower_bound_is_the_beta_quantile(successes: int, trials: int, expected: float) -> None:
    bound = lower_bound(successes, trials, 0.95)
    assert bound == pytest.approx(expected, abs=1e-4)
    assert _tail(successes, trials, bound) == pytest.approx(0.05, abs=1e-9)  # what defines it


def test_the_lower_bound_of_no_success_is_zero_and_nonsense_is_refused() -> None:
    assert lower_bound(0, 5, 0.95) == 0.0
    with pytest.raises(ValueError, match="successes <= trials"):
        lower_bound(6, 5, 0.95)


def test_a_pass_and_a_fail_decide_flaky_at_once() -> None:
    assert decide(RULE, 1, 1) is Stop.DIFFER
    assert decide(StopRule(least=5), 1, 1) is Stop.DIFFER  # the least binds agreeing trials only


def test_agreeing_trials_stop_when_the_bound_clears_the_rate() -> None:
    # 0.05 ** (1/8) = 0.688 < 0.7 <= 0.05 ** (1/9) = 0.717
    assert decide(RULE, 8, 0) is None and decide(RULE, 0, 8) is None
    assert decide(RULE, 9, 0) is Stop.BOUND and decide(RULE, 0, 9) is Stop.BOUND
    assert decide(StopRule(rate=0.5), 5, 0) is Stop.BOUND  # 0.5 ** 5 = 0.031 <= 0.05
    assert decide(StopRule(rate=0.5), 4, 0) is None  # 0.5 ** 4 = 0.0625


def test_the_least_trials_come_before_the_bound() -> None:
    loose = StopRule(rate=0.2)  # 0.05 ** (1/2) = 0.224: two agreeing trials clear it
    assert decide(loose, 2, 0) is Stop.BOUND
    assert decide(StopRule(least=4, rate=0.2), 3, 0) is None


def test_the_most_trials_stop_a_scenario_errors_included() -> None:
    assert decide(StopRule(most=4), 4, 0) is Stop.MOST
    assert decide(StopRule(most=4), 2, 0, errors=2) is Stop.MOST
    assert decide(RULE, 0, 0, errors=10) is Stop.MOST


def test_errored_trials_are_no_outcome() -> None:
    assert decide(RULE, 8, 0, errors=1) is None  # nine trials, eight outcomes
    assert trials_needed(RULE, 8, 0, errors=1) == 10


def test_trials_needed_is_what_agreeing_trials_to_come_would_take() -> None:
    assert trials_needed(RULE, 0, 0) == 9
    assert trials_needed(RULE, 3, 0) == trials_needed(RULE, 0, 3) == 9
    assert trials_needed(RULE, 3, 1) == 4  # decided: no more
    assert trials_needed(RULE, 2, 0, errors=3) == 10  # capped by the most
    assert trials_needed(StopRule(most=4), 0, 0) == 4


def test_a_rule_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="least <= most"):
        StopRule(least=5, most=4)
    with pytest.raises(ValueError, match="confidence"):
        StopRule(confidence=1.0)
    with pytest.raises(ValueError, match="rate"):
        StopRule(rate=0.0)


def _verdicts(rule: StopRule, rate: float) -> dict[str, float]:
    """The exact chance of each verdict, and the mean trials, of a scenario passing at
    `rate`, walking every path of outcomes `decide` allows."""

    @cache
    def walk(passed: int, failed: int) -> tuple[dict[str, float], float]:
        stop = decide(rule, passed, failed)
        if stop is not None:
            verdict = "flaky" if passed and failed else ("pass" if passed else "fail")
            return {verdict: 1.0}, float(passed + failed)
        chances: dict[str, float] = {}
        mean = 0.0
        for weight, step in ((rate, (passed + 1, failed)), (1 - rate, (passed, failed + 1))):
            if weight == 0:
                continue
            found, trials = walk(*step)
            for verdict, chance in found.items():
                chances[verdict] = chances.get(verdict, 0.0) + weight * chance
            mean += weight * trials
        return chances, mean

    chances, mean = walk(0, 0)
    return {**chances, "trials": mean}


def test_the_error_rates_are_those_of_nine_agreeing_trials() -> None:
    """Called PASS only when nine trials in a row passed: p ** 9; FAIL: (1 - p) ** 9."""
    for rate in (1.0, 0.95, 0.8, 0.5, 0.2, 0.05, 0.0):
        found = _verdicts(RULE, rate)
        assert found.get("pass", 0.0) == pytest.approx(rate**9)
        assert found.get("fail", 0.0) == pytest.approx((1 - rate) ** 9)
    assert "flaky" not in _verdicts(RULE, 1.0) and "flaky" not in _verdicts(RULE, 0.0)
    assert _verdicts(RULE, 0.5)["trials"] == pytest.approx(2 + sum(0.5**k for k in range(1, 8)))


def test_a_simulation_by_decide_matches_the_exact_rates() -> None:
    """What benchmarks/simulate_adaptive.py does at 10,000 scenarios, here at 4,000."""
    draw = random.Random(20260729)
    verdicts = {"pass": 0, "flaky": 0, "fail": 0}
    for _ in range(4000):
        passed = failed = 0
        while decide(RULE, passed, failed) is None:
            passed, failed = (passed + 1, failed) if draw.random() < 0.8 else (passed, failed + 1)
        verdicts["flaky" if passed and failed else "pass" if passed else "fail"] += 1
    assert verdicts["pass"] / 4000 == pytest.approx(0.8**9, abs=0.02)
    assert verdicts["fail"] == 0
