"""Adaptive trials (`sounding run --until-decided`): when a scenario's verdict is decided.

A fixed run gives every scenario the same number of trials, whether its first two already
disagreed or fifty agreed. The rule here stops a scenario as soon as more trials could not
change what it says, or could change it only against the odds the user accepted:

- outcomes that differ (a pass and a fail) make the scenario **flaky**, for good: no trial
  to come can take a pass or a fail back;
- outcomes that all agree stop once the one-sided Clopper-Pearson bound shows, at
  `confidence`, that this outcome happens at least `rate` of the time (for n agreeing
  trials of n that bound is (1 - confidence) ** (1 / n));
- a scenario that has taken `most` trials stops there, as its trials say.

Errored trials are no outcome (they are not evidence): they count against `most` alone.
Everything here is pure and exact, and the simulation in `benchmarks/simulate_adaptive.py`
calls the same `decide` the runner does.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from math import comb

_BISECTIONS = 60  # halvings of [0, 1]: far below any rate a user can write
_SLACK = 1e-12  # a bound within this of the rate clears it (bisection rounding)


class Stop(StrEnum):
    """Why a scenario takes no more trials."""

    DIFFER = "differ"  # a pass and a fail: flaky, whatever comes next
    BOUND = "bound"  # its agreeing outcomes cleared the bound
    MOST = "max-trials"  # it reached the most trials it may take


@dataclass(frozen=True)
class StopRule:
    """The rule's settings: at least `least` judged trials before agreeing outcomes may stop
    a scenario, at most `most` trials in all (errored ones included), and the bound: at
    `confidence`, the agreeing outcome must hold at least `rate` of the time."""

    least: int = 2
    most: int = 10
    confidence: float = 0.95
    rate: float = 0.7

    def __post_init__(self) -> None:
        if not 1 <= self.least <= self.most:
            raise ValueError(
                f"need 1 <= least <= most trials, got least={self.least}, most={self.most}"
            )
        for name, value in (("confidence", self.confidence), ("rate", self.rate)):
            if not 0 < value < 1:
                raise ValueError(f"{name} must be between 0 and 1 (exclusive), got {value}")


def decide(rule: StopRule, passed: int, failed: int, errors: int = 0) -> Stop | None:
    """Why a scenario with these finished trials takes no more; None while it is open."""
    if passed and failed:
        return Stop.DIFFER
    judged = passed + failed
    if judged >= rule.least and lower_bound(judged, judged, rule.confidence) >= rule.rate - _SLACK:
        return Stop.BOUND
    if judged + errors >= rule.most:
        return Stop.MOST
    return None


def trials_needed(rule: StopRule, passed: int, failed: int, errors: int = 0) -> int:
    """The trials (errored ones included) a scenario takes in all if every trial still to
    come agrees with those before it: what its finished trials justify running, never more.
    A decided scenario needs the trials it has."""
    grow_failed = failed > 0  # the outcome they agree on (none yet: either, the bound is alike)
    more = 0
    while decide(rule, *_agreeing(passed, failed, more, grow_failed), errors) is None:
        more += 1
    return passed + failed + errors + more


def _agreeing(passed: int, failed: int, more: int, grow_failed: bool) -> tuple[int, int]:
    return (passed, failed + more) if grow_failed else (passed + more, failed)


@lru_cache(maxsize=4096)  # a run asks the same few bounds for every trial that finishes
def lower_bound(successes: int, trials: int, confidence: float) -> float:
    """The one-sided Clopper-Pearson lower bound of a rate at `confidence`: the least rate p
    under which `successes` or more of `trials` happen with probability 1 - confidence
    (the beta quantile, found by bisection on the exact binomial tail)."""
    if not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if successes == 0:
        return 0.0
    alpha = 1 - confidence
    low, high = 0.0, 1.0
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        if _tail(successes, trials, middle) < alpha:
            low = middle
        else:
            high = middle
    return low


def _tail(successes: int, trials: int, rate: float) -> float:
    """P(X >= successes) for X ~ Binomial(trials, rate)."""
    return sum(
        comb(trials, k) * rate**k * (1 - rate) ** (trials - k) for k in range(successes, trials + 1)
    )
