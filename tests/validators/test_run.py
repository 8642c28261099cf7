"""`Run`: a finished trial read from its context file, as a Python validator sees it."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from sounding.record import RunRecord, ToolCall
from sounding.validators import CannotJudge, ContextDocument, ContextError, Reference, Run

PASSING = f"{sys.executable} -c 'import counter; assert counter.VALUE == 2'"
FAILING = f"{sys.executable} -c 'import counter; assert counter.VALUE == 3'"


def context(
    tmp_path: Path,
    *,
    test_command: str | None = None,
    prepare: tuple[str, ...] = (),
    calls: tuple[ToolCall, ...] = (),
    prompt: str = "Fix counter.py",
    checkout: Path | None = None,
) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "counter.py").write_text("VALUE = 2\n")
    record = RunRecord(final_answer="Fixed it.", tool_calls=list(calls))
    (tmp_path / "record.json").write_text(record.to_json())
    (tmp_path / "prompt.txt").write_text(prompt)
    document = ContextDocument(
        workspace=str(workspace),
        reference=Reference(ref="v1", checkout=str(checkout) if checkout else None),
        prompt=str(tmp_path / "prompt.txt"),
        record=str(tmp_path / "record.json"),
        case="c",
        scenario="s",
        trial=2,
        cell="x",
        declared=["in_scope", "tests"],
        touched=["counter.py", "__pycache__/counter.pyc"],
        byproducts=["__pycache__/counter.pyc"],
        given=["probe_test.py"],
        files=["counter.py", "probe_test.py"],
        test_command=test_command,
        prepare=list(prepare),
    )
    path = tmp_path / "context.json"
    path.write_text(document.model_dump_json(by_alias=True))
    return path


def test_the_harness_facts_are_sets_to_subtract(tmp_path: Path) -> None:
    run = Run(context(tmp_path))
    assert run.touched - run.byproducts == {"counter.py"}
    assert run.given == {"probe_test.py"}
    assert run.files == {"counter.py", "probe_test.py"}
    assert run.declared == {"in_scope", "tests"}
    assert (run.case, run.scenario, run.trial, run.cell) == ("c", "s", 2, "x")
    assert run.workspace == tmp_path / "workspace"
    assert (run.ref, run.checkout) == ("v1", None)
    assert run.response == "Fixed it."
    assert run.prompt == "Fix counter.py"


def test_first_write_finds_the_first_call_naming_a_path(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    calls = (
        ToolCall(id="1", name="read", args={"path": "README.md"}),
        ToolCall(id="2", name="edit", args={"edits": [{"file": f"{workspace}/src/../counter.py"}]}),
        ToolCall(id="3", name="write", args={"path": "./counter.py"}),
    )
    run = Run(context(tmp_path, calls=calls))
    assert [call.name for call in run.tool_calls()] == ["read", "edit", "write"]
    assert run.first_write("counter.py") == 1
    assert run.first_write("README.md") == 0
    assert run.first_write("other.py") is None


def test_skills_expanded_reads_the_skill_tokens_of_the_prompt(tmp_path: Path) -> None:
    prompt = "Use /skill:refactor and /skill:tests-first. Not a/skill:nope or //skill:x."
    run = Run(context(tmp_path, prompt=prompt))
    assert run.skills_expanded == {"refactor", "tests-first"}


def test_tests_run_the_declared_command_on_a_copy(tmp_path: Path) -> None:
    assert Run(context(tmp_path, test_command=PASSING)).tests() is True
    run = Run(context(tmp_path, test_command=FAILING))
    assert run.tests() is False  # the suite failing is a measurement
    assert sorted(p.name for p in run.workspace.iterdir()) == ["counter.py"]  # archive unchanged


def test_no_test_command_cannot_be_judged(tmp_path: Path) -> None:
    with pytest.raises(CannotJudge, match="declares no test_command"):
        Run(context(tmp_path)).tests()


def test_a_failing_prepare_step_cannot_be_judged(tmp_path: Path) -> None:
    prepare = (f"{sys.executable} -c 'raise SystemExit(4)'",)
    run = Run(context(tmp_path, test_command=PASSING, prepare=prepare))
    with pytest.raises(CannotJudge, match=r"prepare step .* failed, so the tests were not run"):
        run.tests()


def test_a_test_command_that_cannot_start_cannot_be_judged(tmp_path: Path) -> None:
    run = Run(context(tmp_path, test_command="no-such-test-runner -q"))
    with pytest.raises(CannotJudge, match="'no-such-test-runner -q' could not start"):
        run.tests()


def test_what_a_step_leaves_running_dies_with_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "left.pid"
    command = f"sh -c 'sleep 30 & echo $! > {pid_file}; exit 0'"
    started = time.monotonic()
    assert Run(context(tmp_path, test_command=command)).tests() is True
    assert time.monotonic() - started < 5
    left = int(pid_file.read_text())
    deadline = time.monotonic() + 1.0  # a SIGKILL is sent at once, and acted on soon after
    while _running(left) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _running(left)


def test_a_step_past_its_timeout_cannot_be_judged(tmp_path: Path) -> None:
    run = Run(context(tmp_path, test_command="sleep 30"))
    with pytest.raises(CannotJudge, match=r"'sleep 30' ran past 0.5s"):
        run.tests(timeout=0.5)


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_sources_at_reference_read_the_pristine_tree(tmp_path: Path) -> None:
    checkout = tmp_path / "reference"
    (checkout / "src").mkdir(parents=True)
    (checkout / "src/a.py").write_text("A = 1\n")
    (checkout / "src/b.txt").write_text("b")
    run = Run(context(tmp_path, checkout=checkout))
    assert run.sources_at_reference("src/*.py") == {"src/a.py": "A = 1\n"}
    empty = tmp_path / "empty-start"
    empty.mkdir()
    with pytest.raises(CannotJudge, match="no reference tree"):
        Run(context(empty)).sources_at_reference("*.py")


def test_a_context_that_is_not_one_says_which_file(tmp_path: Path) -> None:
    path = tmp_path / "context.json"
    with pytest.raises(ContextError, match="cannot read the context"):
        Run(path)
    path.write_text(json.dumps({"schema": "sounding.validation-context/9", "workspace": "/w"}))
    with pytest.raises(ContextError, match=r"reads 'sounding\.validation-context/1'"):
        Run(path)
    path.write_text(json.dumps({"touched": []}))
    with pytest.raises(ContextError, match="is not a validation context"):
        Run(path)
