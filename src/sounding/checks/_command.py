"""A command run in the final workspace, judged by its exit code.

`run_in_group` is also how `custom` runs its script: every process a check starts lives in
its own process group, and the whole group is killed when the check is done or times out,
so a check never leaves a process behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pydantic import Field, field_validator

from sounding.checks._base import CheckContext, CheckResult, Params
from sounding.checks._registry import registry

TAIL_BYTES = 4096
"""How much of the end of stdout and stderr a result keeps."""

_DRAIN_SECONDS = 5.0


@dataclass(frozen=True)
class Finished:
    """How a process ended. `exit_code` is None when it timed out and was killed."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    timeout: float

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


class _Reader(threading.Thread):
    """Reads one pipe to its end, keeping at most `limit` bytes (the last ones)."""

    def __init__(self, pipe: IO[bytes], limit: int) -> None:
        super().__init__(daemon=True)
        self.pipe, self.limit = pipe, limit
        self.data = bytearray()
        self.truncated = False

    def run(self) -> None:
        with self.pipe:
            for chunk in iter(lambda: self.pipe.read(65536), b""):
                self.data += chunk
                if len(self.data) > self.limit:
                    del self.data[: len(self.data) - self.limit]
                    self.truncated = True


def _feed(pipe: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError), pipe:  # the process stopped reading: its output says why
        pipe.write(data)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone
        os.killpg(pgid, signal.SIGKILL)


def _ended_within(pid: int, timeout: float) -> bool:
    """Wait up to `timeout` for the process to end, leaving it unreaped (its id stays taken)."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.05)
    return True


def run_in_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    stdin: bytes | None = None,
    limit: int = 1 << 20,
    env: Mapping[str, str] | None = None,
) -> Finished:
    """Run `argv` in a new session; kill its whole process group when it ends or times out."""
    import subprocess  # with a check that runs something, not with sounding

    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stderr is not None
    out, err = _Reader(process.stdout, limit), _Reader(process.stderr, limit)
    out.start()
    err.start()
    if stdin is not None and process.stdin is not None:
        threading.Thread(target=_feed, args=(process.stdin, stdin), daemon=True).start()
    try:
        ended = _ended_within(process.pid, timeout)
    finally:
        _kill_group(process.pid)  # before reaping: the group id cannot have been reused yet
        code = process.wait()
    exit_code = code if ended else None
    drained_by = time.monotonic() + _DRAIN_SECONDS  # a process that left the group may hold a pipe
    for reader in (out, err):
        reader.join(max(0.0, drained_by - time.monotonic()))
    return Finished(exit_code, bytes(out.data), bytes(err.data), out.truncated, timeout)


def tail(data: bytes, size: int = TAIL_BYTES) -> str:
    """The end of some output as text, marked when cut."""
    text = data[-size:].decode("utf-8", errors="replace")
    return f"[...]{text}" if len(data) > size else text


def last_line(data: bytes) -> str:
    """The last non-empty line of some output, shortened for a one-line reason."""
    lines = [line.strip() for line in tail(data, 1024).splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1]
    return line if len(line) <= 160 else f"{line[:157]}..."


def ended(exit_code: int | None) -> str:
    """How a process ended, in words: `exited with 1`, `was killed by signal 9`."""
    if exit_code is not None and exit_code < 0:
        return f"was killed by signal {-exit_code}"
    return f"exited with {exit_code}"


def seconds(value: float) -> str:
    return f"{value:g}s"


class CommandParams(Params):
    """A shell command, the exit code it must end with, and its own time limit if any."""

    command: str = Field(min_length=1)
    exit_code: int = Field(default=0, ge=0, le=255)
    timeout: float | None = Field(default=None, gt=0)

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the command is blank; give a shell command such as 'pytest -q'")
        return value


@registry.check("command_exit", CommandParams, family="command", shorthand="command")
def command_exit(params: CommandParams, context: CheckContext) -> CheckResult:
    """`sh -c command` in the final workspace ends with the expected exit code."""
    workspace = context.evidence.workspace
    if workspace is None:
        return CheckResult.unjudged("the workspace was not kept for this trial")
    limit = params.timeout or context.timeout
    try:
        finished = run_in_group(
            ["sh", "-c", params.command],
            cwd=workspace,
            timeout=limit,
            env=context.evidence.extra.get("env"),
        )
    except OSError as exc:
        return CheckResult.error(f"could not start 'sh' in {workspace}: {exc.strerror or exc}")
    output = {"stdout": tail(finished.stdout), "stderr": tail(finished.stderr)}
    if finished.timed_out:
        return CheckResult.error(
            f"command '{params.command}' timed out after {seconds(limit)}", **output
        )
    code = finished.exit_code
    said = last_line(finished.stderr) or last_line(finished.stdout)
    reason = f"command '{params.command}' {ended(code)}"
    if code != params.exit_code:
        reason += f", expected {params.exit_code}" + (f": {said}" if said else "")
    return CheckResult.verdict(code == params.exit_code, reason, exit_code=code, **output)
