"""Read the event stream an agent writes to `SOUNDING_TRACE`: one JSON object per line.

Each event is validated against `EVENT_FIELDS` (an unknown type or field is refused with
its line and the closest name, so a typo never drops data silently), then applied to the
record by one handler per type. See docs/run-record.md.
"""

from __future__ import annotations

import json
from typing import Any

from sounding._files import loads
from sounding.record._build import Attach, RecordBuilder, RecordError, dump_result
from sounding.record._events import META_FIELDS, validate_event
from sounding.record._model import ModelUsage, RunRecord, add_usage


def parse_jsonl(text: str, source: str) -> RunRecord:
    """Read an event stream into a record; a malformed line is a `RecordError` naming it."""
    reader = _Reader(source)
    for number, event in _events(text, source, reader):
        reader.read(event, number)
    return reader.finish()


def _events(text: str, source: str, reader: _Reader) -> list[tuple[int, Any]]:
    """(line number, decoded value) of every non-blank line, all decoded before any is read.

    An unfinished last line (a killed agent, cut mid-write) is dropped and its number kept
    in the record's metadata; any other line that is not JSON is an error naming it.
    """
    lines = text.splitlines()
    unfinished = not text.endswith(("\n", "\r"))
    events = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            events.append((number, loads(line)))
        except json.JSONDecodeError as exc:
            if not (unfinished and number == len(lines)):
                raise RecordError(
                    source,
                    f"not JSON: {exc.msg} (column {exc.colno})",
                    "each line must be one JSON object, such as "
                    '{"type": "tool_call", "name": "search", "args": {"q": "x"}}',
                    line=number,
                ) from None
            reader.builder.metadata["truncated_line"] = number
    return events


