"""A judge against people: Cohen's kappa, Spearman's rank correlation, the mean absolute
error, and their seeded bootstrap intervals."""

from __future__ import annotations

import random

import pytest

from sounding.scoring import (
    Statistic,
    agreement_interval,
    average_ranks,
    cohen_kappa,
    mean_absolute_error,
    observed_agreement,
    spearman,
)

YES, NO = 1.0, 0.0


def table(
    both_yes: int, judge_only: int, person_only: int, both_no: int
) -> list[tuple[float, float]]:
    """A 2×2 table as (judge, person) pairs."""
    return (
        [(YES, YES)] * both_yes
        + [(YES, NO)] * judge_only
        + [(NO, YES)] * person_only
        + [(NO, NO)] * both_no
    )


# kappa -----------------------------------------------------------------------------------


def test_kappa_of_perfect_agreement_is_one() -> None:
    assert cohen_kappa(table(7, 0, 0, 5)) == 1.0


def test_kappa_of_agreement_no_better_than_chance_is_zero() -> None:
    assert cohen_kappa(table(25, 25, 25, 25)) == pytest.approx(0.0)
    rng = random.Random(3)
    independent = [(float(rng.random() < 0.6), float(rng.random() < 0.3)) for _ in range(4000)]
    assert abs(cohen_kappa(independent) or 1.0) < 0.05


def test_kappa_of_the_textbook_table_is_040() -> None:
    # 50 trials: both yes 20, judge yes / person no 5, judge no / person yes 10, both no 15.
    # observed 35/50 = 0.70; chance 0.5·0.6 + 0.5·0.4 = 0.50; kappa (0.70 − 0.50)/0.50.
    pairs = table(20, 5, 10, 15)
    assert observed_agreement(pairs) == pytest.approx(0.70)
    assert cohen_kappa(pairs) == pytest.approx(0.40)


def test_kappa_of_systematic_disagreement_is_negative() -> None:
    assert cohen_kappa(table(0, 5, 5, 0)) == pytest.approx(-1.0)


def test_kappa_is_undefined_when_both_sides_said_one_answer() -> None:
    assert cohen_kappa(table(10, 0, 0, 0)) is None
    assert cohen_kappa([]) is None


# Spearman --------------------------------------------------------------------------------


def test_spearman_of_a_monotone_relation_is_one_however_curved() -> None:
    pairs = [(x / 10, (x / 10) ** 3) for x in range(11)]
    assert spearman(pairs) == pytest.approx(1.0)


def test_spearman_of_a_reversed_order_is_minus_one() -> None:
    assert spearman([(0.1, 0.9), (0.5, 0.4), (0.7, 0.2), (1.0, 0.0)]) == pytest.approx(-1.0)


def test_ties_share_their_average_rank() -> None:
    assert average_ranks([10, 20, 20, 30]) == [1.0, 2.5, 2.5, 4.0]
    assert average_ranks([0.5, 0.5, 0.5]) == [2.0, 2.0, 2.0]
    assert average_ranks([3, 1, 2]) == [3.0, 1.0, 2.0]


def test_spearman_with_ties_is_the_correlation_of_average_ranks() -> None:
    # judge ranks 1, 2.5, 2.5, 4 against 1, 2, 3, 4: 4.5 / sqrt(4.5 · 5) = 3 / sqrt(10)
    pairs = [(1.0, 1.0), (2.0, 2.0), (2.0, 3.0), (3.0, 4.0)]
    assert spearman(pairs) == pytest.approx(3 / 10**0.5)


def test_spearman_is_undefined_when_a_side_gave_one_value() -> None:
    assert spearman([(0.5, 0.1), (0.5, 0.9), (0.5, 0.4)]) is None
    assert spearman([(0.5, 0.1)]) is None


# mean absolute error ----------------------------------------------------------------------


def test_mean_absolute_error_is_the_mean_distance() -> None:
    assert mean_absolute_error([(0.2, 0.5), (1.0, 0.5), (0.3, 0.3)]) == pytest.approx(0.8 / 3)
    assert mean_absolute_error([(0.4, 0.4)]) == 0.0
    assert mean_absolute_error([]) is None


# intervals -------------------------------------------------------------------------------


def test_an_interval_is_seeded_and_holds_its_estimate() -> None:
    pairs = table(20, 5, 10, 15)
    first = agreement_interval(pairs, Statistic.KAPPA, draws=2000)
    again = agreement_interval(pairs, Statistic.KAPPA, draws=2000)
    assert first is not None and first == again
    assert first.statistic is Statistic.KAPPA
    assert first.estimate == pytest.approx(0.40)
    assert first.low < 0.40 < first.high
    other = agreement_interval(pairs, Statistic.KAPPA, draws=2000, seed=7)
    assert other is not None and (other.low, other.high) != (first.low, first.high)


def test_perfect_agreement_resamples_to_one() -> None:
    found = agreement_interval(table(6, 0, 0, 6), Statistic.KAPPA, draws=500)
    assert found is not None and (found.low, found.estimate, found.high) == (1.0, 1.0, 1.0)


def test_score_intervals_of_spearman_and_the_error() -> None:
    pairs = [(x / 20, 0.05 + 0.9 * x / 20) for x in range(21)]
    rho = agreement_interval(pairs, Statistic.SPEARMAN, draws=500)
    error = agreement_interval(pairs, Statistic.MAE, draws=500)
    assert rho is not None and rho.estimate == pytest.approx(1.0) and rho.low > 0.9
    assert error is not None and error.low <= error.estimate <= error.high
    assert error.estimate == pytest.approx(sum(abs(j - p) for j, p in pairs) / len(pairs))


def test_no_interval_when_the_statistic_is_undefined() -> None:
    assert agreement_interval(table(4, 0, 0, 0), Statistic.KAPPA) is None
    assert agreement_interval([], Statistic.MAE) is None
