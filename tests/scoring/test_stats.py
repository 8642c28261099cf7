"""Honest statistics: summaries, bootstrap intervals, comparisons of cells, publishability."""

from __future__ import annotations

import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sounding.scoring as scoring
from sounding.scoring import (
    Comparison,
    Direction,
    GapState,
    Statistic,
    compare,
    interval,
    measure_gap,
    publishable,
    summarize,
)

LOW = [True] * 10 + [False] * 40  # a rate of 0.2 over 50 trials
HIGH = [True] * 40 + [False] * 10  # a rate of 0.8 over 50 trials


def _shuffled(values: list[bool], seed: int) -> list[bool]:
    copy = list(values)
    random.Random(seed).shuffle(copy)
    return copy


def test_the_public_names_are_exported() -> None:
    names = {"Comparison", "Direction", "GapState", "Interval", "Statistic", "Summary"}
    names |= {"compare", "interval", "measure_gap", "publishable", "summarize"}
    assert names <= set(scoring.__all__)


# summarize -------------------------------------------------------------------------------


def test_bools_give_a_rate_and_unjudged_values_leave_the_denominator() -> None:
    summary = summarize([True, None, False, True, None])
    assert summary.statistic is Statistic.RATE
    assert (summary.successes, summary.judged, summary.unjudged) == (2, 3, 2)
    assert summary.estimate == pytest.approx(2 / 3)
    assert summary.describe() == "2/3 = 0.67 (2 unjudged)"


def test_numbers_give_a_median() -> None:
    assert summarize([3, 1, 2]).estimate == 2.0
    even = summarize([4.0, 1, None, 2, 3])
    assert even.statistic is Statistic.MEDIAN
    assert (even.estimate, even.judged, even.unjudged) == (2.5, 4, 1)
    assert even.describe() == "median 2.5 over 4 (1 unjudged)"


def test_other_values_are_diagnostic_only() -> None:
    summary = summarize([["#1"], ["#2"], None])
    assert summary.statistic is Statistic.DIAGNOSTIC
    assert summary.estimate is None
    assert summary.describe() == "diagnostic only"


def test_a_metric_that_changes_type_is_diagnostic_and_says_so() -> None:
    summary = summarize([True, 3])
    assert summary.statistic is Statistic.DIAGNOSTIC
    assert "mix yes/no and numbers" in summary.note


def test_a_number_that_is_not_finite_gives_no_median() -> None:
    summary = summarize([1.0, float("nan")])
    assert summary.statistic is Statistic.DIAGNOSTIC
    assert "nan" in summary.note


def test_nothing_judged_is_empty() -> None:
    summary = summarize([None, None])
    assert summary.statistic is Statistic.EMPTY
    assert (summary.judged, summary.unjudged, summary.estimate) == (0, 2, None)


# interval --------------------------------------------------------------------------------


def test_defaults_are_ten_thousand_draws_at_95_percent_with_the_documented_seed() -> None:
    span = interval(LOW)
    assert (span.draws, span.level, span.seed) == (10_000, 0.95, 20260729)
    assert span.statistic is Statistic.RATE
    assert span.estimate == pytest.approx(0.2)


def test_bounds_are_the_documented_ranks_of_the_sorted_draws() -> None:
    """Anyone can redraw it: sort, Random(seed), resample, ranks int(0.025·N), int(0.975·N)."""
    rng = random.Random(7)
    ordered = sorted(LOW)
    draws = sorted(statistics.fmean(rng.choices(ordered, k=len(LOW))) for _ in range(10_000))
    span = interval(LOW, seed=7)
    assert (span.low, span.high) == (draws[250], draws[9750])


def test_the_interval_is_of_the_values_not_of_the_order_the_trials_finished_in() -> None:
    rng = random.Random(3)
    values = [rng.gauss(10, 3) for _ in range(30)]
    shuffled = rng.sample(values, k=len(values))
    assert interval(values) == interval(shuffled) == interval(sorted(values))
    assert interval(LOW) == interval(LOW[::-1])


def test_values_all_alike_give_their_value_as_both_bounds() -> None:
    """What the bootstrap gives (every resample is the sample), without drawing."""
    for values, value in (([True] * 9, 1.0), ([False] * 4, 0.0), ([2.5] * 6, 2.5)):
        span = interval(values, seed=5)
        assert (span.estimate, span.low, span.high, span.seed) == (value, value, value, 5)
        assert span.draws == 10_000


def test_the_same_seed_gives_the_same_interval_and_the_seed_is_recorded() -> None:
    rng = random.Random(1)
    values = [rng.gauss(10, 3) for _ in range(40)]
    first, again = interval(values, seed=42), interval(values, seed=42)
    assert first == again
    assert first.seed == 42
    spans = {
        (span.low, span.high) for span in (interval(values, seed=s, draws=9) for s in range(10))
    }
    assert len(spans) > 1  # the seed does drive the draws


