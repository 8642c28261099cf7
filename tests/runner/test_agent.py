"""Command agents: one process per turn, bounded by the trial's timeout whatever it does."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sounding.runner._agent import TurnInput, run_command


def given(tmp_path: Path, turns: list[str], timeout: float = 10.0) -> TurnInput:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"]}
    return TurnInput(turns, workspace, tmp_path / "trace.jsonl", tmp_path, env, timeout)


def agent(tmp_path: Path, body: str) -> list[str]:
    """A command agent: a Python script run with this interpreter."""
    script = tmp_path / "agent.py"
    script.write_text(textwrap.dedent(body), encoding="utf-8")
    return [sys.executable, str(script)]


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[Path]:
    """A file where an agent writes the pid of a daemon it left in another session; the
    daemon is killed when the test ends, since nothing of the agent's reaches it."""
    pid_file = tmp_path / "daemon.pid"
    yield pid_file
    if pid_file.is_file():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_each_turn_reads_its_prompt_on_stdin_and_answers_on_stdout(tmp_path: Path) -> None:
    argv = agent(
        tmp_path,
        """
        import os, sys
        print(sys.stdin.read().upper(), os.environ["SOUNDING_TURN"], os.getcwd())
        """,
    )
    run = run_command(argv, given(tmp_path, ["hello", "again"]))
    workspace = tmp_path / "workspace"
    assert run.answers == [f"HELLO 0 {workspace}", f"AGAIN 1 {workspace}"]
    assert (run.exit_code, run.signal, run.timed_out) == (0, None, False)


def test_an_agent_that_leaves_a_daemon_holding_its_output_ends_with_its_turn(
    tmp_path: Path, daemons: Path
) -> None:
    argv = agent(
        tmp_path,
        f"""
        import subprocess, sys
        daemon = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True
        )
        open({str(daemons)!r}, "w").write(str(daemon.pid))
        print("done")
        """,
    )
    started = time.monotonic()
    run = run_command(argv, given(tmp_path, ["go"], timeout=2.0))
    assert time.monotonic() - started < 2.0
    assert (run.answers, run.exit_code, run.timed_out) == (["done"], 0, False)


def test_a_timeout_holds_when_a_daemon_holds_the_output(tmp_path: Path, daemons: Path) -> None:
    argv = agent(
        tmp_path,
        f"""
        import subprocess, sys, time
        daemon = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True
        )
        open({str(daemons)!r}, "w").write(str(daemon.pid))
        print("working", flush=True)
        time.sleep(30)
        """,
    )
    started = time.monotonic()
    run = run_command(argv, given(tmp_path, ["go"], timeout=1.0))
    assert time.monotonic() - started < 4.0  # the timeout, the TERM grace, and some slack
    assert run.timed_out
    assert run.stdout == "working\n"
    assert run.signal == signal.SIGTERM and run.exit_code == -signal.SIGTERM


def test_an_agent_killed_by_a_signal_says_which(tmp_path: Path) -> None:
    argv = agent(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    run = run_command(argv, given(tmp_path, ["go", "never asked"]))
    assert (run.signal, run.exit_code, run.timed_out) == (signal.SIGSEGV, -signal.SIGSEGV, False)
    assert run.answers == [""]


def test_a_flood_of_output_keeps_its_end_and_says_it_was_cut(tmp_path: Path) -> None:
    argv = agent(
        tmp_path,
        """
        import sys
        line = b"x" * 1023 + b"\\n"
        for _ in range(40 * 1024):
            sys.stdout.buffer.write(line)
        print("the end")
        """,
    )
    run = run_command(argv, given(tmp_path, ["go"]))
    assert run.exit_code == 0
    assert len(run.stdout) < 20 << 20
    assert run.stdout.startswith("[sounding kept the last ")
    assert run.stdout.endswith("x\nthe end\n")
    assert run.answers[0].endswith("the end") and "[sounding" not in run.answers[0]


def test_a_program_that_is_not_there_did_not_start(tmp_path: Path) -> None:
    run = run_command(["no-such-agent-anywhere"], given(tmp_path, ["go"]))
    assert run.failed_to_start == (
        "could not start 'no-such-agent-anywhere': No such file or directory"
    )
    assert run.produced_nothing


PARENT = """
import sys, threading
from pathlib import Path
from sounding.runner._agent import TurnInput, run_command

folder = Path(sys.argv[1])
given = TurnInput(["go"], folder, folder / "trace.jsonl", folder, {{}}, 60.0)
code = "import os, time; open('agent.pid', 'w').write(str(os.getpid())); time.sleep(60)"
argv = [{python!r}, "-c", code]
threading.Thread(target=run_command, args=(argv, given)).start()
"""


def test_the_agent_dies_when_sounding_is_killed(tmp_path: Path) -> None:
    """A `kill -9` of sounding leaves no agent running: it gets the parent-death signal."""
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT.format(python=sys.executable), str(tmp_path)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    pid_file = tmp_path / "agent.pid"
    deadline = time.monotonic() + 30
    while not pid_file.is_file() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.02)
    agent_pid = int(pid_file.read_text())
    try:
        parent.kill()
        parent.wait()
        assert gone_within(agent_pid, 2.0), "the agent outlived the sounding that started it"
    finally:
        if alive(agent_pid):
            os.kill(agent_pid, signal.SIGKILL)


def _run_leaving_a_daemon(suite: Any, daemons: Path) -> None:
    """A run whose agent leaves a daemon in a session of its own; it must be gone after."""
    suite.agent(
        f"""
        import subprocess, sys
        sys.stdin.read()
        daemon = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
        )
        open({str(daemons)!r}, "w").write(str(daemon.pid))
        print("done")
        """
    )
    suite.write("cases/d.yaml", "scenarios:\n  - {id: s, user: go}\n")
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert gone_within(int(daemons.read_text()), 2.0)


def test_a_daemon_the_agent_leaves_is_gone_when_the_run_ends(suite: Any, daemons: Path) -> None:
    """A daemon in a session of its own escapes the agent's group; `sounding run` adopts
    it (a child subreaper) and kills it as the run ends."""
    _run_leaving_a_daemon(suite, daemons)


def test_a_run_in_a_host_process_leaves_the_hosts_own_children_alone(
    suite: Any, daemons: Path
) -> None:
    """Run from a process that has children of its own (a test session, a notebook), the
    run still ends the daemons its agents leave, and only them."""
    own = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _run_leaving_a_daemon(suite, daemons)
        assert own.poll() is None, "the run ended a process it did not start"
    finally:
        own.kill()
        own.wait()
