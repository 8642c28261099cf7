"""OpenTelemetry GenAI spans (an OTLP/JSON trace export) into run records.

Accepted: an export `{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans"}]}]}`
or a plain list of spans. One trace is one record: an export holding several trace ids is
refused unless `trace_id` names one. Spans are read by `gen_ai.operation.name`:
`execute_tool` spans are tool calls; every other GenAI span (chat, invoke_agent, ...) gives
usage, the model, and the messages it carries (`gen_ai.input.messages` /
`gen_ai.output.messages`, or the older `gen_ai.*.message` / `gen_ai.choice` events). The
conversation is rebuilt in time order: a span's input at its start, its output at its end,
each message kept once. What is not mapped stays in `metadata.otel_spans`, and every
choice made on the way is said in `metadata.import_notes`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sounding.record._build import (
    Attach,
    RecordBuilder,
    RecordError,
    dump_result,
)
from sounding.record._events import COUNT
from sounding.record._model import ModelUsage, RunRecord, add_usage
from sounding.record._otel_messages import (
    EVENT_ROLES,
    Conversation,
    SpanMessage,
    id_text,
    read_messages,
    system_messages,
)
from sounding.record._otlp import OPERATION, Span, by_trace, pick_trace, read_export

TOOL_CALL_KEYS = (
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
)
USAGE_KEYS = {
    "input_tokens": ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
    "output_tokens": ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
}
MESSAGE_KEYS = ("gen_ai.system_instructions", "gen_ai.input.messages", "gen_ai.output.messages")


def parse_otel(data: Any, source: str, *, trace_id: str | None = None) -> RunRecord:
    """Read one trace of an OTLP/JSON export (or a list of spans) into a record."""
    spans, notes = read_export(data, source)
    return _Importer(source, pick_trace(spans, trace_id, source), notes).run()


def parse_otel_traces(data: Any, source: str) -> Iterator[tuple[str, RunRecord | RecordError]]:
    """Each trace of an export as a record of its own, by trace id in the order first seen;
    a trace that cannot be read is its error, and the other traces are read all the same."""
    spans, notes = read_export(data, source)
    for trace_id, group in by_trace(spans).items():
        where = f"{source}, trace {trace_id}"
        try:
            yield trace_id, _Importer(where, group, list(notes)).run()
        except RecordError as exc:
            yield trace_id, exc


# ---- the importer ------------------------------------------------------------------------


class _Importer:
    def __init__(self, source: str, spans: list[Span], notes: list[str]) -> None:
        self.builder = RecordBuilder(source, "otel")
        self.notes = self.builder.notes
        self.notes.extend(notes)
        self.written = self._unique(spans)  # in the order of the export
        self.spans = sorted(self.written, key=lambda s: s.start)
        self.by_id = {s.span_id: s for s in self.spans}
        self.left = {
            s.span_id: {k: v for k, v in s.attrs.items() if k != OPERATION} for s in self.spans
        }
        self.in_tool = {s.span_id for s in self.spans if self._under_a_tool(s)}
        tools = [s for s in self.spans if s.operation == "execute_tool"]
        self.call_ids = {s.span_id: _given_call_id(s) or s.span_id for s in tools}
        self.tool_ids = set(self.call_ids.values())
        self.anonymous: dict[str, list[str]] = {}  # tool name -> spans without a call id
        for span in (s for s in tools if not _given_call_id(s)):
            self.anonymous.setdefault(_given_tool_name(span) or "", []).append(span.span_id)
        self.read_events: set[tuple[str, int]] = set()  # (span id, event index)
        self.conversation = Conversation()
        self.requested: dict[str, tuple[int, Any]] = {}

    def _unique(self, spans: list[Span]) -> list[Span]:
        kept: dict[str, Span] = {}
        for span in spans:
            if span.span_id in kept:
                self.notes.append(f"{span.where}: span id {span.span_id} seen before; kept first")
            kept.setdefault(span.span_id, span)
        return list(kept.values())

    def _ancestors(self, span: Span) -> list[Span]:
        found, seen = [], {span.span_id}
        parent = self.by_id.get(span.parent_id)
        while parent is not None and parent.span_id not in seen:
            found.append(parent)
            seen.add(parent.span_id)
            parent = self.by_id.get(parent.parent_id)
        return found

    def _under_a_tool(self, span: Span) -> bool:
        """A span inside a tool call (a sub-agent run as a tool) is not the conversation."""
        return any(a.operation == "execute_tool" for a in self._ancestors(span))

    def run(self) -> RunRecord:
        for span, phase in self._timeline():
            if span.operation == "execute_tool" and phase == "start":
                self.conversation.items.append(span)
            elif span.operation not in (None, "execute_tool"):
                self._conversation(span, phase)
        for item in self.conversation.items:
            if isinstance(item, Span):
                self._tool_span(item)
            else:
                self._append(item)
        self._totals()
        self._metadata()
        return self.builder.build()

    def _timeline(self) -> list[tuple[Span, str]]:
        """Starts and ends in time order; at one instant ends first, a span's own start first."""
        starts = [(s.start, 1, s, "start") for s in self.spans]
        ends = [(s.end, 0 if s.end > s.start else 2, s, "end") for s in self.spans]
        return [(s, phase) for _, _, s, phase in sorted(starts + ends, key=lambda m: m[:2])]

    # ---- tool spans ----------------------------------------------------------------------

    def _tool_span(self, span: Span) -> None:
        for key in TOOL_CALL_KEYS:
            self.left[span.span_id].pop(key, None)
        call_id = self.call_ids[span.span_id]
        index, asked = self.requested.pop(call_id, (None, None))
        args = span.attrs.get("gen_ai.tool.call.arguments", asked)
        times = {"started_at": span.start / 1e9, "ended_at": span.end / 1e9}
        self.builder.call(call_id, self._tool_name(span), args, index, **times)
        if "gen_ai.tool.call.result" in span.attrs:
            result = dump_result(span.attrs["gen_ai.tool.call.result"])
            self.builder.result(call_id, result, is_error=span.error)
        elif span.error:
            self.builder.result(call_id, _failure(span), is_error=True)

    def _tool_name(self, span: Span) -> str:
        name = _given_tool_name(span)
        if name:
            return name
        guess = span.name.removeprefix("execute_tool").strip() or span.name or "unknown"
        self.notes.append(f"{span.where}: no gen_ai.tool.name; named '{guess}' from the span name")
        return guess

    # ---- the conversation ----------------------------------------------------------------

    def _conversation(self, span: Span, phase: str) -> None:
        if span.span_id in self.in_tool:
            if phase == "start" and self._carries_messages(span):
                self.notes.append(
                    f"{span.where}: '{span.name}' runs inside a tool call; its messages are not "
                    "the conversation (kept in metadata.otel_spans)"
                )
            return
        if phase == "start":
            system = self._attr_messages(span, "gen_ai.system_instructions")
            inputs = system + self._attr_messages(span, "gen_ai.input.messages")
            self.conversation.take_inputs(inputs + self._event_messages(span, output=False))
        else:
            outputs = self._attr_messages(span, "gen_ai.output.messages")
            outputs += self._event_messages(span, output=True)
            if len(outputs) > 1:
                self.notes.append(
                    f"{span.where}: {len(outputs)} choices; the first continues the "
                    "conversation, the others are left out"
                )
            if outputs:
                self.conversation.take_output(outputs[0])

    def _carries_messages(self, span: Span) -> bool:
        return any(k in span.attrs for k in MESSAGE_KEYS) or any(
            e["name"] in EVENT_ROLES for e in span.events
        )

    def _attr_messages(self, span: Span, key: str) -> list[SpanMessage]:
        if key not in span.attrs:
            return []
        value = span.attrs[key]
        if key == "gen_ai.system_instructions":
            value = system_messages(value)
        read = read_messages(value, f"{span.where} {key}", self.notes)
        if read is not None:
            self.left[span.span_id].pop(key, None)
        return read or []

    def _event_messages(self, span: Span, *, output: bool) -> list[SpanMessage]:
        found: list[SpanMessage] = []
        for number, event in enumerate(span.events):
            role = EVENT_ROLES.get(event["name"])
            if role is None or (event["name"] == "gen_ai.choice") != output:
                continue
            body = event["attributes"].get("gen_ai.event.content", event["attributes"])
            read = read_messages(body, f"{span.where}.events[{number}]", self.notes, role)
            if read is not None:
                self.read_events.add((span.span_id, number))
            found.extend(read or [])
        return found

    def _append(self, message: SpanMessage) -> None:
        for call_id, result in message.responses:
            self._response(call_id, result)
        if message.role == "user" and (message.text or not message.responses):
            self.builder.user(message.text, message.content)
        elif message.role == "assistant":
            index = self.builder.message("assistant", message.content)
            for call in message.calls:
                self._requested(call, index)
        elif message.role == "system":
            self.builder.message("system", message.content)
        elif message.role == "tool" and not message.responses:
            self.notes.append("a tool message without the id of its call; kept as a message")
            self.builder.message("tool", message.content)

    def _response(self, call_id: str, result: Any) -> None:
        text = "" if result is None else dump_result(result)
        if self.builder.result(call_id, text) is Attach.UNKNOWN:
            self.notes.append(f"a tool result for call id '{call_id}' that no call made; kept")
        self.builder.message("tool", text, tool_call_id=call_id or None)

    def _requested(self, call: dict[str, Any], index: int) -> None:
        """A call the model asked for: its tool span makes the call, or else the message does."""
        call_id = call["id"] or f"call-{len(self.builder.calls) + 1}"
        if call_id not in self.tool_ids and self.anonymous.get(call["name"]):
            self._name_span(self.anonymous[call["name"]].pop(0), call_id)
        if call_id not in self.tool_ids:
            self.builder.call(call_id, call["name"], call["args"], index)
            return
        made_already = [c for c in self.builder.calls if c["id"] == call_id]
        if not made_already:
            self.requested[call_id] = (index, call["args"])
        elif made_already[-1]["message_index"] is None:  # its span started before the answer
            made_already[-1]["message_index"] = index
            self.builder.messages[index].setdefault("tool_call_ids", []).append(call_id)

    def _name_span(self, span_id: str, call_id: str) -> None:
        """A tool span without a call id makes the first call of its tool the model asked for."""
        self.call_ids[span_id] = call_id
        self.tool_ids.add(call_id)
        self.notes.append(
            f"{self.by_id[span_id].where}: no gen_ai.tool.call.id; taken as the call "
            f"'{call_id}' the model asked for"
        )

    # ---- usage, model, errors, duration --------------------------------------------------

    def _totals(self) -> None:
        model = self._model()
        fields = self.builder.fields
        by_model: dict[str, ModelUsage] = {}
        fields["usage"] = {**self._usage(by_model), "model": model, "by_model": by_model}
        fields["model"] = model
        errors = [f"{s.name}: {_failure(s)}" for s in self.spans if self._run_error(s)]
        fields["error"] = "\n".join(errors) if errors else None
        fields["duration_ms"] = self._duration()

    def _usage(self, by_model: dict[str, ModelUsage]) -> dict[str, int]:
        """Tokens summed over the spans reporting them, and counted per model in `by_model`;
        a parent of reporting spans is left out."""
        total = {"input_tokens": 0, "output_tokens": 0}
        reporting = [s for s in self.spans if s.operation and _tokens(s)]
        covered = {a.span_id for s in reporting for a in self._ancestors(s)}
        for span in reporting:
            if span.span_id in covered:
                self.notes.append(
                    f"{span.where}: the usage of '{span.name}' is not added, its child spans "
                    "report theirs (kept in metadata.otel_spans)"
                )
                continue
            counts = {name: 0 for name in total}
            for name, (key, count) in _tokens(span).items():
                counts[name] = count
                total[name] += count
                self.left[span.span_id].pop(key, None)
            model = _span_model(span)
            add_usage(by_model, model, counts["input_tokens"], counts["output_tokens"], None)
        return total

    def _model(self) -> str | None:
        """The model of the last GenAI span naming one: the response's, else the request's."""
        named = [
            _span_model(s)
            for s in self.spans
            if s.operation not in (None, "execute_tool") and s.span_id not in self.in_tool
        ]
        return next((m for m in reversed(named) if m), None)

    def _run_error(self, span: Span) -> bool:
        """A failed span that is no tool call and not inside one stopped the run."""
        return span.error and span.operation != "execute_tool" and span.span_id not in self.in_tool

    def _duration(self) -> float:
        roots = [s for s in self.spans if s.parent_id not in self.by_id]
        if not roots:
            raise RecordError(
                self.builder.source,
                "every span has its parent in the trace: their parentSpanIds form a loop",
                "a trace starts at a root span, one whose parentSpanId is empty",
            )
        if len(roots) > 1:
            self.notes.append(
                f"{len(roots)} root spans (a partial trace?); the duration runs from the first "
                "start to the last end"
            )
        return (max(s.end for s in roots) - min(s.start for s in roots)) / 1e6

    # ---- metadata ------------------------------------------------------------------------

    def _metadata(self) -> None:
        meta = self.builder.metadata
        meta["trace_id"] = self.spans[0].trace_id
        resources: list[dict[str, Any]] = []
        for span in self.written:  # a resource's spans share one dict: `in` finds it at once
            if span.resource and span.resource not in resources:
                resources.append(span.resource)
        meta["otel_resources"] = resources
        meta["otel_scopes"] = sorted({s.scope for s in self.spans if s.scope})
        meta["otel_spans"] = {s.span_id: e for s in self.spans if (e := self._leftover(s))}
        self._note_unmapped()
        if not self.builder.messages:
            self.notes.append(
                "no span carried messages (content capture off?): the user turns and the final "
                "answer are unknown"
            )

    def _leftover(self, span: Span) -> dict[str, Any]:
        """What of a span no field took (attributes, events, links); a span without an
        operation is kept whole."""
        left = self.left[span.span_id]
        events = [e for n, e in enumerate(span.events) if (span.span_id, n) not in self.read_events]
        if not (left or events or span.extra or not span.operation):
            return {}
        entry: dict[str, Any] = {"name": span.name, "parent": span.parent_id or None}
        entry |= {"attributes": left} if left else {}
        entry |= {"events": events} if events else {}
        return entry | span.extra

    def _note_unmapped(self) -> None:
        plain = [s.name or s.span_id for s in self.spans if not s.operation]
        if plain:
            shown = ", ".join(f"'{n}'" for n in plain[:5]) + (", ..." if len(plain) > 5 else "")
            self.notes.append(
                f"{len(plain)} span(s) without {OPERATION} ({shown}) are not part of the "
                "conversation; kept in metadata.otel_spans"
            )


