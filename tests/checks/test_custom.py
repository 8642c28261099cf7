"""custom: real scripts of a temporary suite, run as subprocesses."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from sounding.checks import (
    CheckContext,
    CheckResult,
    Evidence,
    Status,
    registry,
)
from sounding.record import RunRecord, ToolCall
from sounding.services import ServiceEvidence


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "suite" / "checks").mkdir(parents=True)
    (tmp_path / "workspace").mkdir()
    return tmp_path / "suite"


def script(suite: Path, name: str, body: str) -> str:
    path = suite / "checks" / name
    path.write_text(textwrap.dedent(body).lstrip())
    return f"checks/{name}"


def run(raw: Any, suite: Path | None, timeout: float = 10.0, **evidence: Any) -> CheckResult:
    kind = registry.get("custom")
    evidence.setdefault("record", RunRecord())
    context = CheckContext(
        evidence=Evidence(**evidence), name="summary", timeout=timeout, suite_dir=suite
    )
    return kind.run(kind.parse(raw), context)


def answering(suite: Path, answer: str) -> str:
    """A script that prints exactly `answer`."""
    return script(suite, "answer.py", f"import sys\nsys.stdout.write({answer!r})\n")


ECHO = """
import json, os, sys
context = json.load(sys.stdin)
print(json.dumps({"passed": True, "details": {"context": context, "cwd": os.getcwd()}}))
"""


def test_the_script_reads_the_context_and_runs_in_the_suite_folder(suite: Path) -> None:
    record = RunRecord(
        task="Refund order A-1",
        user_turns=["Refund order A-1", "Thanks"],
        tool_calls=[ToolCall(id="c1", name="get_order", args={"order_id": "A-1"})],
        final_answer="Done.",
    )
    db = ServiceEvidence(name="db", type="sql", url="sqlite:///x.db", details={"tables": 2})
    result = run(
        {"script": script(suite, "echo.py", ECHO)},
        suite,
        record=record,
        workspace=suite.parent / "workspace",
        services={"db": db},
        scenario_id="refund-once",
        trial=2,
        cell="gpt / terse",
        extra={"trace_path": "/tmp/trace.jsonl"},
    )
    assert result.status is Status.PASSED, result.reason
    assert result.score == 1.0
    assert result.details["cwd"] == str(suite.resolve())
    context = result.details["context"]
    assert context["workspace_path"] == str((suite.parent / "workspace").resolve())
    assert context["record"]["tool_calls"][0]["args"] == {"order_id": "A-1"}
    assert context["record"]["schema"] == "sounding.run/1"
    assert context["services"] == {
        "db": {"type": "sql", "url": "sqlite:///x.db", "details": {"tables": 2}}
    }
    assert context["task"] == {
        "prompt": "Refund order A-1",
        "turns": ["Refund order A-1", "Thanks"],
    }
    assert (context["scenario"], context["trial"], context["cell"]) == (
        "refund-once",
        2,
        "gpt / terse",
    )
    assert context["trace_path"] == "/tmp/trace.jsonl"
    assert context["check"] == "summary"


def test_without_a_workspace_or_trace_the_context_says_so(suite: Path) -> None:
    result = run(script(suite, "echo.py", ECHO), suite)
    context = result.details["context"]
    assert context["workspace_path"] is None
    assert "trace_path" not in context


def test_a_failing_verdict_keeps_its_score_and_reason(suite: Path) -> None:
    answer = '{"passed": false, "score": 0.4, "reason": "2/5 numbers match", "details": {"n": 5}}'
    result = run(answering(suite, answer), suite)
    assert result.status is Status.FAILED
    assert (result.score, result.reason, result.details) == (0.4, "2/5 numbers match", {"n": 5})


def test_the_score_defaults_to_the_verdict(suite: Path) -> None:
    failed = run(answering(suite, '{"passed": false}'), suite)
    assert (failed.status, failed.score, failed.reason) == (
        Status.FAILED,
        0.0,
        "script 'checks/answer.py' failed",
    )
    passed = run(answering(suite, '{"passed": true, "score": 1}'), suite)
    assert (passed.status, passed.score) == (Status.PASSED, 1.0)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ("all good", "printed no JSON object"),
        ("", "printed no JSON object"),
        ("[true]", "printed an array, expected an object"),
        ('{"score": 1}', "'passed' is missing"),
        ('{"passed": "yes"}', "'passed' is a string, expected true or false"),
        ('{"passed": 1}', "'passed' is a number"),
        ('{"passed": true, "score": 1.5}', "'score' is 1.5, expected a number from 0 to 1"),
        ('{"passed": true, "score": NaN}', "'score' is NaN"),
        ('{"passed": true, "score": true}', "'score' is true"),
        ('{"passed": true, "reason": 3}', "'reason' is a number"),
        ('{"passed": true, "details": []}', "'details' is an array"),
        ('{"passed": true, "scores": 1}', "unknown key 'scores'"),
    ],
)
def test_an_unreadable_answer_is_an_error_never_a_verdict(
    suite: Path, answer: str, words: str
) -> None:
    result = run(answering(suite, answer), suite)
    assert result.status is Status.ERROR
    assert words in result.reason
    assert result.reason.startswith("script 'checks/answer.py' ")


def test_a_non_zero_exit_is_an_error_with_the_end_of_stderr(suite: Path) -> None:
    body = """
    import sys
    print('{"passed": true}')
    sys.exit("could not open the audit log")
    """
    result = run(script(suite, "crash.py", body), suite)
    assert result.status is Status.ERROR
    assert result.reason == "script 'checks/crash.py' exited with 1: could not open the audit log"
    assert "could not open the audit log" in result.details["stderr"]


def test_a_script_past_its_timeout_is_an_error_and_its_children_die(suite: Path) -> None:
    body = """
    import subprocess, sys, time
    child = subprocess.Popen(["sleep", "30"])
    open("child.pid", "w").write(str(child.pid))
    time.sleep(30)
    """
    started = time.monotonic()
    result = run({"script": script(suite, "slow.py", body), "timeout": 1}, suite)
    assert time.monotonic() - started < 6
    assert result.status is Status.ERROR
    assert result.reason == "script 'checks/slow.py' timed out after 1s"
    child = int((suite / "child.pid").read_text())
    deadline = time.monotonic() + 3
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_the_scenario_check_timeout_applies_without_a_param(suite: Path) -> None:
    result = run(script(suite, "slow.py", "import time\ntime.sleep(30)\n"), suite, timeout=0.5)
    assert result.status is Status.ERROR
    assert "timed out after 0.5s" in result.reason


def test_an_executable_script_in_another_language_runs(suite: Path) -> None:
    name = script(suite, "check.sh", "#!/bin/sh\ncat > /dev/null\necho '{\"passed\": true}'\n")
    (suite / name).chmod(0o755)
    assert run(name, suite).status is Status.PASSED


def test_a_script_that_is_not_executable_is_an_error(suite: Path) -> None:
    name = script(suite, "check.sh", "#!/bin/sh\necho '{}'\n")
    result = run(name, suite)
    assert result.status is Status.ERROR
    assert "is not executable; run 'chmod +x checks/check.sh'" in result.reason


def test_a_missing_script_is_an_error(suite: Path) -> None:
    result = run("checks/nope.py", suite)
    assert result.status is Status.ERROR
    assert result.reason.startswith("script 'checks/nope.py' was not found in ")


def test_no_suite_folder_is_an_error() -> None:
    result = run("checks/x.py", None)
    assert result.status is Status.ERROR
    assert "no suite folder was given" in result.reason


def test_a_script_linked_from_outside_the_suite_is_an_error(suite: Path) -> None:
    outside = suite.parent / "evil.py"
    outside.write_text("print('{\"passed\": true}')\n")
    (suite / "checks" / "evil.py").symlink_to(outside)
    result = run("checks/evil.py", suite)
    assert result.status is Status.ERROR
    assert "leads outside the suite folder" in result.reason


def test_a_huge_stdout_is_an_error(suite: Path) -> None:
    name = script(suite, "big.py", "import sys\nsys.stdout.write('x' * (2 << 20))\n")
    result = run(name, suite)
    assert result.status is Status.ERROR
    assert "more than 1 MiB" in result.reason


@pytest.mark.parametrize(
    "raw",
    [
        {"script": "/abs/check.py"},
        {"script": "../other/check.py"},
        {"script": "checks/x.py", "timeout": -1},
        {"script": "checks/x.py", "runs_in": "host"},
        {},
    ],
)
def test_bad_params_are_refused(raw: Any) -> None:
    with pytest.raises(ValidationError):
        registry.get("custom").parse(raw)


def test_the_verdict_json_may_span_lines(suite: Path) -> None:
    answer = json.dumps({"passed": True, "reason": "ok"}, indent=2)
    assert run(answering(suite, answer), suite).reason == "ok"
