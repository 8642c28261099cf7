"""`grader`: a function of the suite's checks/ decides the trial, or the check is an error."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from sounding.checks import CheckContext, CheckResult, Evidence, Status, registry
from sounding.judge import Verdict, VerdictRequest
from sounding.record import RunRecord, ToolCall
from sounding.scoring import measure_trial
from sounding.spec import load_case


class FakeJudge:
    """An in-memory judge for `t.llm`: answers every prompt with the same text."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def verdict(self, request: VerdictRequest) -> Verdict:
        raise AssertionError("a grader's t.llm asks for text, not a verdict")

    def text(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answer


def _suite(tmp_path: Path, body: str) -> Path:
    (tmp_path / "checks").mkdir(exist_ok=True)
    (tmp_path / "checks" / "quality.py").write_text(textwrap.dedent(body), encoding="utf-8")
    return tmp_path


def _evidence() -> Evidence:
    record = RunRecord(
        user_turns=["Refund order 7", "Thanks"],
        final_answer="Refunded order 7: $40.",
        tool_calls=[ToolCall(id="c1", name="refund", args={"order": 7}, result="ok")],
        turns=2,
        duration_ms=900.0,
    )
    return Evidence(record=record, scenario_id="refund-once", cell="cell-secret")


def _check(
    raw: Any, suite: Path | None, *, judge: FakeJudge | None = None, **options: Any
) -> CheckResult:
    check = registry.get("grader")
    context = CheckContext(evidence=_evidence(), suite_dir=suite, judge=judge, **options)
    return check.run(check.parse(raw), context)


def _returns(tmp_path: Path, answer: str) -> Path:
    return _suite(tmp_path, f"def grade(t, case, run):\n    return {answer}\n")


def test_true_passes_and_false_fails(tmp_path: Path) -> None:
    passed = _check("quality.grade", _returns(tmp_path, "True"))
    assert passed.status is Status.PASSED and passed.score == 1.0
    failed = _check("quality.grade", _returns(tmp_path, "False"))
    assert failed.status is Status.FAILED and failed.score == 0.0
    assert failed.reason == "grader 'quality.grade' failed it"


def test_the_grader_sees_the_case_and_the_run(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path,
        """
        def grade(t, case, run):
            seen = [case["id"], case["user"], case["expect"], run["final_answer"],
                    [c["name"] for c in run["tool_calls"]], run["error"], run["turns"],
                    run["duration_ms"]]
            return {"pass": True, "why": repr(seen)}
        """,
    )
    result = _check("quality.grade", suite)
    expected = [
        "refund-once",
        ["Refund order 7", "Thanks"],
        [],
        "Refunded order 7: $40.",
        ["refund"],
        None,
        2,
        900.0,
    ]
    assert result.reason.endswith(repr(expected))


def test_the_grader_reads_the_cases_expect_entries(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path,
        'def grade(t, case, run):\n    return {"pass": True, "why": repr(case["expect"])}\n',
    )
    called = registry.get("tool_called").parse({"name": "refund"})
    result = _check("quality.grade", suite, expect=[("tool_called", called)])
    assert result.reason.endswith(repr([{"tool_called": called.model_dump(mode="json")}]))


def test_a_scored_trial_hands_the_grader_its_scenarios_expect_entries(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path,
        'def grade(t, case, run):\n    return {"pass": True, "why": repr(case["expect"])}\n',
    )
    (tmp_path / "case.yaml").write_text(
        "scenarios:\n"
        "  - id: refund-once\n"
        "    user: Refund order 7\n"
        "    expect:\n"
        "      - tool_called: {name: refund}\n"
        "      - grader: {name: quality.grade}\n",
        encoding="utf-8",
    )
    scenario = load_case(tmp_path / "case.yaml", suite_dir=suite).scenarios[0]
    score = measure_trial(scenario, _evidence(), suite_dir=suite)
    graded = next(c for c in score.checks if c.type == "grader")
    expect = graded.result.reason.partition("): ")[2]
    assert "'tool_called': {" in expect and "'name': 'refund'" in expect
    assert "'grader': {" in expect


@pytest.mark.parametrize(
    ("answer", "pass_below", "status", "score"),
    [
        ('{"pass": True, "score": 0.8}', 0.7, Status.PASSED, 0.8),
        ('{"pass": True, "score": 0.7}', 0.7, Status.PASSED, 0.7),
        ('{"pass": True, "score": 0.6}', 0.7, Status.FAILED, 0.6),
        ('{"pass": True}', 0.7, Status.FAILED, 1.0),
        ('{"pass": False, "score": 0.9}', 0.7, Status.FAILED, 0.9),
        ('{"pass": True, "score": 0.2}', None, Status.PASSED, 0.2),
    ],
)
def test_pass_below_and_the_graders_own_pass_must_both_hold(
    tmp_path: Path, answer: str, pass_below: float | None, status: Status, score: float
) -> None:
    raw = {"name": "quality.grade", "pass_below": pass_below}
    result = _check(raw, _returns(tmp_path, answer))
    assert (result.status, result.score) == (status, score)


def test_under_pass_below_says_the_score_and_why(tmp_path: Path) -> None:
    suite = _returns(tmp_path, '{"pass": True, "score": 0.55, "why": "terse"}')
    result = _check({"name": "quality.grade", "pass_below": 0.7}, suite)
    assert result.reason == "grader 'quality.grade' gave score 0.55, under pass_below 0.70: terse"
    assert result.details == {"grader_passed": True, "grader_score": 0.55}


@pytest.mark.parametrize("answer", ['"pass"', '{"pass": "yes"}', '{"pass": True, "score": 2}'])
def test_a_malformed_answer_is_an_error(tmp_path: Path, answer: str) -> None:
    result = _check("quality.grade", _returns(tmp_path, answer))
    assert result.status is Status.ERROR and "which is not True/False or" in result.reason


def test_a_grader_that_raises_is_an_error_with_its_traceback_tail(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "def grade(t, case, run):\n    return run['missing']\n")
    result = _check("quality.grade", suite)
    assert result.status is Status.ERROR
    assert result.reason == "grader 'quality.grade' raised KeyError: 'missing'"
    assert "return run['missing']" in result.details["traceback"]


def test_a_grader_over_the_check_time_limit_is_an_error(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "import time\ndef grade(t, case, run):\n    time.sleep(20)\n")
    result = _check("quality.grade", suite, timeout=1.0)
    assert result.status is Status.ERROR and "ran past its 1 s" in result.reason


def test_t_llm_asks_the_configured_judge(tmp_path: Path) -> None:
    judge = FakeJudge("0.9, clear")
    suite = _suite(
        tmp_path,
        """
        def grade(t, case, run):
            said = t.llm("Rate: " + run["final_answer"])
            return {"pass": True, "score": float(said.split(",")[0]), "why": said}
        """,
    )
    result = _check({"name": "quality.grade", "pass_below": 0.7}, suite, judge=judge)
    assert result.status is Status.PASSED and result.score == 0.9
    assert judge.prompts == ["Rate: Refunded order 7: $40."]


def test_without_the_suite_folder_it_is_an_error() -> None:
    result = _check("quality.grade", None)
    assert result.status is Status.ERROR and "suite's folder" in result.reason


def test_the_name_is_checked_when_the_suite_loads() -> None:
    check = registry.get("grader")
    assert check.family == "judge"
    for bad in ("quality", "quality.grade.v2", {"name": "q.g", "pass_below": -0.1}):
        with pytest.raises(ValueError):
            check.parse(bad)
