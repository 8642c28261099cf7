"""What every service type shares: its settings, its error, and the shape of a running one."""

from __future__ import annotations

import re
import selectors
import socket
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

SQL_SERVER_ENV = "SOUNDING_SQL_SERVER"
"""The environment variable that names the default SQL server (`servers["sql"]`)."""


@dataclass(frozen=True)
class ServiceEvidence:
    """What a service left for the checks: how to reach it now, and what it recorded.

    `url` is None when the service is gone (a server database dropped after the run);
    checks that need it then report `unjudged`, never `failed`.
    """

    name: str
    type: str
    url: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


class ServiceError(Exception):
    """A service that cannot be declared, started or stopped as asked.

    The message names the service and says how to fix it; `problems` lists every
    problem found when several were (a spec with three mistakes reports all three).
    """

    def __init__(self, message: str, *, problems: list[str] | None = None):
        self.problems = problems or [message]
        super().__init__(message)


class ServiceSettings(BaseModel):
    """How services run on this machine: the parts a suite file cannot know.

    `servers` maps a service name, or `"sql"` for every sql service, to a server URL
    (`postgresql://user@host:5432/admin_db`, `mysql://root@127.0.0.1:3306/`). A name
    entry wins over the service's own `server:` field, which wins over `"sql"`.
    `keep` leaves server databases in place after the trial, for re-scoring or a look.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    keep: bool = False
    servers: dict[str, str] = Field(default_factory=dict)

    def with_environment(self, environ: Mapping[str, str]) -> ServiceSettings:
        """These settings with `SOUNDING_SQL_SERVER` (when set) as the default sql server."""
        server = environ.get(SQL_SERVER_ENV, "").strip()
        if not server:
            return self
        return self.model_copy(update={"servers": {**self.servers, "sql": server}})


class SpecModel(BaseModel):
    """Base of a service declaration: unknown keys are refused, like check params."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")
    type: str


@dataclass(frozen=True)
class StartContext:
    """Where a service starts: the trial's folder, the suite's folder, the settings.

    `env` holds what the services started before this one handed to the agent, so a
    `process` can be pointed at a database declared above it.
    """

    trial_dir: Path
    suite_dir: Path
    settings: ServiceSettings
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def services_dir(self) -> Path:
        path = self.trial_dir / "services"
        path.mkdir(parents=True, exist_ok=True)
        return path


class RunningService(ABC):
    """One started service of one trial."""

    name: str
    type: str

    @abstractmethod
    def env(self) -> dict[str, str]:
        """The variables handed to the agent."""

    @abstractmethod
    def evidence(self) -> ServiceEvidence:
        """What checks read about this service now (after the agent ran)."""

    def stored(self, trial_dir: Path) -> dict[str, Any]:
        """A JSON-ready record of the evidence, for re-scoring from `trial_dir` later: by
        default its details without the URL, which leads nowhere once the trial ends."""
        return {"type": self.type, "url": None, "details": dict(self.evidence().details)}

    @abstractmethod
    def stop(self) -> None:
        """Stop the service and release what it holds; a second call does nothing."""


def env_prefix(name: str) -> str:
    """`SOUNDING_<NAME>`: the name upper-cased, anything not a letter or digit made `_`."""
    return "SOUNDING_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


class LoopbackServer(ThreadingHTTPServer):
    """A threading HTTP server on a free port of 127.0.0.1, served from a thread of this
    process until `stop()`. A byte on a wake socket ends its loop at once (where
    `serve_forever` would poll, and add its interval to every trial's teardown). Its
    handlers reach what started it as `self.server.owner`."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], owner: Any, name: str) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.owner = owner
        self.port: int = self.server_address[1]
        self.closing = threading.Event()
        self._wake = socket.socketpair()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get_request(self) -> tuple[socket.socket, Any]:
        """A connection that sends at once: a reply's head and body are two writes, and with
        Nagle's algorithm the second waits for the client's delayed ACK (40 ms a reply)."""
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet when the client went away mid-reply (an agent killed at its timeout): that
        is the trial's business, not a traceback on the harness's stderr."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def _serve(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self, selectors.EVENT_READ)
            selector.register(self._wake[0], selectors.EVENT_READ)
            while not self.closing.is_set():
                for key, _events in selector.select():
                    if key.fileobj is self and not self.closing.is_set():
                        self.handle_request()

    def stop(self) -> None:
        if self.closing.is_set():
            return
        self.closing.set()
        self._wake[1].send(b"x")
        self._thread.join()
        self.server_close()
        for end in self._wake:
            end.close()


CAPTURE_LIMIT = 64 << 20
"""Bytes an agent may send one capture in a trial, all its requests together: past it they
are refused (a 413), so no agent can fill sounding's memory, and what was kept stays within
what a stored file may hold."""


class LoopbackCapture:
    """A loopback server that keeps, in order, what one trial's agent sends it; stopped by
    `stop()` or at the end of a `with` block."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], name: str) -> None:
        self._kept: list[Any] = []
        self._lock = threading.Lock()
        self._received = 0
        self._server = LoopbackServer(handler, self, name)

    def admit(self, size: int) -> bool:
        """Whether `size` more bytes fit in what this capture takes (`CAPTURE_LIMIT`)."""
        with self._lock:
            if self._received + size > CAPTURE_LIMIT:
                return False
            self._received += size
            return True

    def keep(self, *items: Any) -> None:
        with self._lock:
            self._kept.extend(items)

    def kept(self) -> list[Any]:
        with self._lock:
            return list(self._kept)

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
