"""Comparing two cells: the bootstrap of the gap, paired or not, and when it may be published.

A gap is established only when its interval keeps zero out; otherwise it is inconclusive.
Nothing is published while the matrix is incomplete or a compared cell holds an invalid trial.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from itertools import chain

from sounding._words import counted
from sounding.scoring._stats import (
    DEFAULT_DRAWS,
    DEFAULT_LEVEL,
    DEFAULT_SEED,
    STATISTICS,
    Comparison,
    Direction,
    Draw,
    GapState,
    Reduce,
    Statistic,
    Summary,
    bootstrap,
    check_settings,
    data_of,
    summarize,
    unmoved,
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
    if keys is None and len(reference) != len(candidate):
        raise ValueError(
            f"a paired comparison by position needs as many values on both sides, but "
            f"{names[0]!r} has {len(reference)} and {names[1]!r} has {len(candidate)}; pass "
            "keys=(reference_keys, candidate_keys) to pair them by scenario, or paired=False"
        )
    ref_keys, cand_keys = keys or (range(len(reference)), range(len(candidate)))
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
        ref = statistic([value for key in picked for value in reference[key]])
        return statistic([value for key in picked for value in candidate[key]]) - ref

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
    check_settings(draws, level)
    if keys is not None and not paired:
        raise ValueError("keys pair the two sides, so they need paired=True; or drop them")
    left, right = summarize(reference), summarize(candidate)
    _same_type(left, right, names)
    ref_data = data_of(left, reference, f"the {names[0]!r} side")
    cand_data = data_of(right, candidate, f"the {names[1]!r} side")
    statistic = STATISTICS[left.statistic]
    unpaired, draw = 0, _unpaired(ref_data, cand_data, statistic)
    if paired:
        ref_groups, cand_groups, unpaired = _paired_groups(reference, candidate, keys, names)
        ref_data = list(chain.from_iterable(ref_groups))
        cand_data = list(chain.from_iterable(cand_groups))
        draw = _paired(ref_groups, cand_groups, statistic)
    estimate = statistic(cand_data) - statistic(ref_data)
    if len(set(ref_data)) == 1 and len(set(cand_data)) == 1:
        span = unmoved(left.statistic, estimate, draws=draws, level=level, seed=seed)
    else:
        span = bootstrap(
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


def publishable(
    comparison: Comparison,
    *,
    expected_trials: int,
    recorded_trials: int,
    invalid_trials: Mapping[str, int] | None = None,
) -> Comparison:
    """The comparison as it may be published: unchanged, or with no state and the reason why.

    It may not be while the matrix is incomplete or a compared cell holds invalid trials
    (cells not in this comparison do not withhold it). The interval is kept (it is still a
    measurement); only the verdict is withdrawn.
    """
    if not 0 <= recorded_trials <= expected_trials:
        raise ValueError(
            f"recorded_trials must lie between 0 and expected_trials ({expected_trials}), got "
            f"{recorded_trials}; count the trials of the whole matrix, cells × scenarios × trials"
        )
    reasons = []
    if recorded_trials < expected_trials:
        total = counted(expected_trials, "trial")
        reasons.append(f"matrix incomplete: {expected_trials - recorded_trials} of {total} missing")
    for cell in dict.fromkeys((comparison.reference, comparison.candidate)):
        count = (invalid_trials or {}).get(cell, 0)
        if count < 0:
            raise ValueError(f"invalid_trials[{cell!r}] must be 0 or more, got {count}")
        if count:
            reasons.append(f"cell {cell!r} holds {counted(count, 'invalid trial')}")
    if not reasons:
        return comparison
    update = {"state": None, "direction": None, "withheld": "; ".join(reasons)}
    return comparison.model_copy(update=update)