def test_medians_are_resampled_for_numbers() -> None:
    values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 100]
    span = interval(values)
    assert span.statistic is Statistic.MEDIAN
    assert span.estimate == 5.5
    assert 1 <= span.low <= 5.5 <= span.high < 100  # the outlier does not drag the median


def test_unjudged_values_do_not_change_the_interval() -> None:
    assert interval([*LOW, None, None]) == interval(LOW)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([], "it is empty"),
        ([None, None], "all 2 values are unjudged"),
        ([{"a": 1}], "cannot be resampled"),
        ([True, 2.0], "mix yes/no and numbers"),
    ],
)
def test_a_sample_without_a_statistic_is_refused_with_the_reason(
    values: list[object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        interval(values)


@pytest.mark.parametrize(
    ("settings_", "message"),
    [({"draws": 0}, "draws must be"), ({"level": 1.0}, "level must lie"), ({"level": 0}, "level")],
)
def test_bad_settings_are_refused(settings_: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        interval(LOW, **settings_)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.integers(0, 2**32))
def test_a_rate_lies_inside_its_interval(values: list[bool], seed: int) -> None:
    span = interval(values, draws=500, seed=seed)
    assert 0.0 <= span.low <= span.estimate <= span.high <= 1.0


numbers = st.one_of(
    st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
)


@settings(max_examples=60, deadline=None)
@given(st.lists(numbers, min_size=1, max_size=40), st.integers(0, 2**32))
def test_a_median_interval_stays_within_the_data(values: list[float], seed: int) -> None:
    span = interval(values, draws=300, seed=seed)
    assert min(values) <= span.low <= span.high <= max(values)
    assert min(values) <= span.estimate <= max(values)


# compare ---------------------------------------------------------------------------------


def test_a_planted_improvement_is_established() -> None:
    result = compare(_shuffled(LOW, 1), _shuffled(HIGH, 2), names=("a", "b"))
    assert result.state is GapState.ESTABLISHED
    assert result.direction is Direction.IMPROVEMENT
    assert result.established
    assert result.interval.estimate == pytest.approx(0.6)
    assert 0 < result.interval.low < 0.6 < result.interval.high
    assert (result.reference, result.candidate) == ("a", "b")
    assert result.describe().endswith("established improvement")


def test_two_sides_each_all_alike_differ_by_their_values_without_drawing() -> None:
    """Every resample of each side is that side itself, paired or not."""
    for paired in (False, True):
        result = compare([True] * 6, [False] * 6, paired=paired, seed=9)
        span = result.interval
        assert (span.estimate, span.low, span.high, span.seed) == (-1.0, -1.0, -1.0, 9)
        assert result.direction is Direction.REGRESSION and result.established
    assert compare([2.0] * 3, [2.0] * 5).state is GapState.INCONCLUSIVE


def test_a_planted_drop_is_a_regression() -> None:
    result = compare(HIGH, LOW)
    assert result.state is GapState.ESTABLISHED
    assert result.direction is Direction.REGRESSION
    assert result.interval.high < 0


def test_a_rise_where_lower_is_better_is_a_regression() -> None:
    result = compare(LOW, HIGH, higher_is_better=False)
    assert result.direction is Direction.REGRESSION


def test_identical_cells_are_inconclusive_under_nearly_every_seed() -> None:
    cell = [True] * 10 + [False] * 10
    outcomes = [
        compare(_shuffled(cell, s), _shuffled(cell, s + 1000), draws=2_000, seed=s).state
        for s in range(200)
    ]
    assert outcomes.count(GapState.INCONCLUSIVE) >= 190
    assert compare(cell, cell).direction is None


def test_samples_of_one_distribution_are_rarely_called_different() -> None:
    """Calibration: two cells drawn from the same 50 % rate; about 5 % may pass by chance."""
    established = 0
    for s in range(100):
        rng = random.Random(s)
        left = [rng.random() < 0.5 for _ in range(30)]
        right = [rng.random() < 0.5 for _ in range(30)]
        established += compare(left, right, draws=1_000, seed=s).established
    assert 1 <= established <= 12


def test_an_unpaired_draw_resamples_the_reference_then_the_candidate() -> None:
    rng = random.Random(3)
    gaps = []
    for _ in range(2_000):
        ref = statistics.fmean(rng.choices(LOW, k=50))
        gaps.append(statistics.fmean(rng.choices(HIGH, k=50)) - ref)
    gaps.sort()
    result = compare(LOW, HIGH, draws=2_000, seed=3)
    assert (result.interval.low, result.interval.high) == (gaps[50], gaps[1950])


def test_pairing_by_scenario_narrows_the_interval_when_scenarios_differ_a_lot() -> None:
    # 30 easy scenarios both cells pass, 20 hard ones both fail, 10 only the candidate passes.
    reference = [True] * 30 + [False] * 20 + [False] * 10
    candidate = [True] * 30 + [False] * 20 + [True] * 10
    unpaired = compare(reference, candidate)
    paired = compare(reference, candidate, paired=True)
    assert paired.paired and not unpaired.paired
    assert paired.interval.estimate == pytest.approx(unpaired.interval.estimate)
    paired_width = paired.interval.high - paired.interval.low
    unpaired_width = unpaired.interval.high - unpaired.interval.low
    assert paired_width < 0.7 * unpaired_width
    assert paired.established


def test_pairing_on_numbers_follows_the_scenario_too() -> None:
    rng = random.Random(5)
    base = [rng.uniform(0, 100) for _ in range(40)]
    reference = [b + rng.gauss(0, 1) for b in base]
    candidate = [b + 2 + rng.gauss(0, 1) for b in base]
    unpaired = compare(reference, candidate, draws=2_000)
    paired = compare(reference, candidate, paired=True, draws=2_000)
    assert unpaired.state is GapState.INCONCLUSIVE
    assert (
        paired.interval.high - paired.interval.low < unpaired.interval.high - unpaired.interval.low
    )


def test_keys_group_trials_of_one_scenario_whatever_their_order() -> None:
    scenarios = [f"s{i}" for i in range(12) for _ in range(3)]
    rng = random.Random(9)
    reference = [rng.random() < 0.4 for _ in scenarios]
    candidate = [rng.random() < 0.7 for _ in scenarios]
    result = compare(reference, candidate, paired=True, keys=(scenarios, scenarios))
    order = list(range(len(scenarios)))
    random.Random(1).shuffle(order)
    moved = compare(
        reference,
        [candidate[i] for i in order],
        paired=True,
        keys=(scenarios, [scenarios[i] for i in order]),
    )
    assert moved == result


def test_a_key_judged_on_one_side_only_is_left_out_of_the_pairing() -> None:
    result = compare([True, False, True], [None, True, True], paired=True)
    assert result.unpaired == 1
    assert result.interval.estimate == pytest.approx(0.5)
    assert result.candidate_summary.unjudged == 1


def test_unjudged_values_do_not_change_an_unpaired_comparison() -> None:
    assert compare([*LOW, None], [None, *HIGH]).interval == compare(LOW, HIGH).interval


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"reference": [], "candidate": HIGH}, "'a' side holds no judged value"),
        ({"reference": LOW, "candidate": [None]}, "'b' side holds no judged value"),
        ({"reference": LOW, "candidate": [1.0, 2.0]}, "gives a rate and 'b' a median"),
        ({"reference": LOW, "candidate": HIGH, "keys": (["x"], ["x"])}, "need paired=True"),
        ({"reference": LOW, "candidate": HIGH[:5], "paired": True}, "as many values"),
        (
            {"reference": [True], "candidate": [False], "paired": True, "keys": (["x"], ["y"])},
            "'x' only in 'a'; 'y' only in 'b'",
        ),
        (
            {
                "reference": [True, True],
                "candidate": [True],
                "paired": True,
                "keys": (["x"], ["x"]),
            },
            "2 values but 1 keys",
        ),
    ],
)
def test_a_comparison_that_cannot_be_drawn_is_refused(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        compare(names=("a", "b"), draws=100, **kwargs)  # type: ignore[arg-type]


def test_cost_and_latency_get_an_interval_but_no_verdict() -> None:
    gap = measure_gap([0.10, 0.12, 0.11, 0.13] * 10, [0.20, 0.22, 0.21, 0.25] * 10)
    assert gap.state is None and gap.direction is None
    assert gap.interval.low > 0  # it would be established, and still is not called so
    assert gap.describe().endswith("no verdict")


# publishable -----------------------------------------------------------------------------


def _established() -> Comparison:
    return compare(LOW, HIGH, names=("a", "b"), draws=500)


def test_a_complete_valid_comparison_is_published_unchanged() -> None:
    result = _established()
    shown = publishable(result, expected_trials=12, recorded_trials=12, invalid_trials={"c": 4})
    assert shown == result


def test_an_incomplete_matrix_withdraws_the_verdict_and_says_why() -> None:
    result = publishable(_established(), expected_trials=12, recorded_trials=9)
    assert result.withheld == "matrix incomplete: 3 of 12 trials missing"
    assert result.state is None and result.direction is None
    assert result.interval == _established().interval
    assert result.describe().endswith("not publishable: matrix incomplete: 3 of 12 trials missing")


def test_a_compared_cell_holding_invalid_trials_withdraws_the_verdict() -> None:
    result = publishable(
        _established(), expected_trials=12, recorded_trials=11, invalid_trials={"b": 2, "a": 1}
    )
    assert result.withheld == (
        "matrix incomplete: 1 of 12 trials missing; "
        "cell 'a' holds 1 invalid trial; cell 'b' holds 2 invalid trials"
    )


@pytest.mark.parametrize(
    ("expected", "recorded", "invalid", "message"),
    [(12, 13, {}, "recorded_trials must lie"), (12, 12, {"a": -1}, "must be 0 or more")],
)
def test_impossible_counts_are_refused(
    expected: int, recorded: int, invalid: dict[str, int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        publishable(
            _established(),
            expected_trials=expected,
            recorded_trials=recorded,
            invalid_trials=invalid,
        )
