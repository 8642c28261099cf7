"""The composite, gates, forbidden rules and expect assertions, with the seed's worked numbers."""

from __future__ import annotations

import pytest

from sounding.checks import CheckResult
from sounding.scoring import Kind, Measured, TrialVerdict, composite, score_trial


def inv(name: str, result: CheckResult, weight: float = 1.0, gate: bool = False) -> Measured:
    return Measured(
        name=name, kind=Kind.INVARIANT, type="t", result=result, weight=weight, gate=gate
    )


def item(kind: Kind, result: CheckResult) -> Measured:
    return Measured(name=f"{kind.value} x", kind=kind, type="t", result=result)


PASS, FAIL = CheckResult.passed(), CheckResult.failed("nope")


def test_passing_gate_and_failing_nice_to_have_is_077_which_fails_085() -> None:
    items = [inv("must", PASS, 1.0, gate=True), inv("nice", FAIL, 0.3)]
    assert composite(items) == pytest.approx(1.0 / 1.3)
    assert round(composite(items) or 0, 2) == 0.77
    score = score_trial(items, 0.85)
    assert score.verdict is TrialVerdict.FAIL
    assert "under the pass threshold" in score.reason


def test_three_weights_with_the_03_failing_is_080() -> None:
    items = [inv("tests", PASS, 1.0, gate=True), inv("log", FAIL, 0.3), inv("diff", PASS, 0.2)]
    assert composite(items) == pytest.approx(1.2 / 1.5)
    assert score_trial(items, 0.85).verdict is TrialVerdict.FAIL
    assert score_trial(items, 0.80).verdict is TrialVerdict.PASS


def test_a_failed_gate_forces_zero() -> None:
    items = [inv("must", FAIL, 1.0, gate=True), inv("nice", PASS, 5.0)]
    assert composite(items) == 0.0
    score = score_trial(items, 0.1)
    assert score.verdict is TrialVerdict.FAIL
    assert score.reason.startswith("invariant must")


def test_a_gate_is_judged_by_its_own_passed_not_by_score_under_one() -> None:
    judge = CheckResult.passed("good enough", score=0.9)
    items = [inv("tone", judge, 1.0, gate=True)]
    assert composite(items) == pytest.approx(0.9)
    assert score_trial(items, 0.85).verdict is TrialVerdict.PASS


def test_a_violated_forbidden_rule_forces_zero() -> None:
    items = [inv("ok", PASS), item(Kind.FORBIDDEN, CheckResult.failed("called a forbidden tool"))]
    assert composite(items) == 0.0
    assert score_trial(items, 0.0).verdict is TrialVerdict.FAIL


def test_any_failed_expect_fails_the_trial_without_partial_credit() -> None:
    items = [inv("ok", PASS), item(Kind.EXPECT, FAIL)]
    assert composite(items) == 1.0
    assert score_trial(items, 0.5).verdict is TrialVerdict.FAIL


def test_an_errored_check_makes_the_trial_error_not_fail() -> None:
    items = [inv("ok", PASS), inv("boom", CheckResult.error("script exited 2"))]
    score = score_trial(items, 0.5)
    assert score.verdict is TrialVerdict.ERROR
    assert "boom" in score.reason and "script exited 2" in score.reason
    assert score.composite is None  # not 1.0 from the one check left to average


def test_an_errored_trial_has_no_composite_whatever_left_it_open() -> None:
    open_gate = inv("db", CheckResult.unjudged("database dropped"), gate=True)
    errored = score_trial([inv("ok", PASS), open_gate], 0.5)
    assert (errored.verdict, errored.composite) == (TrialVerdict.ERROR, None)
    failed = score_trial([item(Kind.EXPECT, FAIL), inv("boom", CheckResult.error("x"))], 0.5)
    assert (failed.verdict, failed.composite) == (TrialVerdict.ERROR, None)
    assert score_trial([inv("ok", PASS), item(Kind.EXPECT, FAIL)], 0.5).composite == 1.0


def test_an_unjudged_invariant_leaves_the_denominator() -> None:
    items = [inv("ok", PASS, 1.0), inv("db", CheckResult.unjudged("database dropped"), 3.0)]
    assert composite(items) == 1.0
    assert score_trial(items, 0.9).verdict is TrialVerdict.PASS


def test_an_unjudged_gate_leaves_the_verdict_open_unless_already_failed() -> None:
    open_gate = inv("db", CheckResult.unjudged("database dropped"), gate=True)
    assert score_trial([inv("ok", PASS), open_gate], 0.5).verdict is TrialVerdict.ERROR
    assert score_trial([item(Kind.EXPECT, FAIL), open_gate], 0.5).verdict is TrialVerdict.FAIL


def test_leads_never_change_the_verdict() -> None:
    lead = item(Kind.LEAD, CheckResult.failed("says 'guarantee'"))
    score = score_trial([inv("ok", PASS), lead], 1.0)
    assert score.verdict is TrialVerdict.PASS
    assert score.leads == [lead]


def test_no_invariants_means_the_expectations_decide() -> None:
    assert score_trial([item(Kind.EXPECT, PASS)], 1.0).verdict is TrialVerdict.PASS


def test_an_unvalidated_judge_neither_gates_nor_weighs() -> None:
    judge = inv("tone", CheckResult.failed("judge scored 0.1"), 1.0, gate=True)
    unvalidated = judge.model_copy(update={"unvalidated": "kappa 0.20 < min_agreement 0.60"})
    assert score_trial([judge, inv("file", PASS)], 1.0).verdict is TrialVerdict.FAIL
    score = score_trial([unvalidated, inv("file", PASS, 0.5)], 1.0)
    assert score.verdict is TrialVerdict.PASS and score.composite == 1.0
    assert score.unvalidated == [unvalidated]
    errored = unvalidated.model_copy(update={"result": CheckResult.error("no verdict")})
    assert score_trial([errored, inv("file", PASS)], 1.0).verdict is TrialVerdict.PASS
