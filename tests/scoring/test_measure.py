"""Measuring a trial: a check registered as costly runs last, and only when it can matter."""

from __future__ import annotations

from pathlib import Path

from sounding.checks import CheckContext, CheckResult, Evidence, NoParams, Registry, Status
from sounding.record import RunRecord
from sounding.scoring import TrialScore, TrialVerdict, measure_trial
from sounding.spec import load_case

CASE = """\
scenarios:
  - id: s
    user: hi
    invariants:
      slow: {description: costly, check: {type: slow}}
      named_judge: {description: cheap, check: {type: named_judge}}
      gate: {description: a gate, gate: true, check: {type: {gate}}}
"""


def _registry(ran: list[str]) -> Registry:
    own = Registry()

    def passes(params: NoParams, context: CheckContext) -> CheckResult:
        ran.append(context.name)
        return CheckResult.passed("ok")

    def fails(params: NoParams, context: CheckContext) -> CheckResult:
        ran.append(context.name)
        return CheckResult.failed("no")

    own.check("slow", NoParams, family="plain", costly=True)(passes)
    own.check("named_judge", NoParams, family="judge")(passes)
    own.check("passing_gate", NoParams, family="plain")(passes)
    own.check("failing_gate", NoParams, family="plain")(fails)
    return own


def _measured(tmp_path: Path, gate: str) -> tuple[list[str], list[tuple[str, Status]]]:
    ran: list[str] = []
    path = tmp_path / "c.yaml"
    path.write_text(CASE.replace("{gate}", gate))
    scenario = load_case(path, registry=_registry(ran)).scenarios[0]
    score = measure_trial(scenario, Evidence(record=RunRecord()))
    return ran, [(m.name, m.result.status) for m in score.checks]


def test_a_costly_check_runs_after_the_others_in_the_case_order(tmp_path: Path) -> None:
    ran, statuses = _measured(tmp_path, "passing_gate")
    assert ran == ["named_judge", "gate", "slow"]  # the family's name makes nothing costly
    assert statuses == [
        ("slow", Status.PASSED),
        ("named_judge", Status.PASSED),
        ("gate", Status.PASSED),
    ]


def test_a_costly_check_is_skipped_once_a_gate_has_failed(tmp_path: Path) -> None:
    ran, statuses = _measured(tmp_path, "failing_gate")
    assert ran == ["named_judge", "gate"]
    assert statuses[0] == ("slow", Status.SKIPPED)


JUDGED = """\
scenarios:
  - id: s
    user: hi
    invariants:
      tone: {gate: true, check: {type: judging}}
      cheap: {check: {type: {cheap}}}
"""


def _unvalidated(tmp_path: Path, cheap: str) -> tuple[list[str], TrialScore]:
    """The scenario with its judge check `tone` marked unvalidated, as a run marks it."""
    ran: list[str] = []
    own = _registry(ran)

    def judging(params: NoParams, context: CheckContext) -> CheckResult:
        ran.append(context.name)
        return CheckResult.failed("judge scored 0.20 (< 0.50): rude")

    own.check("judging", NoParams, family="judge", costly=True)(judging)
    path = tmp_path / "j.yaml"
    path.write_text(JUDGED.replace("{cheap}", cheap))
    scenario = load_case(path, registry=own).scenarios[0]
    why = "not measured against people"
    tone = scenario.invariants[0].model_copy(update={"unvalidated_judge": why})
    marked = scenario.model_copy(update={"invariants": [tone, *scenario.invariants[1:]]})
    return ran, measure_trial(marked, Evidence(record=RunRecord()))


def test_an_unvalidated_judge_is_measured_marked_and_left_out_of_the_verdict(
    tmp_path: Path,
) -> None:
    ran, score = _unvalidated(tmp_path, "passing_gate")
    assert ran == ["cheap", "tone"]  # still asked: its verdicts are what agreement is measured on
    assert score.verdict is TrialVerdict.PASS and score.reason == ""
    tone = score.checks[0]
    assert tone.result.status is Status.FAILED
    assert tone.unvalidated == "not measured against people"
    assert tone.result.details["unvalidated_judge"] == "not measured against people"
    assert tone.summary()["unvalidated"] == "not measured against people"
    assert score.unvalidated == [tone]
    assert tone.describe() == "unvalidated judge tone: judge scored 0.20 (< 0.50): rude"


def test_an_unvalidated_judge_is_skipped_when_the_trial_failed_without_it(tmp_path: Path) -> None:
    ran, score = _unvalidated(tmp_path, "failing_gate")
    assert ran == ["cheap"]
    assert score.verdict is TrialVerdict.FAIL and score.decided_by == "cheap"
    assert score.checks[0].result.status is Status.SKIPPED
