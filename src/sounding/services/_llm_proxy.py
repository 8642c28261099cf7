"""`[capture] llm`: a proxy on 127.0.0.1 between one trial's agent and its model API.

The agent's own client finds it through the variables the official SDKs read
(`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`), so an agent built on the `openai` or
`anthropic` SDK, or on a framework over them, is recorded with no change to its code.
Each request is passed to the upstream as it came (the agent's own API key included, which
is never kept) and each answer back as it comes, streamed or not; every exchange is kept:
the request's JSON, the answer's JSON (a stream put together from its events), the status
and the time it took. One proxy serves one trial, so every call it sees is that trial's.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from sounding._files import loads
from sounding.services._base import CAPTURE_LIMIT, LoopbackCapture, LoopbackServer

OPENAI_UPSTREAM = "https://api.openai.com/v1"
ANTHROPIC_UPSTREAM = "https://api.anthropic.com"
_PREFIXES = {"/openai": "openai", "/anthropic": "anthropic"}
_HOP = {"host", "content-length", "connection", "accept-encoding", "transfer-encoding"}


class LlmProxy(LoopbackCapture):
    """A started proxy: its server thread and the exchanges it passed, in order."""

    def __init__(
        self,
        upstreams: dict[str, str],
        *,
        replay: list[dict[str, Any]] | None = None,
        over_budget: Callable[[list[dict[str, Any]]], str | None] | None = None,
        timeout: float = 600.0,
    ) -> None:
        """`replay`: the exchanges of a cassette, answered in place of the upstream (which
        is never called); a request none of them answers is told to the agent as a 400 and
        listed in `unanswered`. `over_budget` says why the exchanges so far spent the
        trial's budget, if they did: every later request is then refused (a 400 saying so),
        which stops an agent's model loop."""
        import httpx  # with the first proxy, not with sounding

        self.upstreams = {api: url.rstrip("/") for api, url in upstreams.items()}
        self.client = httpx.Client(timeout=timeout)
        self.replay: dict[str, list[dict[str, Any]]] | None = None
        if replay is not None:
            self.replay = {}
            for recorded in replay:
                self.replay.setdefault(str(recorded.get("key")), []).append(recorded)
        self.unanswered: list[dict[str, Any]] = []
        self.over_budget = over_budget or (lambda exchanges: None)
        super().__init__(_Handler, "llm proxy")

    def env(self) -> dict[str, str]:
        """The variables the OpenAI and Anthropic SDKs read to find their API."""
        return {
            "OPENAI_BASE_URL": f"{self._server.url}/openai",
            "ANTHROPIC_BASE_URL": f"{self._server.url}/anthropic",
        }

    def exchanges(self) -> list[dict[str, Any]]:
        return self.kept()

    def stop(self) -> None:
        super().stop()
        self.client.close()


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackServer
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        proxy: LlmProxy = self.server.owner
        prefix = next((p for p in _PREFIXES if self.path.startswith(p + "/")), None)
        size = int(self.headers.get("Content-Length") or 0)
        if prefix is None:
            return self._plain(404, "not a model API request: ask under /openai or /anthropic")
        if not proxy.admit(size):
            return self._plain(413, f"a trial may send its model at most {CAPTURE_LIMIT} bytes")
        api, body = _PREFIXES[prefix], self.rfile.read(size)
        if (why := proxy.over_budget(proxy.exchanges())) is not None:
            return self._plain(400, f"sounding: the trial is over its budget ({why})")
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        headers["Accept-Encoding"] = "identity"  # passed on as it comes: nothing to unpack
        path = self.path[len(prefix) :]
        request = _json(body)
        key = request_key(path, body if request is None else request)
        exchange: dict[str, Any] = {"api": api, "path": path, "key": key, "request": request}
        started = time.monotonic()
        if proxy.replay is not None:
            answered = self._replayed(proxy, exchange)
        else:
            answered = self._forwarded(proxy, proxy.upstreams[api] + path, body, headers)
        if answered is None:
            return
        exchange["status"], exchange["content_type"], data = answered
        exchange["response"] = _answer(api, data, exchange["content_type"])
        exchange["raw"] = data.decode("utf-8", "replace")  # for a cassette; not in the record
        exchange["ms"] = round((time.monotonic() - started) * 1000, 1)
        proxy.keep(exchange)

    def _forwarded(
        self, proxy: LlmProxy, url: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, str, bytes] | None:
        request = proxy.client.build_request("POST", url, content=body, headers=headers)
        try:
            answer = proxy.client.send(request, stream=True)
        except Exception as exc:  # the upstream is down or refused us: say so to the agent
            self._plain(502, f"sounding's proxy could not reach {url}: {exc}")
            return None
        try:
            data = b"".join(self._relay(answer))
        finally:
            answer.close()
        return answer.status_code, answer.headers.get("content-type", ""), data

    def _replayed(self, proxy: LlmProxy, exchange: dict[str, Any]) -> tuple[int, str, bytes] | None:
        assert proxy.replay is not None
        recorded = proxy.replay.get(exchange["key"])
        if not recorded:
            proxy.unanswered.append(exchange)
            # 400, not 500: a client retries a 500, and no retry can find an answer
            self._plain(400, "sounding --llm replay: the cassette holds no answer to this request")
            return None
        answer = recorded.pop(0)
        status, kind = int(answer.get("status", 200)), str(answer.get("content_type", ""))
        data = str(answer.get("raw", "")).encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        return status, kind, data

    def _relay(self, answer: Any) -> Iterator[bytes]:
        """Pass the answer on as it comes (chunked), and yield what was passed."""
        self.send_response(answer.status_code)
        for name, value in answer.headers.items():
            if name.lower() not in _HOP and name.lower() != "content-encoding":
                self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in answer.iter_raw():
            if chunk:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                yield chunk
        self.wfile.write(b"0\r\n\r\n")

    def _plain(self, status: int, text: str) -> None:
        data = json.dumps({"error": {"message": text, "type": "sounding_proxy"}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")  # a body left unread ends the connection
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the exchanges are the trial's record, not the harness's log."""


def _json(data: bytes) -> Any:
    try:
        return loads(data)
    except ValueError:
        return None


def request_key(path: str, request: Any) -> str:
    """What identifies a request in a cassette: its path and its JSON, keys in order (or
    its bytes, for a body that is not JSON)."""
    if isinstance(request, bytes):
        text = request.decode(errors="replace")
    else:
        text = json.dumps(request, sort_keys=True)
    return hashlib.sha256(f"{path}\n{text}".encode()).hexdigest()[:32]


def _answer(api: str, data: bytes, content_type: str) -> Any:
    """The answer as one JSON document: as sent, or put together from its stream."""
    if "text/event-stream" not in content_type:
        return _json(data)
    events = []
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            events.append(_json(line[5:].strip().encode()))
    events = [e for e in events if isinstance(e, dict)]
    completed = [e["response"] for e in events if e.get("type") == "response.completed"]
    if completed:  # the Responses API: its last event holds the whole response
        return completed[-1]
    return _openai_stream(events) if api == "openai" else _anthropic_stream(events)


def _openai_stream(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """Chat-completion chunks as the completion they make: text and tool calls joined."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: dict[int, dict[str, Any]] = {}
    usage = next((c["usage"] for c in reversed(chunks) if c.get("usage")), None)
    for chunk in chunks:
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                message["content"] = (message["content"] or "") + delta["content"]
            for part in delta.get("tool_calls") or []:
                call = calls.setdefault(
                    part.get("index", 0), {"type": "function", "function": {"arguments": ""}}
                )
                call["id"] = part.get("id") or call.get("id", "")
                function = part.get("function") or {}
                call["function"]["name"] = function.get("name") or call["function"].get("name")
                call["function"]["arguments"] += function.get("arguments") or ""
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    model = next((c.get("model") for c in chunks if c.get("model")), None)
    return {"model": model, "choices": [{"index": 0, "message": message}], "usage": usage}


def _anthropic_stream(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Message-stream events as the message they make: blocks with their text and input."""
    message: dict[str, Any] = {"role": "assistant", "content": [], "usage": {}}
    partial: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            started = event.get("message") or {}
            message.update(model=started.get("model"), usage=dict(started.get("usage") or {}))
        elif kind == "content_block_start":
            message["content"].append(dict(event.get("content_block") or {}))
        elif kind == "content_block_delta" and message["content"]:
            block, delta = message["content"][-1], event.get("delta") or {}
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif delta.get("type") == "input_json_delta":
                index = len(message["content"]) - 1
                partial[index] = partial.get(index, "") + delta.get("partial_json", "")
        elif kind == "message_delta":
            message["usage"].update(event.get("usage") or {})
    for index, text in partial.items():
        message["content"][index]["input"] = _json(text.encode()) or {}
    return message
