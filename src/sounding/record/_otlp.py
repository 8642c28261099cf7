"""OTLP/JSON trace exports read into plain spans (GenAI meaning is `_otel.py`'s business).

An export is `{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans"}]}]}` (older
exporters say `instrumentationLibrarySpans`); a plain list of spans is read too. Attribute
values (`stringValue`, `intValue` as a string, `arrayValue`, `kvlistValue`, ...) become plain
Python values, times stay integer nanoseconds, and a shape that cannot be read is a
`RecordError` naming its place (`resourceSpans[0].scopeSpans[1].spans[3].attributes[2]`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sounding._files import json_kind
from sounding._words import counted
from sounding.record._build import RecordError

OPERATION = "gen_ai.operation.name"
SHAPES = (
    'give an OTLP/JSON trace export {"resourceSpans": [...]} or a list of spans, '
    "each with 'traceId', 'spanId', 'startTimeUnixNano' and 'endTimeUnixNano'"
)
Origin = tuple[dict[str, Any], str | None]  # a scope block's resource attributes and scope


@dataclass
class Span:
    """One span: ids, name, times in nanoseconds, attributes and events as plain values,
    whether its status is ERROR (and its message), where in the export it was, and the
    attributes of its resource (one dict for all of a resource's spans) and its scope."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    end: int
    attrs: dict[str, Any]
    events: list[dict[str, Any]]
    error: bool
    status: str
    where: str
    resource: dict[str, Any]
    scope: str | None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def operation(self) -> str | None:
        """The GenAI operation (`chat`, `execute_tool`, ...), None on a span of another kind."""
        value = self.attrs.get(OPERATION)
        return value if isinstance(value, str) else None


def read_export(data: Any, source: str) -> tuple[list[Span], list[str]]:
    """Every span of an export (or of a list of spans), in the order written, and notes on
    what the exporter left out."""
    notes: list[str] = []
    if isinstance(data, list):
        spans = [_read_span(s, f"[{i}]", ({}, None), source, notes) for i, s in enumerate(data)]
        return spans, notes
    if not isinstance(data, dict) or not isinstance(data.get("resourceSpans"), list):
        raise RecordError(source, f"a JSON {json_kind(data)} without 'resourceSpans'", SHAPES)
    spans = []
    for r, block in enumerate(data["resourceSpans"]):
        spans.extend(_read_resource(block, f"resourceSpans[{r}]", source, notes))
    return spans, notes


def _read_resource(block: Any, where: str, source: str, notes: list[str]) -> list[Span]:
    """The spans of one resource, each tied to its resource attributes and scope."""
    resource = _object(_object(block, where, source).get("resource") or {}, where, source)
    attrs = _attributes(resource.get("attributes"), source, f"{where}.resource.attributes")
    key = "scopeSpans" if "scopeSpans" in block else "instrumentationLibrarySpans"
    spans = []
    for s, scoped in enumerate(_list(block.get(key), f"{where}.{key}", source)):
        place = f"{where}.scopeSpans[{s}]"
        scope = _object(_object(scoped, place, source).get("scope") or {}, place, source)
        origin = (attrs, _scope_name(scope))
        for i, span in enumerate(_list(scoped.get("spans"), f"{place}.spans", source)):
            spans.append(_read_span(span, f"{place}.spans[{i}]", origin, source, notes))
    return spans


def _scope_name(scope: dict[str, Any]) -> str | None:
    name = scope.get("name")
    if not isinstance(name, str) or not name:
        return None
    return f"{name} {scope['version']}" if isinstance(scope.get("version"), str) else name


def _read_span(raw: Any, where: str, origin: Origin, source: str, notes: list[str]) -> Span:
    span = _object(raw, where, source)
    trace_id, span_id = span.get("traceId"), span.get("spanId")
    if not (isinstance(trace_id, str) and trace_id and isinstance(span_id, str) and span_id):
        raise RecordError(source, "a span without a 'traceId' and a 'spanId'", SHAPES, where=where)
    status = _object(span.get("status") or {}, f"{where}.status", source)
    events = span.get("events") or []
    events = events if isinstance(events, list) else [events]  # one event object, not a list
    _note_dropped(span, where, notes)
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=str(span.get("parentSpanId") or ""),
        name=str(span.get("name") or ""),
        start=_nanos(span, "startTimeUnixNano", where, source),
        end=_nanos(span, "endTimeUnixNano", where, source),
        attrs=_attributes(span.get("attributes"), source, f"{where}.attributes"),
        events=[_read_event(e, f"{where}.events[{n}]", source) for n, e in enumerate(events)],
        error=status.get("code") in (2, "2", "STATUS_CODE_ERROR", "ERROR"),
        status=str(status.get("message") or ""),
        where=where,
        resource=origin[0],
        scope=origin[1],
        extra={"links": span["links"]} if span.get("links") else {},
    )


