"""The `http_mock` service: a real HTTP server on 127.0.0.1 that answers from routes.

Every request is recorded: method, path and time always (what `http_except` needs);
with `record: true` also the query, headers, body text and parsed JSON body (what
`http_mock_assertions` reads). The server is a threading HTTP server in a thread of
this process.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sounding._files import loads
from sounding.services._base import (
    LoopbackServer,
    RunningService,
    ServiceEvidence,
    SpecModel,
    StartContext,
    env_prefix,
)

_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


class Reply(BaseModel):
    """What the mock answers: a status, a JSON value (`json:`) or a text `body:`, headers."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    status: int = Field(default=200, ge=100, le=599)
    payload: Any = Field(default=None, alias="json")
    body: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_body(self) -> Reply:
        if "payload" in self.model_fields_set and self.body is not None:
            raise ValueError("give either json: or body:, not both")
        return self

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        """The bytes to send and the headers, Content-Type set from the kind of body."""
        if "payload" in self.model_fields_set:
            data, kind = json.dumps(self.payload).encode(), "application/json"
        else:
            data, kind = (self.body or "").encode(), "text/plain; charset=utf-8"
        return data, {"Content-Type": kind, **self.headers}


class Route(Reply):
    """One answer for one method and path (`*` in a path matches anything)."""

    method: str = Field(default="*", pattern=r"^(\*|[A-Za-z]+)$")
    path: str = Field(pattern=r"^/")

    def matches(self, method: str, path: str) -> bool:
        if self.method != "*" and self.method.upper() != method:
            return False
        return fnmatch.fnmatchcase(path, self.path) if "*" in self.path else path == self.path


class HttpMockSpec(SpecModel):
    """`{name, type: http_mock, routes?, default_response?, record?}` as written in a case."""

    type: Literal["http_mock"]
    routes: list[Route] = Field(default_factory=list)
    default_response: Reply | int | None = None
    record: bool = False

    def reply_for(self, method: str, path: str) -> Reply:
        for route in self.routes:
            if route.matches(method, path):
                return route
        if isinstance(self.default_response, int):
            return Reply(status=self.default_response)
        if self.default_response is not None:
            return self.default_response
        missing = f"mock '{self.name}' has no route for {method} {path}"
        return Reply(status=404, payload={"error": missing})


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 (so `Expect: 100-continue` is answered), one request per connection."""

    server: LoopbackServer
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        body = self._read_body()
        path = urlsplit(self.path).path
        self.server.owner.keep_request(self.command, self.path, self._headers(), body)
        reply = self.server.owner.spec.reply_for(self.command, path)
        data, headers = reply.encoded()
        self.send_response(reply.status)
        sizes = {"Content-Length": str(len(data)), "Connection": "close"}
        for name, value in {**headers, **sizes}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _headers(self) -> dict[str, str]:
        """Each header once, a repeated one's values joined by commas as HTTP allows."""
        return {name: ", ".join(self.headers.get_all(name) or []) for name in self.headers}

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunks()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunks(self) -> bytes:
        parts = []
        while (size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)) > 0:
            parts.append(self.rfile.read(size))
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return b"".join(parts)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: requests are recorded, not logged to the harness's stderr."""


for _method in _METHODS:
    setattr(_Handler, f"do_{_method}", _Handler._answer)


class HttpMockService(RunningService):
    """A started mock: its server thread and what it recorded."""

    def __init__(self, spec: HttpMockSpec) -> None:
        self.name, self.type, self.spec = spec.name, "http_mock", spec
        self._requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = LoopbackServer(_Handler, self, f"http_mock {spec.name}")
        self.port: int = self._server.port

    @property
    def url(self) -> str:
        return self._server.url

    def keep_request(self, method: str, target: str, headers: dict[str, str], body: bytes) -> None:
        parts = urlsplit(target)
        entry: dict[str, Any] = {"method": method, "path": parts.path, "time": time.time()}
        if self.spec.record:
            text = body.decode("utf-8", "replace")
            entry.update(query=parse_qs(parts.query, keep_blank_values=True), headers=headers)
            entry["body"] = text
            if text.strip():
                with contextlib.suppress(ValueError):
                    entry["json"] = loads(text)
        with self._lock:
            self._requests.append(entry)

    def env(self) -> dict[str, str]:
        return {f"{env_prefix(self.name)}_URL": self.url}

    def evidence(self) -> ServiceEvidence:
        url = None if self._server.closing.is_set() else self.url
        with self._lock:
            requests = list(self._requests)
        details = {"record": self.spec.record, "port": self.port, "requests": requests}
        return ServiceEvidence(self.name, "http_mock", url, details)

    def stop(self) -> None:
        self._server.stop()


def start_http_mock(spec: HttpMockSpec, context: StartContext) -> HttpMockService:
    """Start the mock's server on a free port of 127.0.0.1, in a thread of this process."""
    return HttpMockService(spec)
