"""Honest statistics: rates and medians, bootstrap intervals, and which gaps survive resampling.

A metric's type decides its aggregate: yes/no values give a rate (x/n), numbers a median,
anything else is shown and never aggregated. `None` is an unjudged value: it leaves the
denominator. Two cells differ only when a seeded percentile bootstrap of the gap keeps
zero out of its interval; otherwise the comparison is inconclusive, whatever the estimates say.
"""

from __future__ import annotations

import bisect
import functools
import math
import random
import statistics
from collections.abc import Callable, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

DEFAULT_DRAWS = 10_000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 20260729


class Statistic(StrEnum):
    """How a metric's values combine across trials, decided by their type; and which
    statistic of a judge's agreement with people an interval is of."""

    RATE = "rate"  # yes/no values: x of n
    MEDIAN = "median"  # numbers
    DIAGNOSTIC = "diagnostic"  # anything else: stored and shown, never aggregated
    EMPTY = "empty"  # no judged value at all
    KAPPA = "kappa"  # a judge's yes/no against people's: Cohen's kappa (_agreement.py)
    SPEARMAN = "spearman"  # a judge's scores against people's: rank correlation
    MAE = "mae"  # ... and the mean absolute error between them


class GapState(StrEnum):
    """The verdict on a gap between two cells."""

    ESTABLISHED = "established"  # the interval keeps 0 out: the gap survives resampling
    INCONCLUSIVE = "inconclusive"  # the interval holds 0: no difference is claimed


class Direction(StrEnum):
    """Which way an established gap goes, for a metric where higher is better or worse."""

    IMPROVEMENT = "improvement"
    REGRESSION = "regression"


class Summary(BaseModel):
    """One metric over trials. `estimate` is the rate or the median; None when there is none."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    statistic: Statistic
    judged: int
    unjudged: int
    successes: int | None = None
    estimate: float | None = None
    note: str = ""

    def describe(self) -> str:
        tail = f" ({self.unjudged} unjudged)" if self.unjudged else ""
        if self.statistic is Statistic.RATE:
            return f"{self.successes}/{self.judged} = {self.estimate:.2f}{tail}"
        if self.statistic is Statistic.MEDIAN:
            return f"median {self.estimate:.4g} over {self.judged}{tail}"
        if self.statistic is Statistic.EMPTY:
            return f"nothing judged{tail}"
        return f"diagnostic only: {self.note}" if self.note else "diagnostic only"


class Interval(BaseModel):
    """A percentile bootstrap interval of a statistic, with what it takes to redraw it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    statistic: Statistic
    estimate: float
    low: float
    high: float
    draws: int
    level: float
    seed: int

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def describe(self, *, signed: bool = False) -> str:
        form = "+.4g" if signed else ".4g"
        shown = f"{self.estimate:{form}} [{self.low:{form}}, {self.high:{form}}]"
        return f"{shown} ({self.level:.0%}, {self.draws:,} draws, seed {self.seed})"


