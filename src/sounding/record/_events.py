"""The events of the JSON Lines stream: their types, their fields, and their validation.

`EVENT_FIELDS` is the whole format: for each event type, each field with its type and
whether it is required. `ts` (unix seconds) is allowed on every event. docs/run-record.md
documents the same table for people.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from sounding._files import json_kind
from sounding.record._build import RecordError, closest


class Check(NamedTuple):
    """A field's type: what it must be, in words, and the test of a value."""

    kind: str
    test: Callable[[Any], bool]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


STR = Check("a string", lambda v: isinstance(v, str))
ID = Check("a string (or an integer)", lambda v: isinstance(v, str) or _is_int(v))
NUMBER = Check("a number", lambda v: isinstance(v, float) or _is_int(v))
COUNT = Check("a non-negative integer", lambda v: _is_int(v) and v >= 0)
INT = Check("an integer", _is_int)
BOOL = Check("true or false", lambda v: isinstance(v, bool))
OBJECT = Check("a JSON object", lambda v: isinstance(v, dict))
ARGS = Check("a JSON object (or a string holding one)", lambda v: isinstance(v, dict | str))
ANY = Check("any JSON value", lambda v: True)

# type -> field -> (check, required). `ts` is allowed on every event.
EVENT_FIELDS: dict[str, dict[str, tuple[Check, bool]]] = {
    "task": {"prompt": (STR, True)},
    "user": {"text": (STR, True)},
    "assistant": {"text": (STR, True)},
    "tool_call": {"id": (ID, False), "name": (STR, True), "args": (ARGS, False)},
    "tool_result": {"id": (ID, False), "result": (ANY, False), "is_error": (BOOL, False)},
    "passage": {"id": (ID, True), "text": (STR, False), "source": (STR, False)},
    "hook": {
        "name": (STR, True),
        "decision": (STR, False),
        "reason": (STR, False),
        "tool_call_id": (ID, False),
    },
    "approval": {
        "id": (ID, False),
        "tool": (STR, False),
        "tool_call_id": (ID, False),
        "by": (STR, False),
    },
    "audit": {"kind": (STR, True), "details": (OBJECT, False)},
    "usage": {
        "input_tokens": (COUNT, False),
        "output_tokens": (COUNT, False),
        "cost_usd": (NUMBER, False),
        "model": (STR, False),
    },
    "final": {"text": (STR, True)},
    "error": {"message": (STR, True)},
    "meta": {},
}
EVENT_TYPES = tuple(EVENT_FIELDS)
META_FIELDS = {"model": STR, "seed": INT, "duration_ms": NUMBER}


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
    if kind not in EVENT_FIELDS:
        raise RecordError(
            source,
            f"unknown event type '{kind}'",
            f"{closest(kind, EVENT_TYPES)}known types: {', '.join(EVENT_TYPES)}",
            line=number,
        )
    if kind != "meta":
        _validate_fields(kind, event, number, source)
    ts = event.get("ts")
    if ts is not None and not NUMBER.test(ts):
        raise RecordError(
            source,
            f"'ts' must be a number (unix seconds), not {json.dumps(ts)[:60]}",
            "write time.time() or leave 'ts' out",
            line=number,
        )
    return kind


def _validate_fields(kind: str, event: dict[str, Any], number: int, source: str) -> None:
    fields = EVENT_FIELDS[kind]
    allowed = [*fields, "type", "ts"]
    for key, value in event.items():
        if key in ("type", "ts"):
            continue
        spec = fields.get(key)
        if spec is None:
            raise RecordError(
                source,
                f"a '{kind}' event has no field '{key}'",
                f"{closest(key, allowed)}its fields are: {', '.join(allowed)}",
                line=number,
            )
        check, required = spec
        if (value is not None or required) and not check.test(value):
            raise RecordError(
                source,
                f"'{kind}' field '{key}' must be {check.kind}, not {json.dumps(value)[:60]}",
                "fix the value the agent writes",
                line=number,
            )
    for key, (_check, required) in fields.items():
        if required and key not in event:
            raise RecordError(
                source,
                f"a '{kind}' event needs '{key}'",
                f"its fields are: {', '.join(allowed)}",
                line=number,
            )
