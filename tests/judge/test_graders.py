"""Graders run in a process of their own, and only a well-formed answer is a decision."""

from __future__ import annotations

import os
import signal
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from sounding.judge import (
    DEFAULT_GRADER_TIMEOUT,
    GraderAnswer,
    GraderError,
    JudgeClient,
    JudgeConfig,
    JudgeError,
    find_graders,
    run_grader,
)

CASE = {"id": "refund-once", "user": ["Refund order 7"], "expect": []}
RUN = {
    "final_answer": "Refunded order 7.",
    "tool_calls": [{"name": "refund", "args": {"order": 7}}],
    "error": None,
    "turns": 1,
    "duration_ms": 1200.0,
}


def _suite(tmp_path: Path, body: str, file: str = "quality") -> Path:
    checks = tmp_path / "checks"
    checks.mkdir(parents=True, exist_ok=True)
    (checks / f"{file}.py").write_text(textwrap.dedent(body), encoding="utf-8")
    return tmp_path


def _grade(suite: Path, name: str = "quality.grade", **options: Any) -> GraderAnswer:
    return run_grader(suite, name, case=CASE, run=RUN, **options)


# ---- finding graders ----------------------------------------------------------------------


def test_find_graders_lists_public_functions_of_checks_files(tmp_path: Path) -> None:
    _suite(tmp_path, "def answers(t, case, run): ...\ndef _helper(): ...\nX = 1\n")
    _suite(tmp_path, "def polite(t, case, run): ...\n", file="tone")
    _suite(tmp_path, "def hidden(t, case, run): ...\n", file="not.a.name")
    (tmp_path / "checks" / "notes.txt").write_text("def nothing(): ...")
    assert find_graders(tmp_path) == {"quality.answers", "tone.polite"}


def test_find_graders_without_a_checks_folder_is_empty(tmp_path: Path) -> None:
    assert find_graders(tmp_path) == set()


def test_find_graders_names_the_line_of_a_file_that_does_not_parse(tmp_path: Path) -> None:
    _suite(tmp_path, "def ok(t, case, run):\n    return True\n\ndef broken(:\n")
    with pytest.raises(GraderError, match=r"quality.py:4: .*fix it"):
        find_graders(tmp_path)


def test_find_graders_does_not_run_the_files(tmp_path: Path) -> None:
    _suite(tmp_path, "open('ran', 'w').write('x')\ndef grade(t, case, run): ...\n")
    assert find_graders(tmp_path) == {"quality.grade"}
    assert not (tmp_path / "ran").exists()


# ---- answers ------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [True, False])
def test_true_or_false_is_a_decision_without_a_score(tmp_path: Path, answer: bool) -> None:
    suite = _suite(tmp_path, f"def grade(t, case, run):\n    return {answer}\n")
    assert _grade(suite) == GraderAnswer(passed=answer)


def test_a_dict_answer_gives_pass_score_and_why(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path,
        """
        def grade(t, case, run):
            ok = case["user"][0] == "Refund order 7" and run["tool_calls"][0]["name"] == "refund"
            return {"pass": ok, "score": 0.75, "why": case["id"]}
        """,
    )
    assert _grade(suite) == GraderAnswer(passed=True, score=0.75, why="refund-once")


def test_a_grader_may_print_and_import_its_neighbours(tmp_path: Path) -> None:
    _suite(tmp_path, "LIMIT = 1000\n", file="helpers")
    suite = _suite(
        tmp_path,
        """
        import helpers

        def grade(t, case, run):
            print("debugging", run)
            return {"pass": run["duration_ms"] < helpers.LIMIT * 2}
        """,
    )
    assert _grade(suite).passed


@pytest.mark.parametrize(
    ("returned", "problem"),
    [
        ('"yes"', "it is of type str"),
        ("1", "it is of type int"),
        ("None", "it is of type NoneType"),
        ('{"passed": True}', "unexpected key"),
        ('{"score": 0.9}', '"pass" must be true or false'),
        ('{"pass": 1}', '"pass" must be true or false'),
        ('{"pass": True, "score": 1.5}', '"score" must be a number from 0 to 1'),
        ('{"pass": True, "score": "0.8"}', '"score" must be a number from 0 to 1'),
        ('{"pass": True, "score": float("nan")}', '"score" must be a number from 0 to 1'),
        ('{"pass": True, "why": 3}', '"why" must be a string'),
        ("object()", "cannot be read as JSON"),
    ],
)
def test_anything_else_is_malformed_and_an_error(
    tmp_path: Path, returned: str, problem: str
) -> None:
    suite = _suite(tmp_path, f"def grade(t, case, run):\n    return {returned}\n")
    with pytest.raises(GraderError, match=f"grader 'quality.grade' answered .*{problem}"):
        _grade(suite)


def test_a_grader_that_raises_is_an_error_with_its_traceback(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path,
        """
        def grade(t, case, run):
            return float(run["final_answer"].split()[0])
        """,
    )
    with pytest.raises(GraderError, match="raised ValueError: could not convert") as caught:
        _grade(suite)
    assert 'return float(run["final_answer"].split()[0])' in caught.value.details["traceback"]


