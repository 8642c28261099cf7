"""Records scored in bulk: counts as they come, intervals from the counts, the worst kept."""

from __future__ import annotations

import pytest

from sounding.checks import CheckResult, Status
from sounding.scoring import (
    BulkScore,
    Kind,
    Measured,
    ScenarioTally,
    TrialScore,
    TrialVerdict,
    interval,
    rate_interval,
)
from sounding.scoring._bulk import LISTED, WORST


@pytest.mark.parametrize(("passed", "total"), [(45, 50), (3, 40), (17, 17), (0, 9), (6, 11)])
def test_the_rate_interval_from_counts_matches_the_bootstrap_of_the_values(
    passed: int, total: int
) -> None:
    """A resample's successes are Binomial(n, rate): the same interval, to a draw's noise."""
    ours = rate_interval(passed, total)
    theirs = interval([True] * passed + [False] * (total - passed))
    assert ours.estimate == theirs.estimate
    assert ours.low == pytest.approx(theirs.low, abs=1.5 / total)
    assert ours.high == pytest.approx(theirs.high, abs=1.5 / total)


def test_the_rate_interval_of_a_million_is_narrow_and_cheap() -> None:
    found = rate_interval(900_000, 1_000_000)
    assert 0.899 < found.low < 0.9 < found.high < 0.901


@pytest.mark.parametrize(("passed", "total"), [(-1, 3), (4, 3), (0, 0)])
def test_impossible_counts_are_refused(passed: int, total: int) -> None:
    with pytest.raises(ValueError, match="a rate needs"):
        rate_interval(passed, total)


def score(verdict: TrialVerdict, composite: float | None, *failed: str) -> TrialScore:
    names = ["expect[0] a", "expect[1] b", "expect[2] c"]
    checks = [
        Measured(
            name=name,
            kind=Kind.EXPECT,
            type=name.split()[1],
            result=CheckResult(
                status=Status.FAILED if name in failed else Status.PASSED,
                score=0.0 if name in failed else 1.0,
                reason="no" if name in failed else "",
            ),
        )
        for name in names
    ]
    if verdict is TrialVerdict.ERROR:  # a check that crashed
        crashed = CheckResult(status=Status.ERROR, score=0.0, reason="boom")
        checks[0] = checks[0].model_copy(update={"result": crashed})
    reason = failed[0] if failed else ""
    return TrialScore(
        verdict=verdict, composite=composite, threshold=1.0, reason=reason, checks=checks
    )


def test_a_tally_counts_verdicts_and_checks_and_rates_leave_errors_out() -> None:
    tally = ScenarioTally("s")
    tally.add("r1", score(TrialVerdict.PASS, 1.0))
    tally.add("r2", score(TrialVerdict.FAIL, 1.0, "expect[1] b"))
    tally.add("r3", score(TrialVerdict.ERROR, None))
    assert tally.records == 3 and tally.judged == 2 and tally.rate() == 0.5
    b = tally.checks["expect[1] b"]
    assert (b.statuses[Status.PASSED], b.judged, b.rate()) == (2, 3, 2 / 3)


def test_the_worst_offenders_are_the_lowest_composites_then_most_failures_then_first_seen() -> None:
    tally = ScenarioTally("s")
    for i in range(30):
        tally.add(f"fail-{i}", score(TrialVerdict.FAIL, 0.5 + (i % 3) / 10, "expect[0] a"))
    tally.add("two-failed", score(TrialVerdict.FAIL, 0.5, "expect[0] a", "expect[2] c"))
    tally.add("errored", score(TrialVerdict.ERROR, None))
    worst = [o.source for o in tally.worst()]
    assert len(worst) == WORST
    assert worst[:3] == ["errored", "two-failed", "fail-0"]
    assert worst[3:] == [f"fail-{i}" for i in (3, 6, 9, 12, 15, 18, 21)]
    assert tally.worst()[1].failed == 2


def test_unmatched_and_malformed_records_are_all_counted_and_the_first_listed() -> None:
    bulk = BulkScore("case.yaml", "scenario", 0.9)
    for i in range(LISTED + 5):
        bulk.unmatch(f"r{i}", "scenario 'x'")
        bulk.malform(f"r{i}: not JSON")
    assert bulk.unmatched == bulk.malformed == LISTED + 5
    assert len(bulk.unmatched_listed) == len(bulk.malformed_listed) == LISTED


def test_the_gate_compares_each_scenario_s_point_estimate() -> None:
    bulk = BulkScore("case.yaml", "scenario", 0.75)
    for i in range(4):
        bulk.add("three-of-four", str(i), score(TrialVerdict.PASS if i else TrialVerdict.FAIL, 1.0))
        bulk.add(
            "two-of-four", str(i), score(TrialVerdict.PASS if i > 1 else TrialVerdict.FAIL, 1.0)
        )
    bulk.add("all-errored", "e", score(TrialVerdict.ERROR, None))
    assert [t.scenario for t in bulk.below()] == ["two-of-four"]
    assert [t.scenario for t in bulk.undecided()] == ["all-errored"]