def _given_call_id(span: Span) -> str | None:
    return id_text(span.attrs.get("gen_ai.tool.call.id")) or None


def _given_tool_name(span: Span) -> str | None:
    name = span.attrs.get("gen_ai.tool.name")
    return name if isinstance(name, str) and name else None


def _span_model(span: Span) -> str | None:
    """The model a span names: the response's, else the request's."""
    named = span.attrs.get("gen_ai.response.model") or span.attrs.get("gen_ai.request.model")
    return named if isinstance(named, str) else None


def _tokens(span: Span) -> dict[str, tuple[str, int]]:
    """The token counts a span reports, each with the attribute it came from."""
    found = {}
    for name, keys in USAGE_KEYS.items():
        key = next((k for k in keys if k in span.attrs), None)
        if key and COUNT.test(span.attrs[key]):
            found[name] = (key, span.attrs[key])
    return found


def _failure(span: Span) -> str:
    """What went wrong in a span: its status message, its exception, or its error.type."""
    if span.status:
        return span.status
    for event in span.events:
        attrs = event["attributes"] if event["name"] == "exception" else {}
        said = [str(attrs[k]) for k in ("exception.type", "exception.message") if attrs.get(k)]
        if said:
            return ": ".join(said)
    kind = span.attrs.get("error.type")
    return f"error.type {kind}" if kind else "status ERROR"
