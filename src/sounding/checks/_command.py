"""A command run in the final workspace, judged by its exit code.

Like every process a check starts (`custom` scripts too), it runs by
`sounding._process.run_bounded`: in a process group of its own, killed whole when the
command ends or times out, so a check never leaves a process behind.
"""

from __future__ import annotations

import os

from pydantic import Field, field_validator

from sounding._process import Finished, run_bounded
from sounding.checks._base import CheckContext, CheckResult, Params, cut
from sounding.checks._paths import NO_WORKSPACE
from sounding.checks._registry import Reads, registry

TAIL_BYTES = 4096
"""How much of the end of stdout and stderr a result keeps."""

_KEPT = TAIL_BYTES + 1  # a byte more than is shown: `tail` then sees that it was cut


def tail(data: bytes, size: int = TAIL_BYTES) -> str:
    """The end of some output as text, marked when cut."""
    text = data[-size:].decode("utf-8", errors="replace")
    return f"[...]{text}" if len(data) > size else text


def last_line(data: bytes) -> str:
    """The last non-empty line of some output, shortened for a one-line reason."""
    lines = [line.strip() for line in tail(data, 1024).splitlines() if line.strip()]
    return cut(lines[-1], 160) if lines else ""


def ended(finished: Finished) -> str:
    """How a process ended, in words: `exited with 1`, `was killed by signal 9`."""
    if finished.signal is not None:
        return f"was killed by signal {finished.signal}"
    return f"exited with {finished.returncode}"


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


@registry.check(
    "command_exit", CommandParams, family="command", reads=Reads.WORKSPACE, shorthand="command"
)
def command_exit(params: CommandParams, context: CheckContext) -> CheckResult:
    """`sh -c command` in the final workspace ends with the expected exit code."""
    workspace = context.evidence.workspace
    if workspace is None:
        return CheckResult.unjudged(NO_WORKSPACE)
    limit = params.timeout or context.timeout
    env = {**os.environ, **(context.evidence.extra.get("env") or {})}
    try:
        finished = run_bounded(
            ["sh", "-c", params.command], cwd=workspace, timeout=limit, limit=_KEPT, env=env
        )
    except OSError as exc:
        return CheckResult.error(f"could not start 'sh' in {workspace}: {exc.strerror or exc}")
    output = {"stdout": tail(finished.stdout), "stderr": tail(finished.stderr)}
    if finished.timed_out:
        return CheckResult.error(
            f"command '{params.command}' timed out after {seconds(limit)}", **output
        )
    code = finished.returncode
    said = last_line(finished.stderr) or last_line(finished.stdout)
    reason = f"command '{params.command}' {ended(finished)}"
    if code != params.exit_code:
        reason += f", expected {params.exit_code}" + (f": {said}" if said else "")
    return CheckResult.verdict(code == params.exit_code, reason, exit_code=code, **output)
