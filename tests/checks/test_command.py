"""command_exit: real `sh -c` processes in a temporary workspace."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from sounding.checks import CheckContext, CheckResult, Evidence, Status, registry
from sounding.record import RunRecord


def check(raw: Any, workspace: Path | None, timeout: float = 10.0) -> CheckResult:
    kind = registry.get("command_exit")
    evidence = Evidence(record=RunRecord(), workspace=workspace)
    return kind.run(kind.parse(raw), CheckContext(evidence=evidence, timeout=timeout))


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_a_command_that_exits_0_passes(tmp_path: Path) -> None:
    result = check("true", tmp_path)
    assert result.status is Status.PASSED
    assert result.details["exit_code"] == 0


def test_the_command_runs_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("here")
    assert check({"command": "test -f marker.txt"}, tmp_path).status is Status.PASSED


def test_an_expected_non_zero_exit_code_passes(tmp_path: Path) -> None:
    assert check({"command": "exit 3", "exit_code": 3}, tmp_path).status is Status.PASSED


def test_a_wrong_exit_code_fails_with_the_output(tmp_path: Path) -> None:
    command = "echo 'collected 4 items'; echo '2 failed, 2 passed' >&2; exit 1"
    result = check(command, tmp_path)
    assert result.status is Status.FAILED
    assert result.reason == f"command '{command}' exited with 1, expected 0: 2 failed, 2 passed"
    assert "collected 4 items" in result.details["stdout"]
    assert "2 failed, 2 passed" in result.details["stderr"]


def test_long_output_keeps_only_its_end(tmp_path: Path) -> None:
    result = check("seq 1 20000; exit 1", tmp_path)
    assert result.details["stdout"].startswith("[...]")
    assert result.details["stdout"].rstrip().endswith("20000")
    assert len(result.details["stdout"]) < 5000


def test_a_timeout_is_an_error_and_kills_the_whole_group(tmp_path: Path) -> None:
    command = "sleep 30 & echo $! > child.pid; wait"
    started = time.monotonic()
    result = check({"command": command, "timeout": 0.5}, tmp_path)
    assert time.monotonic() - started < 5
    assert result.status is Status.ERROR
    assert result.reason == f"command '{command}' timed out after 0.5s"
    child = int((tmp_path / "child.pid").read_text())
    assert wait_gone(child), f"child {child} survived the timeout"


def test_the_scenario_check_timeout_applies_without_a_param(tmp_path: Path) -> None:
    result = check("sleep 30", tmp_path, timeout=0.3)
    assert result.status is Status.ERROR
    assert "timed out after 0.3s" in result.reason


def test_a_background_child_left_behind_is_killed(tmp_path: Path) -> None:
    started = time.monotonic()
    result = check("sleep 30 & echo $! > child.pid", tmp_path)
    assert result.status is Status.PASSED
    assert time.monotonic() - started < 5
    child = int((tmp_path / "child.pid").read_text())
    assert wait_gone(child), f"child {child} outlived the check"


def test_a_daemon_left_holding_the_output_does_not_hold_the_check(tmp_path: Path) -> None:
    code = "import os, time; os.setsid(); open('daemon.pid', 'w').write(str(os.getpid()))"
    daemon = f'{sys.executable} -c "{code}; time.sleep(30)"'
    started = time.monotonic()
    try:
        waits = "until [ -s daemon.pid ]; do sleep 0.01; done"
        result = check(f"{daemon} & {waits}; echo checked", tmp_path)
        assert time.monotonic() - started < 2
        assert result.status is Status.PASSED
        assert result.details["stdout"] == "checked\n"
    finally:
        os.kill(int((tmp_path / "daemon.pid").read_text()), signal.SIGKILL)


def test_no_workspace_is_unjudged() -> None:
    result = check("true", None)
    assert result.status is Status.UNJUDGED


def test_a_workspace_that_vanished_is_an_error(tmp_path: Path) -> None:
    result = check("true", tmp_path / "gone")
    assert result.status is Status.ERROR
    assert "could not start" in result.reason


@pytest.mark.parametrize(
    "raw",
    [
        {"command": ""},
        {"command": "   "},
        {"command": "true", "exit_code": 256},
        {"command": "true", "timeout": 0},
        {"command": "true", "cwd": "src"},
        {},
    ],
)
def test_bad_params_are_refused(raw: Any) -> None:
    with pytest.raises(ValidationError):
        registry.get("command_exit").parse(raw)
