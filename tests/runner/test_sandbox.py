"""`[agent] sandbox = "bwrap"`: the agent sees the system read-only, a private /tmp and no
network unless its services need one; nothing it starts outlives sounding."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None and os.environ.get("SOUNDING_REQUIRE_SERVICES") != "1",
    reason="bubblewrap (bwrap) is not installed: apt-get install bubblewrap",
)

PROBING_AGENT = """
import os, socket, sys
sys.stdin.read()
open("inside.txt", "w").write("ok")
tries = {{}}
for name, target in (("suite", {suite!r}), ("tmp", "/tmp/sounding-probe")):
    try:
        open(target, "w").write("x")
        tries[name] = "written"
    except OSError:
        tries[name] = "refused"
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    tries["net"] = "reached"
except OSError:
    tries["net"] = "refused"
print(" ".join(f"{{k}}={{v}}" for k, v in sorted(tries.items())))
"""


@pytest.fixture
def listening() -> Any:
    server = socket_server()
    yield server.getsockname()[1]
    server.close()


def socket_server() -> Any:
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    return server


def test_a_sandboxed_agent_changes_only_its_workspace_and_has_no_network(
    suite: Any, listening: int
) -> None:
    outside = suite.root / "planted.txt"
    suite.agent(
        PROBING_AGENT.format(suite=str(outside), port=listening),
        extra_config='sandbox = "bwrap"\n',
    )
    suite.write(
        "cases/box.yaml",
        "scenarios:\n  - id: s\n    user: probe\n"
        "    expect: [{file_exists: inside.txt}, {final_answer_contains: net=refused}]\n",
    )
    Path("/tmp/sounding-probe").unlink(missing_ok=True)
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    (trial,) = suite.trials(suite.runs()[0])
    answer = str(trial["record"]["final_answer"])  # type: ignore[index]
    assert "suite=refused" in answer and "net=refused" in answer, answer
    assert not outside.exists() and not Path("/tmp/sounding-probe").exists()


def test_a_case_with_services_keeps_the_network_in_the_sandbox(suite: Any, listening: int) -> None:
    suite.agent(
        PROBING_AGENT.format(suite=str(suite.root / "x"), port=listening),
        extra_config='sandbox = "bwrap"\n',
    )
    suite.write(
        "cases/box.yaml",
        "services: [{name: mock, type: http_mock}]\n"
        "scenarios:\n  - {id: s, user: probe, expect: [{final_answer_contains: net=reached}]}\n",
    )
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_sandbox_asked_for_and_unavailable_refuses_the_run(
    suite: Any, sounding_process: Any
) -> None:
    """In a process of its own: whether bwrap is installed is looked up once a process."""
    suite.agent("print('x')", extra_config='sandbox = "bwrap"\n')
    suite.write("cases/box.yaml", "scenarios:\n  - {id: s, user: hi}\n")
    done = sounding_process("run", str(suite.root), env={**os.environ, "PATH": "/nonexistent"})
    assert done.returncode == 2, done.stdout + done.stderr
    message = " ".join(done.stderr.split())
    assert "bubblewrap (bwrap) is not installed" in message and "never falls back" in message
    assert not (suite.root / "results").exists()


def test_nothing_a_sandboxed_agent_starts_outlives_a_killed_sounding(suite: Any) -> None:
    seconds = f"300.{secrets.randbelow(10**6):06d}"  # this test's sleepers, none other's
    suite.agent(
        f"""
        import subprocess, sys, time
        sys.stdin.read()
        daemon = subprocess.Popen(["sleep", "{seconds}"], start_new_session=True)
        open("started", "w").write("yes")  # in its workspace: all it may write
        time.sleep(300)
        """,
        extra_config='sandbox = "bwrap"\n',
    )
    suite.write("cases/box.yaml", "scenarios:\n  - {id: s, user: hi, timeout: 600}\n")
    process = suite.start()
    try:
        deadline = time.monotonic() + 30
        while not list(suite.root.glob("results/*/trials/*/*/*/workspace/started")):
            assert time.monotonic() < deadline, "the agent never started"
            time.sleep(0.05)
        sleepers = _sleepers(seconds)
        assert sleepers, f"no sleep {seconds} is running"
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # sounding, as `kill -9` would
        process.communicate(timeout=10)
    deadline = time.monotonic() + 10
    while _sleepers(seconds) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _sleepers(seconds), "a process the agent started outlived sounding"


def _sleepers(seconds: str) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if command[:2] == [b"sleep", seconds.encode()]:
                found.add(int(entry.name))
    return found