class Comparison(BaseModel):
    """A candidate cell against a reference cell: the interval of candidate − reference.

    `state` is None when no verdict is given: for cost and latency (`measure_gap`), and for
    a comparison that may not be published (`withheld` says why).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    reference: str
    candidate: str
    paired: bool
    interval: Interval
    reference_summary: Summary
    candidate_summary: Summary
    unpaired: int = 0  # keys left out of a paired draw: one side had no judged value there
    state: GapState | None = None
    direction: Direction | None = None
    withheld: str = ""

    @property
    def established(self) -> bool:
        return self.state is GapState.ESTABLISHED

    def describe(self) -> str:
        head = f"{self.candidate} vs {self.reference}: {self.interval.describe(signed=True)}"
        if self.withheld:
            return f"{head}, not publishable: {self.withheld}"
        if self.state is None:
            return f"{head}, no verdict"
        if self.direction is None:
            return f"{head}, {self.state.value}: the interval holds 0"
        return f"{head}, {self.state.value} {self.direction.value}"


Reduce = Callable[[Sequence[float]], float]
STATISTICS: dict[Statistic, Reduce] = {
    Statistic.RATE: statistics.fmean,
    Statistic.MEDIAN: statistics.median,
}


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _kind(judged: Sequence[object]) -> tuple[Statistic, str]:
    """The aggregate the judged values allow, and a note when they allow none."""
    if not judged:
        return Statistic.EMPTY, ""
    if all(isinstance(v, bool) for v in judged):
        return Statistic.RATE, ""
    if all(_is_number(v) for v in judged):
        if all(math.isfinite(v) for v in judged):  # type: ignore[arg-type]
            return Statistic.MEDIAN, ""
        return Statistic.DIAGNOSTIC, "a value is not a finite number (nan or inf), so no median"
    if any(isinstance(v, bool) for v in judged) and any(_is_number(v) for v in judged):
        note = "values mix yes/no and numbers; a metric must keep one type across trials"
        return Statistic.DIAGNOSTIC, note + ", fix the validator that returns it"
    return Statistic.DIAGNOSTIC, ""


def summarize(values: Sequence[object]) -> Summary:
    """Summarize one metric over trials: a rate for yes/no, a median for numbers.

    `None` values are unjudged: counted apart and left out of the denominator.
    """
    judged = [v for v in values if v is not None]
    kind, note = _kind(judged)
    reduce = STATISTICS.get(kind)
    return Summary(
        statistic=kind,
        judged=len(judged),
        unjudged=len(values) - len(judged),
        successes=sum(map(bool, judged)) if kind is Statistic.RATE else None,
        estimate=float(reduce(judged)) if reduce else None,  # type: ignore[arg-type]
        note=note,
    )


def data_of(summary: Summary, values: Sequence[object], side: str) -> list[float]:
    """The judged values as floats (yes/no as 1/0), or a ValueError saying why there are none."""
    if summary.statistic is Statistic.EMPTY:
        held = f"all {len(values)} values are unjudged" if values else "it is empty"
        raise ValueError(
            f"{side} holds no judged value ({held}); an interval needs at least one "
            "measured trial, so measure it or leave this metric out"
        )
    if summary.statistic is Statistic.DIAGNOSTIC:
        why = summary.note or "its values are neither yes/no nor numbers"
        raise ValueError(
            f"{side} cannot be resampled: {why}; only yes/no metrics (rates) and "
            "numeric metrics (medians) have intervals"
        )
    return [float(v) for v in values if v is not None]  # type: ignore[arg-type]


def check_settings(draws: int, level: float) -> None:
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise ValueError(
            f"draws must be a whole number of at least 1, got {draws!r}; "
            f"{DEFAULT_DRAWS:,} is the default and what published comparisons use"
        )
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1 (0.95 for 95 %), got {level!r}")


def _rank(quantile: float, count: int) -> int:
    """int(quantile·count), rounded first so that 0.975·10000 is 9750, never 9749."""
    return min(count - 1, int(round(quantile * count, 6)))


Draw = Callable[[random.Random], float]


def bootstrap(
    draw: Draw, *, statistic: Statistic, estimate: float, draws: int, level: float, seed: int
) -> Interval:
    """Run `draws` draws on a fresh `random.Random(seed)`; bounds by percentile rank."""
    rng = random.Random(seed)
    ordered = sorted(draw(rng) for _ in range(draws))
    tail = (1.0 - level) / 2.0
    return Interval(
        statistic=statistic,
        estimate=estimate,
        low=ordered[_rank(tail, draws)],
        high=ordered[_rank(1.0 - tail, draws)],
        draws=draws,
        level=level,
        seed=seed,
    )


def unmoved(kind: Statistic, estimate: float, *, draws: int, level: float, seed: int) -> Interval:
    """What the bootstrap gives, without drawing, when every value of each sample is alike:
    every resample is the sample itself, so both bounds are the estimate."""
    return Interval(
        statistic=kind,
        estimate=estimate,
        low=estimate,
        high=estimate,
        draws=draws,
        level=level,
        seed=seed,
    )


def interval(
    values: Sequence[object],
    *,
    draws: int = DEFAULT_DRAWS,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """Percentile bootstrap of the rate (yes/no) or the median (numbers) of one sample.

    A fresh `random.Random(seed)` per sample, resampled in sorted order: the interval is a
    function of the values alone, never of the order the trials finished in, and the same
    values (a check every trial passed, two checks that agree) are resampled once.
    Use it alone for cost and latency of one cell: an interval, never a verdict.
    """
    check_settings(draws, level)
    summary = summarize(values)
    data = tuple(sorted(data_of(summary, values, "the sample")))
    return _resampled(summary.statistic, data, draws, level, seed)


@functools.lru_cache(maxsize=1024)
def _resampled(
    kind: Statistic, data: tuple[float, ...], draws: int, level: float, seed: int
) -> Interval:
    statistic = STATISTICS[kind]
    estimate = statistic(data)
    if data[0] == data[-1]:
        return unmoved(kind, estimate, draws=draws, level=level, seed=seed)

    def draw(rng: random.Random) -> float:
        return statistic(rng.choices(data, k=len(data)))

    return bootstrap(draw, statistic=kind, estimate=estimate, draws=draws, level=level, seed=seed)


def rate_interval(
    successes: int,
    total: int,
    *,
    draws: int = DEFAULT_DRAWS,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """The percentile bootstrap of a rate, from its counts alone (`interval` needs the values).

    A resample of `total` yes/no values with `successes` yes holds a Binomial(total, rate)
    number of yes: each draw takes one by inverting that distribution's CDF, so millions of
    values cost what their two counts cost, and no value need be kept.
    """
    check_settings(draws, level)
    if not 0 <= successes <= total or total < 1:
        raise ValueError(
            f"a rate needs 0 <= successes <= total and total >= 1, got {successes}/{total}"
        )
    rate = successes / total
    cdf, first = _binomial_cdf(total, rate)

    def draw(rng: random.Random) -> float:
        return (first + bisect.bisect_left(cdf, rng.random() * cdf[-1])) / total

    return bootstrap(
        draw, statistic=Statistic.RATE, estimate=rate, draws=draws, level=level, seed=seed
    )


def _binomial_cdf(n: int, p: float) -> tuple[list[float], int]:
    """The cumulative probabilities of Binomial(n, p) over the counts that carry any weight
    (13 standard deviations either side of the mean), and the first of those counts."""
    if p in (0.0, 1.0):
        return [1.0], round(n * p)
    spread = 13 * math.sqrt(n * p * (1 - p)) + 1
    first, last = max(0, math.floor(n * p - spread)), min(n, math.ceil(n * p + spread))
    log_p, log_q, log_n = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    cdf, running = [], 0.0
    for k in range(first, last + 1):
        log_pmf = log_n - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p
        running += math.exp(log_pmf + (n - k) * log_q)
        cdf.append(running)
    return cdf, first