def _read_event(raw: Any, where: str, source: str) -> dict[str, Any]:
    event = _object(raw, where, source)
    attrs = _attributes(event.get("attributes"), source, f"{where}.attributes")
    return {"name": str(event.get("name") or ""), "attributes": attrs}


def _note_dropped(span: dict[str, Any], where: str, notes: list[str]) -> None:
    for key in ("droppedAttributesCount", "droppedEventsCount", "droppedLinksCount"):
        if span.get(key):
            what = key.removeprefix("dropped").removesuffix("Count").lower()
            notes.append(f"{where}: the exporter dropped {span[key]} {what} of this span")


def _nanos(span: dict[str, Any], key: str, where: str, source: str) -> int:
    value = span.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    raise RecordError(
        source,
        f"'{key}' is {json.dumps(value)}",
        "OTLP/JSON gives times as nanoseconds since the epoch, in a string such as "
        '"1718000000000000000"',
        where=f"{where}.{key}",
    )


def _object(value: Any, where: str, source: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(source, f"a JSON {json_kind(value)}, not an object", SHAPES, where=where)
    return value


def _list(value: Any, where: str, source: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError(source, f"a JSON {json_kind(value)}, not a list", SHAPES, where=where)
    return value


def _attributes(raw: Any, source: str, where: str) -> dict[str, Any]:
    """OTLP key/value attributes (or a plain object of them) as a dict of plain values."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return dict(raw)
    out: dict[str, Any] = {}
    for n, item in enumerate(_list(raw, where, source)):
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise RecordError(
                source,
                "an attribute without a string 'key'",
                'attributes are [{"key": "...", "value": {"stringValue": "..."}}, ...]',
                where=f"{where}[{n}]",
            )
        out[item["key"]] = _any_value(item.get("value"), f"{where}[{n}].value", source)
    return out


def _any_value(value: Any, where: str, source: str) -> Any:
    """An OTLP `AnyValue` (`stringValue`, `intValue`, ..., `kvlistValue`) as a plain value."""
    if value is None or value == {}:
        return None
    box = _object(value, where, source)
    if "arrayValue" in box:
        items = _list(_object(box["arrayValue"], where, source).get("values"), where, source)
        return [_any_value(v, f"{where}.values[{i}]", source) for i, v in enumerate(items)]
    if "kvlistValue" in box:
        return _attributes(_object(box["kvlistValue"], where, source).get("values"), source, where)
    for kind, read in (("stringValue", str), ("boolValue", bool), ("bytesValue", str)):
        if kind in box:
            return read(box[kind])
    for kind, number in (("intValue", int), ("doubleValue", float)):
        if kind in box:
            try:
                return number(box[kind])
            except (TypeError, ValueError, OverflowError):  # OverflowError: int(1e999)
                raise RecordError(
                    source, f"{kind} {json.dumps(box[kind])} is not a number", where=where
                ) from None
    raise RecordError(
        source,
        f"an attribute value with none of the OTLP kinds (its keys: {', '.join(box)})",
        "a value is one of stringValue, boolValue, intValue, doubleValue, arrayValue, "
        "kvlistValue, bytesValue",
        where=where,
    )


def pick_trace(spans: list[Span], trace_id: str | None, source: str) -> list[Span]:
    """The spans of one trace: the only one, or the one named; otherwise say which exist."""
    if not spans:
        raise RecordError(source, "the export holds no spans", SHAPES)
    traces = by_trace(spans)
    if trace_id is not None and trace_id in traces:
        return traces[trace_id]
    if trace_id is None and len(traces) == 1:
        return spans
    listed = "; ".join(_describe_trace(tid, group) for tid, group in traces.items())
    problem = (
        f"the export holds {len(traces)} traces ({listed}); a record is one trace"
        if trace_id is None
        else f"no trace '{trace_id}' in the export (it holds: {listed})"
    )
    raise RecordError(
        source,
        problem,
        "name one with parse_otel(data, source, trace_id=...), or export a single trace",
        needs="trace_id",
    )


def by_trace(spans: list[Span]) -> dict[str, list[Span]]:
    """The spans of each trace, by trace id in the order first seen."""
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    return traces


def _describe_trace(trace_id: str, spans: list[Span]) -> str:
    ids = {s.span_id for s in spans}
    roots = [s.name for s in spans if s.parent_id not in ids]
    return f"{trace_id} ({counted(len(spans), 'span')}, root '{roots[0] if roots else '?'}')"