def test_a_grader_that_exits_is_an_error(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "import sys\ndef grade(t, case, run):\n    sys.exit(3)\n")
    with pytest.raises(GraderError, match="raised SystemExit: 3"):
        _grade(suite)
    suite = _suite(tmp_path, "import os\ndef grade(t, case, run):\n    os._exit(4)\n")
    with pytest.raises(GraderError, match=r"exited \(code 4\) without answering"):
        _grade(suite)


def test_a_grader_past_its_time_is_stopped_and_an_error(tmp_path: Path) -> None:
    assert DEFAULT_GRADER_TIMEOUT == 30.0
    suite = _suite(tmp_path, "import time\ndef grade(t, case, run):\n    time.sleep(30)\n")
    with pytest.raises(GraderError, match="ran past its 1 s and was stopped"):
        _grade(suite, timeout=1.0)


def test_what_a_stopped_grader_started_is_stopped_too(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path,
        """
        import subprocess, sys, time
        def grade(t, case, run):
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
            open("child.pid", "w").write(str(child.pid))
            time.sleep(30)
        """,
    )
    with pytest.raises(GraderError, match="ran past its 1 s"):
        _grade(suite, timeout=1.0)
    pid = int((tmp_path / "child.pid").read_text())
    assert _gone_within(pid, seconds=3.0)


def test_a_daemon_left_holding_the_graders_pipes_does_not_hold_its_check(
    tmp_path: Path,
) -> None:
    suite = _suite(
        tmp_path,
        """
        import subprocess, sys
        def grade(t, case, run):
            code = "import time; time.sleep(30)"
            daemon = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
            open("daemon.pid", "w").write(str(daemon.pid))
            return True
        """,
    )
    started = time.monotonic()
    try:
        assert _grade(suite, timeout=5.0) == GraderAnswer(passed=True)
        assert time.monotonic() - started < 1.5
    finally:
        os.kill(int((tmp_path / "daemon.pid").read_text()), signal.SIGKILL)


def _gone_within(pid: int, seconds: float) -> bool:
    """True once the process is gone or a zombie (dead, waiting to be reaped)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_a_relative_suite_folder_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _suite(tmp_path / "evals", "def grade(t, case, run):\n    return True\n")
    monkeypatch.chdir(tmp_path)
    assert _grade(Path("evals")).passed


def test_an_unknown_grader_names_the_known_ones_and_the_closest(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "def grade(t, case, run):\n    return True\n")
    with pytest.raises(GraderError, match=r"checks/tone.py\. \(graders: quality.grade\)"):
        _grade(suite, "tone.polite")
    with pytest.raises(GraderError, match=r"Did you mean 'quality\.grade'"):
        _grade(suite, "quality.grades")


def test_a_grader_that_is_not_a_function_is_an_error(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "def grade(t, case, run):\n    return True\ngrade = 3\n")
    with pytest.raises(GraderError, match="has no function 'grade'"):
        _grade(suite)


def test_a_bad_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly one dot"):
        _grade(tmp_path, "quality.sub.grade")


# ---- t.llm -------------------------------------------------------------------------------

ASKS = """
def grade(t, case, run):
    said = t.llm("Rate: " + run["final_answer"])
    return {"pass": said.startswith("0.9"), "score": float(said.split()[0]), "why": said}
"""


def test_t_llm_asks_the_judge_model(tmp_path: Path) -> None:
    asked: list[str] = []

    def llm(prompt: str) -> str:
        asked.append(prompt)
        return "0.9 clear and correct"

    answer = _grade(_suite(tmp_path, ASKS), llm=llm)
    assert asked == ["Rate: Refunded order 7."]
    assert answer == GraderAnswer(passed=True, score=0.9, why="0.9 clear and correct")


def test_t_llm_reaches_the_real_judge_client(tmp_path: Path, llm_server: Any) -> None:
    llm_server.openai_text("0.9 because it names the order")
    config = JudgeConfig(model="judge", base_url=f"{llm_server.url}/v1", timeout=5)
    judge = JudgeClient(config, environ={"OPENAI_API_KEY": "k"})
    assert _grade(_suite(tmp_path, ASKS), llm=judge.text).score == 0.9
    assert llm_server.last()["messages"] == [{"role": "user", "content": "Rate: Refunded order 7."}]


def test_t_llm_without_a_judge_raises_in_the_grader(tmp_path: Path) -> None:
    with pytest.raises(GraderError, match="JudgeUnavailable: no judge is configured") as caught:
        _grade(_suite(tmp_path, ASKS))
    assert "t.llm" in caught.value.details["traceback"]


def test_a_failing_judge_raises_in_the_grader(tmp_path: Path) -> None:
    def llm(prompt: str) -> str:
        raise JudgeError("the judge (openai at x) answered HTTP 500: boom")

    with pytest.raises(GraderError, match=r"JudgeUnavailable: the judge .* HTTP 500"):
        _grade(_suite(tmp_path, ASKS), llm=llm)
