"""The deterministic families compose: one scenario, measured by `measure_trial`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sounding.checks import Evidence, Role, Status, registry
from sounding.record import RunRecord, ToolCall
from sounding.scoring import TrialVerdict, measure_trial
from sounding.spec import Assertion, CheckSpec, Invariant, Scenario, Scoring


def spec(name: str, raw: Any, role: Role = Role.CHECK) -> CheckSpec:
    check_type = registry.get(name, role)
    return CheckSpec(type=name, params=check_type.parse(raw), role=role, check_type=check_type)


def scenario(*, command: str = "test -s report.md", check_timeout: float = 5) -> Scenario:
    return Scenario(
        id="refund-once",
        user=["Order A-1 arrived broken; refund it and write report.md."],
        check_timeout=check_timeout,
        invariants=[
            Invariant(
                name="report_written",
                description="the report exists and is not empty",
                gate=True,
                check=spec("command_exit", command),
            ),
            Invariant(
                name="no_todo",
                description="no TODO left in the report",
                weight=0.3,
                check=spec("file_content", {"path": "report.md", "not_contains": "TODO"}),
            ),
        ],
        expect=[
            Assertion(name="expect[0] first_tool", check=spec("first_tool", ["get_order"])),
            Assertion(name="expect[1] tool_called", check=spec("tool_called", "issue_refund")),
            Assertion(name="expect[2] no_error", check=spec("no_error", True)),
        ],
        forbidden=[
            Assertion(
                name="forbidden tools_forbidden",
                check=spec("tools_forbidden", ["offer_replacement"], Role.FORBIDDEN),
            ),
            Assertion(
                name="forbidden file_writes_outside",
                check=spec("file_writes_outside", ["report.md"], Role.FORBIDDEN),
            ),
        ],
        scoring=Scoring(pass_threshold=0.85),
    )


def record(*tools: str) -> RunRecord:
    calls = [ToolCall(id=str(i), name=name) for i, name in enumerate(tools)]
    return RunRecord(tool_calls=calls, final_answer="Refunded order A-1.")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "report.md").write_text("Refunded A-1 in full.\n")
    return tmp_path


def evidence(workspace: Path, run: RunRecord, touched: set[str] | None = None) -> Evidence:
    written = frozenset({"report.md"} if touched is None else touched)
    return Evidence(record=run, workspace=workspace, touched=written)


def test_a_good_run_passes_with_a_full_composite(workspace: Path) -> None:
    score = measure_trial(scenario(), evidence(workspace, record("get_order", "issue_refund")))
    assert score.verdict is TrialVerdict.PASS, score.reason
    assert score.composite == 1.0
    assert {m.result.status for m in score.checks} == {Status.PASSED}


def test_a_failing_gate_forces_the_composite_to_0(workspace: Path) -> None:
    (workspace / "report.md").write_text("")
    score = measure_trial(scenario(), evidence(workspace, record("get_order", "issue_refund")))
    assert score.verdict is TrialVerdict.FAIL
    assert score.composite == 0.0
    assert "report_written" in score.reason
    assert "exited with 1, expected 0" in score.reason


def test_a_failing_nice_to_have_alone_falls_under_the_threshold(workspace: Path) -> None:
    (workspace / "report.md").write_text("Refunded. TODO: add the tracking number\n")
    score = measure_trial(scenario(), evidence(workspace, record("get_order", "issue_refund")))
    assert score.verdict is TrialVerdict.FAIL
    assert score.composite == pytest.approx(1.0 / 1.3)
    assert "contains 'TODO'" in score.reason


def test_a_failing_expectation_fails_the_trial_without_touching_the_composite(
    workspace: Path,
) -> None:
    score = measure_trial(scenario(), evidence(workspace, record("issue_refund", "get_order")))
    assert score.verdict is TrialVerdict.FAIL
    assert score.composite == 1.0
    assert "the first tool called was 'issue_refund'" in score.reason


def test_a_violated_forbidden_rule_forces_the_composite_to_0(workspace: Path) -> None:
    run = evidence(workspace, record("get_order", "issue_refund"), {"report.md", "notes.txt"})
    score = measure_trial(scenario(), run)
    assert score.verdict is TrialVerdict.FAIL
    assert score.composite == 0.0
    assert "1 file written outside report.md: notes.txt" in score.reason


def test_a_check_that_times_out_makes_the_trial_an_error_not_a_fail(workspace: Path) -> None:
    score = measure_trial(
        scenario(command="sleep 30", check_timeout=0.3),
        evidence(workspace, record("get_order", "issue_refund")),
    )
    assert score.verdict is TrialVerdict.ERROR
    assert "timed out after 0.3s" in score.reason


def test_missing_evidence_leaves_blocking_rules_unjudged_and_the_trial_open(
    workspace: Path,
) -> None:
    run = Evidence(record=record("get_order", "issue_refund"), workspace=workspace, touched=None)
    score = measure_trial(scenario(), run)
    assert score.verdict is TrialVerdict.ERROR
    assert "files touched was not kept" in score.reason
