"""How far a judge agrees with people who judged the same trials.

Pass/fail verdicts are compared with Cohen's kappa: the share of trials on which both said
the same, corrected for the share two raters with the same leanings would agree on by
chance. Scores are compared with Spearman's rank correlation (do both order the trials
alike?) and the mean absolute error (how far apart are the numbers?). Each comes with a
seeded percentile bootstrap interval over the trials, drawn as pairs, so the same pairs give
the same interval.

A statistic that is undefined on the pairs (kappa when both sides gave one answer only,
Spearman when a side gave one value only) is None: there is no agreement to speak of yet.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Sequence

from sounding.scoring._stats import (
    DEFAULT_DRAWS,
    DEFAULT_LEVEL,
    DEFAULT_SEED,
    Interval,
    Statistic,
    bootstrap,
    check_settings,
)

Pair = tuple[float, float]  # (judge, person); yes/no as 1.0 / 0.0
Measure = Callable[[Sequence[Pair]], float | None]

_REDRAWS = 1000
"""Tries for a resample on which the statistic is defined before the estimate stands in."""


def observed_agreement(pairs: Sequence[Pair]) -> float:
    """The share of pairs on which both sides gave the same yes/no answer."""
    return sum(judge == person for judge, person in pairs) / len(pairs)


def cohen_kappa(pairs: Sequence[Pair]) -> float | None:
    """(observed − chance) / (1 − chance), for yes/no pairs; None when chance agreement is
    certain (both sides gave the same one answer to every trial)."""
    if not pairs:
        return None
    n = len(pairs)
    judge_yes = sum(judge for judge, _ in pairs) / n
    person_yes = sum(person for _, person in pairs) / n
    chance = judge_yes * person_yes + (1 - judge_yes) * (1 - person_yes)
    if chance >= 1.0:
        return None
    return (observed_agreement(pairs) - chance) / (1 - chance)


def average_ranks(values: Sequence[float]) -> list[float]:
    """The rank of each value (1 for the smallest); tied values share their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def spearman(pairs: Sequence[Pair]) -> float | None:
    """The Pearson correlation of the two sides' average ranks; None when a side gave one
    value only (nothing to order) or there are fewer than two pairs."""
    if len(pairs) < 2:
        return None
    judge = average_ranks([j for j, _ in pairs])
    person = average_ranks([p for _, p in pairs])
    return _pearson(judge, person)


def _pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    dx = [x - mean_x for x in xs]
    dy = [y - mean_y for y in ys]
    spread = math.sqrt(sum(d * d for d in dx) * sum(d * d for d in dy))
    if spread == 0:
        return None
    return max(-1.0, min(1.0, sum(a * b for a, b in zip(dx, dy, strict=True)) / spread))


def mean_absolute_error(pairs: Sequence[Pair]) -> float | None:
    """The mean of |judge − person|; None for no pairs."""
    if not pairs:
        return None
    return statistics.fmean(abs(judge - person) for judge, person in pairs)


MEASURES: dict[Statistic, Measure] = {
    Statistic.KAPPA: cohen_kappa,
    Statistic.SPEARMAN: spearman,
    Statistic.MAE: mean_absolute_error,
}
"""The agreement statistics, by the name their intervals carry."""


def agreement_interval(
    pairs: Sequence[Pair],
    statistic: Statistic,
    *,
    draws: int = DEFAULT_DRAWS,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Interval | None:
    """The statistic of the pairs with a percentile bootstrap interval, pairs resampled
    whole; None when the statistic is undefined on the pairs themselves.

    A resample on which it is undefined (every pair drawn alike) is drawn again: the
    interval is that of the resamples that have one.
    """
    check_settings(draws, level)
    measure = MEASURES[statistic]
    estimate = measure(pairs)
    if estimate is None:
        return None

    def draw(rng: random.Random) -> float:
        for _ in range(_REDRAWS):
            value = measure(rng.choices(pairs, k=len(pairs)))
            if value is not None:
                return value
        return estimate

    return bootstrap(
        draw, statistic=statistic, estimate=estimate, draws=draws, level=level, seed=seed
    )
