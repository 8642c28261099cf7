"""The `process` service: any local program started per trial, on a port we allocate.

The command runs without a shell, in its own process group, from the suite's folder,
with its output in `<trial>/services/<name>.stdout.log` / `.stderr.log`. `{port}`,
`{suite_dir}` and `{trial_dir}` are replaced in the command, its env and its probe.
"""

from __future__ import annotations

import http.client
import os
import shlex
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sounding._process import poll, run_bounded, split_command, start, stop
from sounding.services._base import (
    RunningService,
    ServiceError,
    ServiceEvidence,
    SpecModel,
    StartContext,
    env_prefix,
)

STOP_GRACE = 3.0
"""Seconds a process group has to exit after SIGTERM before it gets SIGKILL."""

_PROBE_INTERVAL = 0.05
_PROBE_OUTPUT = 4096  # bytes of the end of a probe command's output kept, to show


class WaitFor(BaseModel):
    """The readiness probe: exactly one of a TCP connect, an HTTP GET, or a command."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tcp: bool | None = None
    http: str | None = Field(default=None, pattern=r"^/")
    command: list[str] | str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> WaitFor:
        given = [k for k in ("tcp", "http", "command") if getattr(self, k) not in (None, False)]
        if len(given) != 1:
            raise ValueError("give exactly one of tcp: true, http: /path, command: [...]")
        return self


class ProcessSpec(SpecModel):
    """`{name, type: process, command, env?, wait_for?, deadline?, url?}` as in a case."""

    type: Literal["process"]
    command: list[str] | str
    env: dict[str, str] = Field(default_factory=dict)
    wait_for: WaitFor | None = None
    deadline: float = Field(default=10.0, gt=0)
    url: str = "http://127.0.0.1:{port}"

    def uses_port(self) -> bool:
        texts = [self.command if isinstance(self.command, str) else " ".join(self.command)]
        return any("{port}" in text for text in [*texts, *self.env.values()])


def process_problems(spec: ProcessSpec) -> list[str]:
    found: list[str] = []
    probe = spec.wait_for
    probe_command = probe.command if probe is not None else None
    for where, command in (("command", spec.command), ("wait_for.command", probe_command)):
        try:
            if command is not None and not split_command(command):
                found.append(f"{where} is empty; give the program to run")
        except ValueError as exc:
            found.append(f"{where} cannot be split ({exc}); give it as a list")
    if probe is not None and (probe.tcp or probe.http) and not spec.uses_port():
        found.append("wait_for probes a port but the command never uses {port}; pass {port} to it")
    return found


class ProcessService(RunningService):
    """A started program: its process group, its port, its logs."""

    def __init__(self, spec: ProcessSpec, context: StartContext) -> None:
        self.name, self.type, self.spec = spec.name, "process", spec
        self.port = free_port()
        self.logs = context.services_dir / spec.name
        self._places = {
            "{suite_dir}": str(context.suite_dir),
            "{trial_dir}": str(context.trial_dir),
            "{port}": str(self.port),
        }
        self._cwd = context.suite_dir
        own = {key: self._fill(value) for key, value in spec.env.items()}
        self._env = {**os.environ, **context.env, **own}
        self.command = [self._fill(part) for part in split_command(spec.command)]
        self._stopped = False
        self._process = self._launch()

    def _fill(self, text: str) -> str:
        for key, value in self._places.items():
            text = text.replace(key, value)
        return text

    @property
    def url(self) -> str:
        return self._fill(self.spec.url)

    def _launch(self) -> subprocess.Popen[bytes]:
        """Start the program; its log files are its own (this process keeps no handle)."""
        stdout, stderr = (f"{self.logs}.{kind}.log" for kind in ("stdout", "stderr"))
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            try:
                return start(self.command, cwd=self._cwd, env=self._env, stdout=out, stderr=err)
            except OSError as exc:
                raise ServiceError(
                    f"process service '{self.name}': cannot start {self.command[0]!r}: "
                    f"{exc.strerror or exc}; check the command (it runs from {self._cwd}, "
                    "no shell)",
                ) from None

    def wait_ready(self) -> None:
        """Probe until ready; past `deadline`, ServiceError with the last failure and stderr.
        Without `wait_for`, a program given a {port} is probed by a TCP connect."""
        probe = self.spec.wait_for or (WaitFor(tcp=True) if self.spec.uses_port() else None)
        if probe is None:
            return
        check = self._prober(probe)
        deadline = time.monotonic() + self.spec.deadline
        while True:
            if (code := poll(self._process)) is not None:
                self._fail(f"exited with code {code} before it was ready")
            failure = check(deadline)
            if failure is None:
                return
            if time.monotonic() >= deadline:
                self._fail(f"was not ready after {self.spec.deadline:g}s; last probe: {failure}")
            time.sleep(_PROBE_INTERVAL)

    def _prober(self, probe: WaitFor) -> Callable[[float], str | None]:
        if probe.http is not None:
            path = self._fill(probe.http)
            return lambda _deadline: _http_probe(self.port, path)
        if probe.command is not None:
            command = [self._fill(part) for part in split_command(probe.command)]
            return lambda deadline: _command_probe(command, self._env, self._cwd, deadline)
        return lambda _deadline: _tcp_probe(self.port)

    def _fail(self, what: str) -> None:
        self.stop()
        stderr = self._stderr_tail()
        shown = f"\nits stderr ends with:\n{stderr}" if stderr else " (its stderr is empty)"
        raise ServiceError(
            f"process service '{self.name}' ({shlex.join(self.command)}) {what}; "
            f"fix the command or raise deadline:{shown}",
        )

    def _stderr_tail(self) -> str:
        try:
            text = Path(f"{self.logs}.stderr.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return tail(text)

    def env(self) -> dict[str, str]:
        prefix = env_prefix(self.name)
        return {f"{prefix}_URL": self.url, f"{prefix}_PORT": str(self.port)}

    def evidence(self) -> ServiceEvidence:
        code = poll(self._process)
        details: dict[str, Any] = {"port": self.port, "command": self.command}
        if code is not None and not self._stopped:
            details["exited"] = code
            details["stderr_tail"] = self._stderr_tail()
        return ServiceEvidence(self.name, "process", None if self._stopped else self.url, details)

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        stop(self._process, STOP_GRACE)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tail(text: str, lines: int = 15) -> str:
    """The last lines of a program's output, for an error message."""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _tcp_probe(port: int) -> str | None:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return None
    except OSError as exc:
        return f"tcp 127.0.0.1:{port}: {exc.strerror or exc}"


