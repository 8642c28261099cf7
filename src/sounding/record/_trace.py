"""`Trace`: how an agent written in Python writes its run as JSON Lines events.

The writer of the format `parse_record(..., "jsonl")` reads. Each event is one line,
appended and flushed by one write as soon as it happens, so an agent killed at any moment
leaves every finished line readable. Without a path (none given, `SOUNDING_TRACE` unset)
every method does nothing, so an agent can keep its tracing calls when it runs outside
sounding.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

TRACE_ENV = "SOUNDING_TRACE"


class Trace:
    """Appends run events to a JSON Lines file; see docs/run-record.md for every event.

    `Trace()` writes to the path in `SOUNDING_TRACE`; `Trace(path)` to `path`. As a context
    manager it closes the file on exit and, when the block raised, first records the
    exception as an `error` event (the exception still propagates).
    """

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, clock: Callable[[], float] = time.time
    ) -> None:
        target = path if path is not None else os.environ.get(TRACE_ENV) or None
        self.path = Path(target) if target is not None else None
        self._clock = clock
        self._lock = threading.Lock()
        self._file: BinaryIO | None = self.path.open("ab") if self.path is not None else None
        self._closed = False

    @property
    def enabled(self) -> bool:
        """True when events go to a file."""
        return self._file is not None

    # ---- the conversation ----------------------------------------------------------------

    def task(self, prompt: str) -> None:
        """The task the agent was given; it opens the first turn."""
        self.event("task", prompt=prompt)

    def user(self, text: str) -> None:
        """A user message; it opens the next turn."""
        self.event("user", text=text)

    def assistant(self, text: str) -> None:
        """Text the agent said along the way (the last one is the answer if no `final`)."""
        self.event("assistant", text=text)

    def final(self, text: str) -> None:
        """The agent's final answer."""
        self.event("final", text=text)

    def error(self, message: str) -> None:
        """Something that stopped the agent from finishing."""
        self.event("error", message=message)

    # ---- tools ---------------------------------------------------------------------------

    def tool_call(
        self, name: str, args: Mapping[str, Any] | None = None, id: str | None = None
    ) -> str:
        """A tool call about to run; returns its id (generated unless given)."""
        call_id = id if id is not None else f"call_{uuid.uuid4().hex[:12]}"
        self.event("tool_call", id=call_id, name=name, args=dict(args or {}))
        return call_id

    def tool_result(self, id: str, result: Any, is_error: bool = False) -> None:
        """What the call `id` returned: text, or any JSON value (stored as JSON text)."""
        self.event("tool_result", id=id, result=result, is_error=is_error)

    def passage(self, id: str, text: str = "", source: str | None = None) -> None:
        """A passage a retriever returned (for citation checks)."""
        self.event("passage", id=id, text=text, source=source)

    def hook(
        self,
        name: str,
        decision: str | None = None,
        reason: str | None = None,
        tool_call_id: str | None = None,
    ) -> None:
        """A guard that ran and what it decided (allow, deny, ...)."""
        self.event("hook", name=name, decision=decision, reason=reason, tool_call_id=tool_call_id)

    def approval(
        self,
        id: str | None = None,
        tool: str | None = None,
        tool_call_id: str | None = None,
        by: str | None = None,
    ) -> None:
        """A recorded approval, of one call (`tool_call_id`) or of a tool in general."""
        self.event("approval", id=id, tool=tool, tool_call_id=tool_call_id, by=by)

    def audit(self, kind: str, details: Mapping[str, Any] | None = None) -> None:
        """A side effect the agent reports itself (a file write, an HTTP call, ...)."""
        self.event("audit", kind=kind, details=dict(details or {}))

    def usage(
        self,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cost_usd: float | None = None,
        model: str | None = None,
    ) -> None:
        """Tokens and cost of one model call; the record adds them up."""
        self.event(
            "usage",
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost_usd,
            model=model,
        )

    def meta(self, **fields: Any) -> None:
        """Anything else about the run (`model`, `seed`, or keys kept as metadata)."""
        self.event("meta", **fields)

    # ---- writing -------------------------------------------------------------------------

    def event(self, event_type: str, /, **fields: Any) -> None:
        """Write one event line of `event_type` now; fields that are None are left out."""
        if self._closed:
            raise ValueError(f"Trace({self.path}) is closed; write events before closing it")
        if self._file is None:
            return
        event = {"type": event_type, "ts": self._clock()}
        event.update((k, v) for k, v in fields.items() if v is not None)
        line = json.dumps(event, ensure_ascii=False, default=str) + "\n"
        with self._lock:  # the buffer is empty before each line and flushed after it
            self._file.write(line.encode("utf-8"))
            self._file.flush()

    def close(self) -> None:
        self._closed = True
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Trace:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None and not self._closed:
            self.error(f"{type(exc).__name__}: {exc}")
        self.close()
