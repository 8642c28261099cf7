"""The ways into a run record: read a file or a text in a named or detected format.

Formats: `sounding` (a stored `sounding.run/1` record), `jsonl` (the event stream agents
write), `openai` (chat-completions messages, tau-bench entries), `anthropic` (Messages API) and
`otel` (OpenTelemetry GenAI spans, an OTLP/JSON export). With no format given, the text
decides, and a failure says what was seen and why it fits no format.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sounding.record._build import CALL_BLOCKS, RecordError, json_kind, validate_record
from sounding.record._model import SCHEMA, RunRecord

RECORD_FORMATS = ("sounding", "jsonl", "openai", "anthropic", "otel")
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
_PASS_FORMAT = f"pass the format explicitly (one of: {', '.join(RECORD_FORMATS)})"
_OPENAI_ROLES = frozenset({"tool", "function", "developer"})
_OPENAI_KEYS = ("tool_calls", "function_call", "tool_call_id")
_OPENAI_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})
_ANTHROPIC_BLOCKS = CALL_BLOCKS | {"tool_result", "image", "document", "thinking"}


def load_record(
    path: Path | str, format: str | None = None, *, trace_id: str | None = None
) -> RunRecord:
    """Read a run record from a file; a `.jsonl` / `.ndjson` name means the event stream.

    `trace_id` picks one trace of an OpenTelemetry export that holds several."""
    path = Path(path)
    text = _read_text(path)
    if format is None and path.suffix.lower() in JSONL_SUFFIXES:
        format = "jsonl"
    return parse_record(text, format, source=str(path), trace_id=trace_id)


def parse_record(
    text: str,
    format: str | None = None,
    *,
    source: str = "<record>",
    trace_id: str | None = None,
) -> RunRecord:
    """Read a run record from text in `format`, or in the format the text shows."""
    data: Any = None
    if format is None:
        format, _reason, data = _sniff(text, source)
    elif format not in RECORD_FORMATS:
        close = difflib.get_close_matches(format, RECORD_FORMATS, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise RecordError(
            source,
            f"unknown record format '{format}'",
            f"{hint}formats: {', '.join(RECORD_FORMATS)}",
        )
    if format == "jsonl":
        from sounding.record._jsonl import parse_jsonl

        return parse_jsonl(text, source)
    if data is None:
        data = decode_json(text, source)
    if format == "otel":
        return parse_otel(data, source, trace_id=trace_id)
    if trace_id is not None:
        raise RecordError(source, f"a trace id picks a trace of an `otel` export, not of {format}")
    return _parser(format)(data, source)


def parse_otel(data: Any, source: str, *, trace_id: str | None = None) -> RunRecord:
    """Read one trace of an OTLP/JSON export (or a list of spans) into a record."""
    from sounding.record._otel import import_otel

    return import_otel(data, source, trace_id=trace_id)


def detect_format(text: str, source: str = "<record>") -> tuple[str, str]:
    """The format a text is in and the reason; a `RecordError` says why none fits."""
    format, reason, _data = _sniff(text, source)
    return format, reason


def decode_json(text: str, source: str) -> Any:
    """One JSON document; a syntax error names its line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(
            source,
            f"not JSON: {exc.msg}",
            "fix the JSON there; a record file is one JSON document, or JSON Lines (.jsonl)",
            line=exc.lineno,
            column=exc.colno,
        ) from None


def parse_sounding(data: Any, source: str) -> RunRecord:
    """A stored record: its `schema` is read first, then every field is validated.

    A run's trial.json holds its trial's record: given one, that record is read.
    """
    schema = data.get("schema") if isinstance(data, dict) else None
    if isinstance(schema, str) and schema.startswith("sounding.trial/"):
        if data.get("record") is None:
            raise RecordError(
                source,
                "this trial left no run record: it failed before its agent ran",
                "pick another trial, or the record.json beside a trial an older sounding wrote",
            )
        return parse_sounding(data["record"], f"{source}: record")
    if schema == SCHEMA:
        return validate_record(data, source)
    if isinstance(schema, str) and schema.startswith("sounding.run/"):
        raise RecordError(
            source,
            f"the record is {schema}; this version of sounding reads {SCHEMA}",
            "use the sounding version that wrote it, or upgrade sounding",
        )
    raise RecordError(
        source,
        f"'schema' is {json.dumps(schema)}, not \"{SCHEMA}\"",
        f'a stored record is a JSON object starting with "schema": "{SCHEMA}"',
    )


