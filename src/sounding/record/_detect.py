"""The ways into a run record: read a file or a text in a named or detected format.

Formats: `sounding` (a stored `sounding.run/1` record), `jsonl` (the event stream agents
write), `openai` (chat-completions messages, tau-bench entries), `anthropic` (Messages API) and
`otel` (OpenTelemetry GenAI spans, an OTLP/JSON export), each registered below with the
signs it is known by. With no format given, the text decides (see `RecordFormats.detect`),
and a failure says what was seen and why it fits no format.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sounding._files import loads
from sounding.record._anthropic import parse_anthropic
from sounding.record._build import CALL_BLOCKS, RecordError, validate_record
from sounding.record._formats import NOT_JSON, Claim, RecordFormats, Sample, Sign
from sounding.record._jsonl import parse_jsonl
from sounding.record._model import SCHEMA, RunRecord
from sounding.record._openai import parse_openai
from sounding.record._otel import parse_otel, parse_otel_traces

# Tuples, not sets: `in` must take a value of any JSON type, a list or an object included.
_OPENAI_ROLES = ("tool", "function", "developer")
_OPENAI_KEYS = ("tool_calls", "function_call", "tool_call_id")
_OPENAI_PARTS = ("image_url", "input_audio", "file", "refusal")
_ANTHROPIC_BLOCKS = (*CALL_BLOCKS, "tool_result", "image", "document", "thinking")

formats = RecordFormats()
"""Every record format, in the order they are listed (`RECORD_FORMATS`)."""


def load_record(
    path: Path | str, format: str | None = None, *, trace_id: str | None = None
) -> RunRecord:
    """Read a run record from a file; a `.jsonl` / `.ndjson` name means the event stream.

    `trace_id` picks one trace of an OpenTelemetry export that holds several."""
    path = Path(path)
    if format is None:
        format = formats.named_by(path)
    return parse_record(read_text(path), format, source=str(path), trace_id=trace_id)


def parse_record(
    text: str,
    format: str | None = None,
    *,
    source: str = "<record>",
    trace_id: str | None = None,
) -> RunRecord:
    """Read a run record from text in `format`, or in the format the text shows."""
    sample = Sample(text, source, trace_id)
    chosen = formats.choose(sample, format)
    if trace_id is not None and not chosen.picks_trace:
        picking = " or ".join(f"`{f.name}`" for f in formats if f.picks_trace)
        raise RecordError(
            source, f"a trace id picks a trace of an {picking} export, not of {chosen.name}"
        )
    return chosen.read(sample)


def detect_format(text: str, source: str = "<record>") -> tuple[str, str]:
    """The format a text is in and the reason; a `RecordError` says why none fits."""
    found, reason = formats.detect(Sample(text, source))
    return found.name, reason


# ---- the signs of each format ----------------------------------------------------------


def _stored_sign(sample: Sample) -> Claim | None:
    if isinstance(sample.json, dict) and "schema" in sample.json:
        return Sign.KEY, "it has a 'schema' key (a stored record)"
    return None


def _event_sign(sample: Sample) -> Claim | None:
    data = sample.json
    if data is NOT_JSON and _first_line_is_event(sample.text):
        return Sign.KEY, "one JSON object per line, the first with a 'type'"
    if isinstance(data, dict) and isinstance(data.get("type"), str):
        return Sign.SHAPE, "a single event object with a 'type'"
    return None


def _otel_sign(sample: Sample) -> Claim | None:
    data = sample.json
    if isinstance(data, dict) and "resourceSpans" in data:
        return Sign.KEY, "it has 'resourceSpans' (an OTLP/JSON trace export)"
    if isinstance(data, list) and data and all(_is_span(item) for item in data):
        return Sign.KEY, "a list of spans with 'traceId' and 'spanId'"
    return None


def _is_span(item: Any) -> bool:
    return isinstance(item, dict) and "traceId" in item and "spanId" in item


def _openai_sign(sample: Sample) -> Claim | None:
    data = sample.json
    if isinstance(data, dict) and "traj" in data:
        return Sign.KEY, "it has a 'traj' list (a tau-bench entry)"
    messages = _messages(data)
    sign = _openai_mark(messages or [])
    if sign:
        return Sign.CONTENT, sign
    if messages is not None and all(isinstance(m, dict) and "role" in m for m in messages):
        return Sign.SHAPE, "plain text messages (OpenAI and Anthropic read them alike)"
    return None


def _anthropic_sign(sample: Sample) -> Claim | None:
    data = sample.json
    messages = _messages(data)
    if messages is not None and isinstance(data, dict) and "system" in data:
        return Sign.CONTENT, "a top-level 'system' beside 'messages'"
    sign = _anthropic_mark(messages or [])
    return (Sign.CONTENT, sign) if sign else None


def _messages(data: Any) -> list[Any] | None:
    """The messages of a conversation: a list, or an object's `messages` list."""
    if isinstance(data, dict):
        data = data.get("messages")
    return data if isinstance(data, list) else None


# ---- the formats, in the order they are listed ---------------------------------------


@formats.format("sounding", title="sounding", sniff=_stored_sign)
def _read_stored(sample: Sample) -> RunRecord:
    return parse_sounding(sample.document(), sample.source)


@formats.format("jsonl", title="JSON Lines", sniff=_event_sign, suffixes=(".jsonl", ".ndjson"))
def _read_events(sample: Sample) -> RunRecord:
    return parse_jsonl(sample.text, sample.source)


@formats.format("openai", title="OpenAI", sniff=_openai_sign)
def _read_openai(sample: Sample) -> RunRecord:
    return parse_openai(sample.document(), sample.source)


@formats.format("anthropic", title="Anthropic", sniff=_anthropic_sign)
def _read_anthropic(sample: Sample) -> RunRecord:
    return parse_anthropic(sample.document(), sample.source)


def _each_trace(sample: Sample) -> Iterator[tuple[str, RunRecord | RecordError]]:
    return parse_otel_traces(sample.document(), sample.source)


@formats.format("otel", title="OpenTelemetry", sniff=_otel_sign, picks_trace=True, each=_each_trace)
def _read_otel(sample: Sample) -> RunRecord:
    return parse_otel(sample.document(), sample.source, trace_id=sample.trace_id)


RECORD_FORMATS = formats.names()


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


def read_text(path: Path) -> str:
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


def _first_line_is_event(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        event = loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(event, dict) and isinstance(event.get("type"), str)


def _openai_mark(messages: list[Any]) -> str | None:
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


def _anthropic_mark(messages: list[Any]) -> str | None:
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
