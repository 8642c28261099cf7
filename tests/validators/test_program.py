"""`@validator`: a function of a Run made into a program that prints the contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sounding.validators import CannotJudge, ContextDocument, Metric, Run, check_answer, validator


@pytest.fixture
def run(tmp_path: Path) -> Run:
    document = ContextDocument(
        workspace=str(tmp_path), touched=["a.py"], declared=["in_scope", "tests"]
    )
    path = tmp_path / "context.json"
    path.write_text(document.model_dump_json(by_alias=True))
    return Run(path)


def test_values_metrics_and_reasons_become_the_contract(run: Run) -> None:
    @validator
    def evaluate(run: Run) -> dict[str, Any]:
        return {
            "in_scope": Metric(False, "also touched a.py"),
            "delivered": Metric(True, ""),
            "touched": run.touched,
            "count": 1,
        }

    answer = evaluate(run)
    assert answer == {
        "metrics": {"in_scope": False, "delivered": True, "touched": ["a.py"], "count": 1},
        "reasons": {"in_scope": "also touched a.py"},
        "unjudged": {},
    }
    assert evaluate.__name__ == "evaluate"


def test_a_cannot_judge_in_one_metric_leaves_the_others(run: Run) -> None:
    def tests() -> bool:
        raise CannotJudge("no test_command declared")

    @validator
    def evaluate(run: Run) -> dict[str, Any]:
        return {"in_scope": True, "tests": tests, "given": Metric.unjudged("nothing was given")}

    answer = evaluate(run)
    assert answer["metrics"] == {"in_scope": True}
    assert answer["unjudged"] == {"tests": "no test_command declared", "given": "nothing was given"}
    assert not isinstance(check_answer(answer, ["in_scope", "tests"]), str)  # within contract


def test_a_cannot_judge_raised_for_the_whole_run_makes_every_declared_metric_unjudged(
    run: Run,
) -> None:
    @validator
    def evaluate(run: Run) -> dict[str, Any]:
        raise CannotJudge("the workspace was not kept")

    answer = evaluate(run)
    assert answer == {
        "metrics": {},
        "reasons": {},
        "unjudged": {
            "in_scope": "the workspace was not kept",
            "tests": "the workspace was not kept",
        },
    }


def test_an_unjudged_metric_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="needs a reason"):
        Metric.unjudged("  ")


def test_cli_prints_the_answer_and_exits_0(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    @validator
    def evaluate(run: Run) -> dict[str, Any]:
        return {"in_scope": True, "tests": False}

    assert evaluate.cli(["v.py", str(run.path)]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == {
        "metrics": {"in_scope": True, "tests": False},
        "reasons": {},
        "unjudged": {},
    }


def test_cli_usage_bad_context_and_crash_exit_non_zero(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    @validator
    def crashes(run: Run) -> dict[str, Any]:
        return {"ratio": 1 / len(run.given)}

    assert crashes.cli(["v.py"]) == 2
    assert "usage: v.py CONTEXT_JSON" in capsys.readouterr().err
    assert crashes.cli(["v.py", str(tmp_path / "missing.json")]) == 1
    assert "cannot read the context" in capsys.readouterr().err
    assert crashes.cli(["v.py", str(run.path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "ZeroDivisionError" in captured.err


def test_a_value_that_is_not_json_is_a_crash_not_a_half_answer(
    run: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    @validator
    def evaluate(run: Run) -> dict[str, Any]:
        return {"in_scope": object()}

    assert evaluate.cli(["v.py", str(run.path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "is not JSON" in captured.err


def test_a_function_that_returns_no_dict_is_a_crash(run: Run) -> None:
    @validator
    def evaluate(run: Run) -> Any:
        return [True]

    with pytest.raises(TypeError, match="returned list: return a dict"):
        evaluate(run)
