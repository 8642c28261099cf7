"""Honest statistics: rates and medians, bootstrap intervals, and which gaps survive resampling.

A metric's type decides its aggregate: yes/no values give a rate (x/n), numbers a median,
anything else is shown and never aggregated. `None` is an unjudged value: it leaves the
denominator. Two cells differ only when a seeded percentile bootstrap of the gap keeps
zero out of its interval; otherwise the comparison is inconclusive, whatever the estimates say.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Hashable, Mapping, Sequence
from enum import StrEnum
from itertools import chain

from pydantic import BaseModel, ConfigDict

DEFAULT_DRAWS = 10_000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 20260729


class Statistic(StrEnum):
    """How a metric's values combine across trials; decided by their type."""

    RATE = "rate"  # yes/no values: x of n
    MEDIAN = "median"  # numbers
    DIAGNOSTIC = "diagnostic"  # anything else: stored and shown, never aggregated
    EMPTY = "empty"  # no judged value at all


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


def _mean(data: Sequence[float]) -> float:
    return sum(data) / len(data)


def _median(data: Sequence[float]) -> float:
    return float(statistics.median(data))


_STATISTICS: dict[Statistic, Reduce] = {Statistic.RATE: _mean, Statistic.MEDIAN: _median}


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
    unjudged = len(values) - len(judged)
    if kind is Statistic.RATE:
        hits = sum(1 for v in judged if v)
        return Summary(
            statistic=kind,
            judged=len(judged),
            unjudged=unjudged,
            successes=hits,
            estimate=hits / len(judged),
        )
    if kind is Statistic.MEDIAN:
        estimate = _median(judged)  # type: ignore[arg-type]
        return Summary(statistic=kind, judged=len(judged), unjudged=unjudged, estimate=estimate)
    return Summary(statistic=kind, judged=len(judged), unjudged=unjudged, note=note)


def _data(summary: Summary, values: Sequence[object], side: str) -> list[float]:
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


def _check_settings(draws: int, level: float) -> None:
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


def _bounds(estimates: list[float], level: float) -> tuple[float, float]:
    ordered = sorted(estimates)
    tail = (1.0 - level) / 2.0
    return ordered[_rank(tail, len(ordered))], ordered[_rank(1.0 - tail, len(ordered))]


Draw = Callable[[random.Random], float]


