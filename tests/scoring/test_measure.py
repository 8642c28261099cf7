"""Measuring a trial: a check registered as costly runs last, and only when it can matter."""

from __future__ import annotations

from pathlib import Path

from sounding.checks import CheckContext, CheckResult, Evidence, NoParams, Registry, Status
from sounding.record import RunRecord
from sounding.scoring import measure_trial
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
