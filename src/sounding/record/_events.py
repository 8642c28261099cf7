"""The events of the JSON Lines stream: their types, their fields, and their validation.

`EVENT_FIELDS` is the whole format: for each event type, each field with its type and
whether it is required. `ts` (unix seconds) is allowed on every event. docs/run-record.md
documents the same table for people.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from typing import Any

from sounding.record._build import RecordError, json_kind

Check = Callable[[Any], bool]


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_id(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_object(v: Any) -> bool:
    return isinstance(v, dict)


def _is_args(v: Any) -> bool:
    return isinstance(v, dict | str)


def _is_any(v: Any) -> bool:
    return True


KIND: dict[Check, str] = {
    _is_str: "a string",
    _is_id: "a string (or an integer)",
    _is_number: "a number",
    _is_count: "a non-negative integer",
    _is_int: "an integer",
    _is_bool: "true or false",
    _is_object: "a JSON object",
    _is_args: "a JSON object (or a string holding one)",
    _is_any: "any JSON value",
}

# type -> field -> (check, required). `ts` is allowed on every event.
EVENT_FIELDS: dict[str, dict[str, tuple[Check, bool]]] = {
    "task": {"prompt": (_is_str, True)},
    "user": {"text": (_is_str, True)},
    "assistant": {"text": (_is_str, True)},
    "tool_call": {"id": (_is_id, False), "name": (_is_str, True), "args": (_is_args, False)},
    "tool_result": {
        "id": (_is_id, False),
        "result": (_is_any, False),
        "is_error": (_is_bool, False),
    },
    "passage": {"id": (_is_id, True), "text": (_is_str, False), "source": (_is_str, False)},
    "hook": {
        "name": (_is_str, True),
        "decision": (_is_str, False),
        "reason": (_is_str, False),
        "tool_call_id": (_is_id, False),
    },
    "approval": {
        "id": (_is_id, False),
        "tool": (_is_str, False),
        "tool_call_id": (_is_id, False),
        "by": (_is_str, False),
    },
    "audit": {"kind": (_is_str, True), "details": (_is_object, False)},
    "usage": {
        "input_tokens": (_is_count, False),
        "output_tokens": (_is_count, False),
        "cost_usd": (_is_number, False),
        "model": (_is_str, False),
    },
    "final": {"text": (_is_str, True)},
    "error": {"message": (_is_str, True)},
    "meta": {},
}
EVENT_TYPES = tuple(EVENT_FIELDS)
_REQUIRED = {
    kind: tuple(k for k, (_c, req) in f.items() if req) for kind, f in EVENT_FIELDS.items()
}
_ALLOWED = {kind: [*fields, "type", "ts"] for kind, fields in EVENT_FIELDS.items()}
META_FIELDS = {"model": _is_str, "seed": _is_int, "duration_ms": _is_number}


def _closest(word: str, known: list[str]) -> str:
    close = difflib.get_close_matches(word, known, n=1)
    return f"did you mean '{close[0]}'? " if close else ""


def validate_event(event: Any, number: int, source: str) -> str:
    """Check the event's type and fields; returns its type."""
    if not isinstance(event, dict):
        raise RecordError(
            source,
            f"a JSON {json_kind(event)}, not an object",
            'each line must be one JSON object with a "type"',
            line=number,
        )
    kind = event.get("type")
    if not isinstance(kind, str):
        raise RecordError(
            source,
            "the event has no string 'type'",
            f"add one of: {', '.join(EVENT_TYPES)}",
            line=number,
        )
    fields = EVENT_FIELDS.get(kind)
    if fields is None:
        raise RecordError(
            source,
            f"unknown event type '{kind}'",
            f"{_closest(kind, list(EVENT_TYPES))}known types: {', '.join(EVENT_TYPES)}",
            line=number,
        )
    if kind != "meta":
        _validate_fields(kind, fields, event, number, source)
    _validate_ts(event, number, source)
    return kind


def _validate_fields(
    kind: str,
    fields: dict[str, tuple[Check, bool]],
    event: dict[str, Any],
    number: int,
    source: str,
) -> None:
    allowed = _ALLOWED[kind]
    for key, value in event.items():
        if key in ("type", "ts"):
            continue
        spec = fields.get(key)
        if spec is None:
            raise RecordError(
                source,
                f"a '{kind}' event has no field '{key}'",
                f"{_closest(key, allowed)}its fields are: {', '.join(allowed)}",
                line=number,
            )
        check, required = spec
        if (value is not None or required) and not check(value):
            raise RecordError(
                source,
                f"'{kind}' field '{key}' must be {KIND[check]}, not {json.dumps(value)[:60]}",
                "fix the value the agent writes",
                line=number,
            )
    for key in _REQUIRED[kind]:
        if key not in event:
            raise RecordError(
                source,
                f"a '{kind}' event needs '{key}'",
                f"its fields are: {', '.join(allowed)}",
                line=number,
            )


def _validate_ts(event: dict[str, Any], number: int, source: str) -> None:
    ts = event.get("ts")
    if ts is not None and not _is_number(ts):
        raise RecordError(
            source,
            f"'ts' must be a number (unix seconds), not {json.dumps(ts)[:60]}",
            "write time.time() or leave 'ts' out",
            line=number,
        )
