"""The running `http_mock`: a threading HTTP server on 127.0.0.1 and what it recorded.

Apart from `_http_mock` (the case's declaration) so that `http.server`, and the `email`
and `http.client` modules it pulls in, load only when a trial starts a mock.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from sounding._files import loads
from sounding.services._base import RunningService, ServiceEvidence, StartContext, env_prefix
from sounding.services._http_mock import HttpMockSpec

_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mock: HttpMockService) -> None:
        self.mock = mock
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 (so `Expect: 100-continue` is answered), one request per connection."""

    server: _Server
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        body = self._read_body()
        path = urlsplit(self.path).path
        self.server.mock.keep_request(self.command, self.path, dict(self._headers()), body)
        reply = self.server.mock.spec.reply_for(self.command, path)
        data, headers = reply.encoded()
        self.send_response(reply.status)
        sizes = {"Content-Length": str(len(data)), "Connection": "close"}
        for name, value in {**headers, **sizes}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _headers(self) -> dict[str, str]:
        merged: dict[str, str] = {}
        for name in dict.fromkeys(self.headers.keys()):
            merged[name] = ", ".join(self.headers.get_all(name) or [])
        return merged

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
        self._server = _Server(self)
        self.port: int = self._server.server_address[1]
        self._closing = threading.Event()
        self._wake = socket.socketpair()
        self._thread = threading.Thread(
            target=self._serve, name=f"http_mock {spec.name}", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        """Serve until stop(): a loop that a byte on the wake socket ends at once."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._server, selectors.EVENT_READ)
            selector.register(self._wake[0], selectors.EVENT_READ)
            while not self._closing.is_set():
                for key, _events in selector.select():
                    if key.fileobj is self._server and not self._closing.is_set():
                        self._server.handle_request()

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

    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._requests)

    def env(self) -> dict[str, str]:
        return {f"{env_prefix(self.name)}_URL": self.url}

    def evidence(self) -> ServiceEvidence:
        url = None if self._closing.is_set() else self.url
        return ServiceEvidence(self.name, "http_mock", url, self._details())

    def _details(self) -> dict[str, Any]:
        return {"record": self.spec.record, "port": self.port, "requests": self.requests()}

    def stored(self, trial_dir: Path) -> dict[str, Any]:
        return {"type": "http_mock", "url": None, "details": self._details()}

    def stop(self) -> None:
        if self._closing.is_set():
            return
        self._closing.set()
        self._wake[1].send(b"x")
        self._thread.join()
        self._server.server_close()
        for end in self._wake:
            end.close()


def start_http_mock(spec: HttpMockSpec, context: StartContext) -> HttpMockService:
    """Start the mock's server on a free port of 127.0.0.1, in a thread of this process."""
    return HttpMockService(spec)