def _http_probe(port: int, path: str) -> str | None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1.0)
    try:
        connection.request("GET", path)
        status = connection.getresponse().status
    except (OSError, http.client.HTTPException) as exc:
        return f"GET {path}: {getattr(exc, 'strerror', None) or exc or type(exc).__name__}"
    finally:
        connection.close()
    return None if 200 <= status < 400 else f"GET {path} answered {status}"


def _command_probe(
    command: list[str], env: dict[str, str], cwd: Path, deadline: float
) -> str | None:
    limit = max(0.1, deadline - time.monotonic())
    try:
        done = run_bounded(command, cwd=cwd, timeout=limit, limit=_PROBE_OUTPUT, env=env)
    except OSError as exc:
        return f"{command[0]!r} cannot run: {exc.strerror or exc}"
    if done.timed_out:
        return f"{shlex.join(command)} did not finish in {limit:.1f}s"
    if done.returncode == 0:
        return None
    output = tail((done.stderr or done.stdout).decode("utf-8", "replace"), 3)
    return f"{shlex.join(command)} exited {done.returncode}" + (f": {output}" if output else "")


def start_process(spec: ProcessSpec, context: StartContext) -> ProcessService:
    """Start the program and wait until its probe answers (or raise ServiceError)."""
    service = ProcessService(spec, context)
    service.wait_ready()
    return service