class _Reader:
    """Turns validated events into builder calls, one handler per event type."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.builder = RecordBuilder(source, "jsonl")
        self.usage: dict[str, Any] = {"input_tokens": 0, "output_tokens": 0}
        self.by_model: dict[str, ModelUsage] = {}
        self.lists: dict[str, list[dict[str, Any]]] = {
            key: [] for key in ("passages", "hooks", "approvals", "audit")
        }
        self.errors: list[str] = []
        self.stamps: list[float] = []

    def read(self, event: Any, number: int) -> None:
        kind = validate_event(event, number, self.source)
        ts = event.get("ts")
        if ts is not None:
            self.stamps.append(ts)
        getattr(self, f"_{kind}")(event, number)  # a handler for each of EVENT_TYPES

    def finish(self) -> RunRecord:
        b = self.builder
        b.fields.update(self.lists)
        b.fields["usage"] = {**self.usage, "by_model": self.by_model}
        if self.errors:
            b.fields["error"] = "\n".join(self.errors)
        b.fields.setdefault("model", self.usage.get("model"))
        if "duration_ms" not in b.fields and len(self.stamps) >= 2:
            b.fields["duration_ms"] = (max(self.stamps) - min(self.stamps)) * 1000.0
        return b.build()

    # ---- conversation --------------------------------------------------------------------

    def _task(self, event: dict[str, Any], number: int) -> None:
        b = self.builder
        b.task = event["prompt"]
        if b.turn == 0:
            b.user(event["prompt"])

    def _user(self, event: dict[str, Any], number: int) -> None:
        self.builder.user(event["text"])

    def _assistant(self, event: dict[str, Any], number: int) -> None:
        self.builder.message("assistant", event["text"])

    def _final(self, event: dict[str, Any], number: int) -> None:
        b = self.builder
        b.final = event["text"]
        last = b.last_assistant()
        if last is None or b.messages[last]["content"] != b.final:
            b.message("assistant", b.final)

    def _error(self, event: dict[str, Any], number: int) -> None:
        self.errors.append(event["message"])

    def _meta(self, event: dict[str, Any], number: int) -> None:
        for key, value in event.items():
            if key in ("type", "ts"):
                continue
            check = META_FIELDS.get(key)
            if check is None:
                self.builder.metadata[key] = value
            elif check.test(value):
                self.builder.fields[key] = value
            else:
                raise RecordError(
                    self.source,
                    f"meta '{key}' must be {check.kind}, not {json.dumps(value)[:60]}",
                    "fix the value, or put it under another key to keep it as metadata",
                    line=number,
                )

    # ---- tools ---------------------------------------------------------------------------

    def _tool_call(self, event: dict[str, Any], number: int) -> None:
        b = self.builder
        call_id = f"call-{len(b.calls) + 1}" if event.get("id") is None else str(event["id"])
        index = b.last_assistant()
        if index is None:
            index = b.message("assistant", None)
        b.call(call_id, event["name"], event.get("args"), index, started_at=event.get("ts"))

    def _tool_result(self, event: dict[str, Any], number: int) -> None:
        b = self.builder
        call_id = self._result_id(event, number)
        raw = event.get("result")
        text = None if raw is None else dump_result(raw)
        outcome = b.result(
            call_id, text, is_error=bool(event.get("is_error")), ended_at=event.get("ts")
        )
        if outcome is Attach.UNKNOWN:
            raise RecordError(
                self.source,
                f"tool_result for call id '{call_id}', which no tool_call made",
                f"write the tool_call line first, with that id (ids so far: {b.known_ids()})",
                line=number,
            )
        if outcome is Attach.ANSWERED:
            raise RecordError(
                self.source,
                f"a second tool_result for call id '{call_id}'",
                "write one tool_result per tool_call; give each call its own id",
                line=number,
            )
        b.message("tool", text, tool_call_id=call_id)

    def _result_id(self, event: dict[str, Any], number: int) -> str:
        if event.get("id") is not None:
            return str(event["id"])
        calls = self.builder.calls
        if calls and "result" not in calls[-1]:
            return str(calls[-1]["id"])
        raise RecordError(
            self.source,
            "a tool_result without an 'id', and the last tool_call already has its result",
            "give the tool_result the id of the tool_call it answers",
            line=number,
        )

    # ---- the rest ------------------------------------------------------------------------

    def _passage(self, event: dict[str, Any], number: int) -> None:
        passage = {k: event.get(k) for k in ("text", "source") if event.get(k) is not None}
        passage.update(id=str(event["id"]), turn=self.builder.turn)
        self.lists["passages"].append(passage)

    def _hook(self, event: dict[str, Any], number: int) -> None:
        hook = {k: event.get(k) for k in ("name", "decision", "reason")}
        hook["tool_call_id"] = _opt_str(event.get("tool_call_id"))
        hook["at"] = event.get("ts")
        self.lists["hooks"].append(hook)

    def _approval(self, event: dict[str, Any], number: int) -> None:
        approvals = self.lists["approvals"]
        approval_id = event.get("id")
        approvals.append(
            {
                "id": f"approval-{len(approvals) + 1}" if approval_id is None else str(approval_id),
                "tool": event.get("tool"),
                "tool_call_id": _opt_str(event.get("tool_call_id")),
                "by": event.get("by"),
                "at": event.get("ts"),
            }
        )

    def _audit(self, event: dict[str, Any], number: int) -> None:
        entry = {
            "type": event["kind"],
            "details": event.get("details") or {},
            "at": event.get("ts"),
        }
        self.lists["audit"].append(entry)

    def _usage(self, event: dict[str, Any], number: int) -> None:
        usage, cost, model = self.usage, event.get("cost_usd"), event.get("model")
        given, made = event.get("input_tokens") or 0, event.get("output_tokens") or 0
        usage["input_tokens"] += given
        usage["output_tokens"] += made
        if cost is not None:
            usage["cost_usd"] = usage.get("cost_usd", 0.0) + cost
        if model is not None:
            usage["model"] = model
        add_usage(self.by_model, model, given, made, cost)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)