def _bootstrap(
    draw: Draw, *, statistic: Statistic, estimate: float, draws: int, level: float, seed: int
) -> Interval:
    """Run `draws` draws on a fresh `random.Random(seed)`; bounds by percentile rank."""
    rng = random.Random(seed)
    low, high = _bounds([draw(rng) for _ in range(draws)], level)
    return Interval(
        statistic=statistic,
        estimate=estimate,
        low=low,
        high=high,
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

    A fresh `random.Random(seed)` per call: the same values and seed give the same interval.
    Use it alone for cost and latency of one cell: an interval, never a verdict.
    """
    _check_settings(draws, level)
    summary = summarize(values)
    data = _data(summary, values, "the sample")
    statistic = _STATISTICS[summary.statistic]

    def draw(rng: random.Random) -> float:
        return statistic(rng.choices(data, k=len(data)))

    return _bootstrap(
        draw,
        statistic=summary.statistic,
        estimate=statistic(data),
        draws=draws,
        level=level,
        seed=seed,
    )


Keys = tuple[Sequence[Hashable], Sequence[Hashable]]


def _groups(
    values: Sequence[object], keys: Sequence[Hashable], side: str
) -> dict[Hashable, list[float]]:
    if len(keys) != len(values):
        raise ValueError(
            f"{side} has {len(values)} values but {len(keys)} keys; "
            "give one key (e.g. the scenario id) per value"
        )
    grouped: dict[Hashable, list[float]] = {}
    for key, value in zip(keys, values, strict=True):
        grouped.setdefault(key, [])
        if value is not None:
            grouped[key].append(float(value))  # type: ignore[arg-type]
    return grouped


def _pairing_keys(
    reference: Sequence[object],
    candidate: Sequence[object],
    keys: Keys | None,
    names: tuple[str, str],
) -> Keys:
    if keys is not None:
        return keys
    if len(reference) != len(candidate):
        raise ValueError(
            f"a paired comparison by position needs as many values on both sides, but "
            f"{names[0]!r} has {len(reference)} and {names[1]!r} has {len(candidate)}; pass "
            "keys=(reference_keys, candidate_keys) to pair them by scenario, or paired=False"
        )
    return range(len(reference)), range(len(candidate))


def _some(keys: set[Hashable], shown: int = 5) -> str:
    named = sorted(map(repr, keys))
    more = f" and {len(named) - shown} more" if len(named) > shown else ""
    return ", ".join(named[:shown]) + more


def _check_same_keys(
    left: Mapping[Hashable, object], right: Mapping[Hashable, object], names: tuple[str, str]
) -> None:
    only = [
        f"{_some(set(a) - set(b))} only in {name!r}"
        for a, b, name in ((left, right, names[0]), (right, left, names[1]))
        if set(a) - set(b)
    ]
    if only:
        raise ValueError(
            f"the keys do not pair the two sides: {'; '.join(only)}; compare only the "
            "scenarios both cells ran, or use paired=False"
        )


def _paired_groups(
    reference: Sequence[object],
    candidate: Sequence[object],
    keys: Keys | None,
    names: tuple[str, str],
) -> tuple[list[list[float]], list[list[float]], int]:
    """Per shared key, the judged values of each side; keys judged on one side only are left out."""
    ref_keys, cand_keys = _pairing_keys(reference, candidate, keys, names)
    left = _groups(reference, ref_keys, repr(names[0]))
    right = _groups(candidate, cand_keys, repr(names[1]))
    _check_same_keys(left, right, names)
    shared = [key for key in left if left[key] and right[key]]
    if not shared:
        raise ValueError(
            f"no key has a judged value on both {names[0]!r} and {names[1]!r}, so nothing "
            "pairs; measure the same scenarios in both cells, or use paired=False"
        )
    return [left[k] for k in shared], [right[k] for k in shared], len(left) - len(shared)


def _unpaired(reference: list[float], candidate: list[float], statistic: Reduce) -> Draw:
    """Each draw resamples the reference, then the candidate, each with replacement."""

    def draw(rng: random.Random) -> float:
        ref = statistic(rng.choices(reference, k=len(reference)))
        return statistic(rng.choices(candidate, k=len(candidate))) - ref

    return draw


def _paired(reference: list[list[float]], candidate: list[list[float]], statistic: Reduce) -> Draw:
    """Each draw resamples the shared keys, and takes both sides of every drawn key."""
    keys = range(len(reference))

    def draw(rng: random.Random) -> float:
        picked = rng.choices(keys, k=len(keys))
        ref = statistic(list(chain.from_iterable(map(reference.__getitem__, picked))))
        return statistic(list(chain.from_iterable(map(candidate.__getitem__, picked)))) - ref

    return draw


def _same_type(left: Summary, right: Summary, names: tuple[str, str]) -> None:
    if {left.statistic, right.statistic} == {Statistic.RATE, Statistic.MEDIAN}:
        raise ValueError(
            f"{names[0]!r} gives a {left.statistic.value} and {names[1]!r} a "
            f"{right.statistic.value}: "
            "both sides of a comparison must hold the same metric type; fix the validator "
            "whose values changed type"
        )


def measure_gap(
    reference: Sequence[object],
    candidate: Sequence[object],
    *,
    paired: bool = False,
    keys: Keys | None = None,
    names: tuple[str, str] = ("reference", "candidate"),
    draws: int = DEFAULT_DRAWS,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Comparison:
    """The bootstrap interval of statistic(candidate) − statistic(reference), with no verdict.

    Use it as is for cost and latency, which are reported with intervals and never judged;
    `compare` adds the verdict. `paired=True` resamples keys (one per value, e.g. the
    scenario id; by position when `keys` is None) and takes both sides of each drawn key.
    """
    _check_settings(draws, level)
    if keys is not None and not paired:
        raise ValueError("keys pair the two sides, so they need paired=True; or drop them")
    left, right = summarize(reference), summarize(candidate)
    _same_type(left, right, names)
    ref_data = _data(left, reference, f"the {names[0]!r} side")
    cand_data = _data(right, candidate, f"the {names[1]!r} side")
    statistic = _STATISTICS[left.statistic]
    unpaired, draw = 0, _unpaired(ref_data, cand_data, statistic)
    if paired:
        ref_groups, cand_groups, unpaired = _paired_groups(reference, candidate, keys, names)
        ref_data = list(chain.from_iterable(ref_groups))
        cand_data = list(chain.from_iterable(cand_groups))
        draw = _paired(ref_groups, cand_groups, statistic)
    estimate = statistic(cand_data) - statistic(ref_data)
    span = _bootstrap(
        draw, statistic=left.statistic, estimate=estimate, draws=draws, level=level, seed=seed
    )
    return Comparison(
        reference=names[0],
        candidate=names[1],
        paired=paired,
        interval=span,
        reference_summary=left,
        candidate_summary=right,
        unpaired=unpaired,
    )


def compare(
    reference: Sequence[object],
    candidate: Sequence[object],
    *,
    paired: bool = False,
    keys: Keys | None = None,
    higher_is_better: bool = True,
    names: tuple[str, str] = ("reference", "candidate"),
    draws: int = DEFAULT_DRAWS,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Comparison:
    """A candidate cell against the reference: established when the interval keeps 0 out.

    The direction (improvement or regression) is given for an established gap only.
    """
    gap = measure_gap(
        reference,
        candidate,
        paired=paired,
        keys=keys,
        names=names,
        draws=draws,
        level=level,
        seed=seed,
    )
    if not gap.interval.excludes_zero():
        return gap.model_copy(update={"state": GapState.INCONCLUSIVE})
    higher = gap.interval.low > 0
    direction = Direction.IMPROVEMENT if higher == higher_is_better else Direction.REGRESSION
    return gap.model_copy(update={"state": GapState.ESTABLISHED, "direction": direction})


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _withheld(
    comparison: Comparison,
    *,
    expected_trials: int,
    recorded_trials: int,
    invalid_trials: Mapping[str, int] | None = None,
) -> list[str]:
    """Why a comparison may not be published: an incomplete matrix, or a compared cell
    holding invalid trials (cells not in this comparison do not withhold it)."""
    if not 0 <= recorded_trials <= expected_trials:
        raise ValueError(
            f"recorded_trials must lie between 0 and expected_trials ({expected_trials}), got "
            f"{recorded_trials}; count the trials of the whole matrix, cells × scenarios × trials"
        )
    reasons = []
    if recorded_trials < expected_trials:
        missing = expected_trials - recorded_trials
        total = _plural(expected_trials, "trial")
        reasons.append(f"matrix incomplete: {missing} of {total} missing")
    for cell in dict.fromkeys((comparison.reference, comparison.candidate)):
        count = (invalid_trials or {}).get(cell, 0)
        if count < 0:
            raise ValueError(f"invalid_trials[{cell!r}] must be 0 or more, got {count}")
        if count:
            reasons.append(f"cell {cell!r} holds {_plural(count, 'invalid trial')}")
    return reasons


def publishable(
    comparison: Comparison,
    *,
    expected_trials: int,
    recorded_trials: int,
    invalid_trials: Mapping[str, int] | None = None,
) -> Comparison:
    """The comparison as it may be published: unchanged, or with no state and the reason why.

    The interval is kept (it is still a measurement); only the verdict is withdrawn.
    """
    reasons = _withheld(
        comparison,
        expected_trials=expected_trials,
        recorded_trials=recorded_trials,
        invalid_trials=invalid_trials,
    )
    if not reasons:
        return comparison
    update = {"state": None, "direction": None, "withheld": "; ".join(reasons)}
    return comparison.model_copy(update=update)