def _parser(format: str) -> Callable[[Any, str], RunRecord]:
    """The reader of a JSON format. Importers load when first used: a run reads one format."""
    if format == "openai":
        from sounding.record._openai import parse_openai

        return parse_openai
    if format == "anthropic":
        from sounding.record._anthropic import parse_anthropic

        return parse_anthropic
    return parse_sounding


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RecordError(str(path), "no such file", "check the path") from None
    except OSError as exc:
        raise RecordError(str(path), f"cannot read it: {exc.strerror}", "check the path") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RecordError(
            str(path), f"not UTF-8 text (byte {exc.start})", "write the record as UTF-8"
        ) from None


# ---- detection -------------------------------------------------------------------------


def _sniff(text: str, source: str) -> tuple[str, str, Any]:
    """(format, reason, decoded JSON or None for JSON Lines)."""
    if not text.strip():
        raise RecordError(
            source,
            "empty: no format to detect",
            "an empty trace is read with the format 'jsonl' (the record of an agent that "
            "wrote nothing)",
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if _first_line_is_event(text):
            return "jsonl", "one JSON object per line, the first with a 'type'", None
        raise RecordError(
            source,
            f"not JSON: {exc.msg}",
            "fix the JSON there; a record file is one JSON document (a stored record, "
            "an OpenAI or Anthropic conversation) or JSON Lines (one event per line)",
            line=exc.lineno,
            column=exc.colno,
        ) from None
    format, reason = _classify(data, source)
    return format, reason, None if format == "jsonl" else data


def _first_line_is_event(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        event = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(event, dict) and isinstance(event.get("type"), str)


def _classify(data: Any, source: str) -> tuple[str, str]:
    if isinstance(data, list):
        if data and all(isinstance(s, dict) and "traceId" in s and "spanId" in s for s in data):
            return "otel", "a list of spans with 'traceId' and 'spanId'"
        return _classify_messages(data, source, system=False)
    if not isinstance(data, dict):
        raise RecordError(source, f"a JSON {json_kind(data)} is no run record", _PASS_FORMAT)
    if "schema" in data:
        return "sounding", "it has a 'schema' key (a stored record)"
    if "resourceSpans" in data:
        return "otel", "it has 'resourceSpans' (an OTLP/JSON trace export)"
    if "traj" in data:
        return "openai", "it has a 'traj' list (a tau-bench entry)"
    if isinstance(data.get("messages"), list):
        return _classify_messages(data["messages"], source, system="system" in data)
    if isinstance(data.get("type"), str):
        return "jsonl", "a single event object with a 'type'"
    keys = ", ".join(list(data)[:8]) or "none"
    raise RecordError(
        source,
        "cannot tell the format: an object with none of 'schema', 'messages', 'traj', "
        f"'resourceSpans' (its keys: {keys})",
        _PASS_FORMAT,
    )


def _classify_messages(messages: list[Any], source: str, *, system: bool) -> tuple[str, str]:
    openai = _openai_sign(messages)
    anthropic = "a top-level 'system' beside 'messages'" if system else _anthropic_sign(messages)
    if openai and anthropic:
        raise RecordError(
            source,
            f"cannot tell the format: {openai} (OpenAI) but {anthropic} (Anthropic)",
            _PASS_FORMAT,
        )
    if anthropic:
        return "anthropic", anthropic
    if openai:
        return "openai", openai
    if messages and not all(isinstance(m, dict) and "role" in m for m in messages):
        raise RecordError(
            source, "cannot tell the format: a list whose items are not all messages", _PASS_FORMAT
        )
    return "openai", "plain text messages (OpenAI and Anthropic read them alike)"


def _openai_sign(messages: list[Any]) -> str | None:
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if message.get("role") in _OPENAI_ROLES:
            return f"message {index} has role '{message['role']}'"
        for key in _OPENAI_KEYS:
            if key in message:
                return f"message {index} has '{key}'"
        for part in _blocks(message):
            if part.get("type") in _OPENAI_PARTS:
                return f"message {index} has a '{part['type']}' part"
    return None


def _anthropic_sign(messages: list[Any]) -> str | None:
    for index, message in enumerate(messages):
        for block in _blocks(message):
            kind = block.get("type")
            if kind in _ANTHROPIC_BLOCKS or (isinstance(kind, str) and kind.endswith("_result")):
                return f"message {index} has a '{kind}' block"
    return None


def _blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict)]
