"""OpenTelemetry GenAI spans (OTLP/JSON exports) read into run records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sounding.record import RecordError, RunRecord, detect_format, load_record, parse_otel

FIXTURES = Path(__file__).parent.parent / "fixtures" / "otel"
TOOL_AGENT = FIXTURES / "tool_agent.json"
ERRORED_TOOL = FIXTURES / "errored_tool.json"
EVENT_FORM = FIXTURES / "event_form.json"
T0 = 1_718_000_000_000_000_000
TRACE = "11111111111111111111111111111111"


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": _attributes(value)}}
    return {"stringValue": value if isinstance(value, str) else json.dumps(value)}


def _attributes(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in attrs.items()]


def _span(span_id: str, start: float, end: float, parent: str = "", **attrs: Any) -> dict[str, Any]:
    """An OTLP span; attribute names use `__` for dots: gen_ai__tool__name."""
    error = attrs.pop("error", None)
    return {
        "traceId": TRACE,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": span_id,
        "startTimeUnixNano": str(T0 + int(start * 1e9)),
        "endTimeUnixNano": str(T0 + int(end * 1e9)),
        "attributes": _attributes({k.replace("__", "."): v for k, v in attrs.items()}),
        "status": {"code": 2, "message": error} if error else {},
    }


def _export(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": list(spans)}]}]}


def _chat(span_id: str, start: float, end: float, parent: str = "", **attrs: Any) -> Any:
    return _span(span_id, start, end, parent, gen_ai__operation__name="chat", **attrs)


def _tool(span_id: str, start: float, end: float, parent: str = "", **attrs: Any) -> Any:
    return _span(span_id, start, end, parent, gen_ai__operation__name="execute_tool", **attrs)


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _asks(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    part = {"type": "tool_call", "id": call_id, "name": name, "arguments": args}
    return {"role": "assistant", "parts": [part]}


def _answers(call_id: str, result: str) -> dict[str, Any]:
    part = {"type": "tool_call_response", "id": call_id, "response": result}
    return {"role": "tool", "parts": [part]}


def _read(data: Any, trace_id: str | None = None) -> RunRecord:
    return parse_otel(data, "trace.json", trace_id=trace_id)


# ---- the three exports -----------------------------------------------------------------


def test_a_tool_calling_agent_gives_its_calls_in_order_with_args_and_results() -> None:
    run = load_record(TOOL_AGENT)
    assert run.source_format == "otel"
    lookup, track = run.tool_calls
    assert (lookup.id, lookup.name, lookup.args) == (
        "call_1",
        "lookup_order",
        {"order_id": "A-1001"},
    )
    assert json.loads(lookup.result or "") == {
        "order_id": "A-1001",
        "status": "in_transit",
        "carrier": "DHL",
        "tracking": "JD0142",
    }
    assert (lookup.started_at, lookup.ended_at) == (1718000000.95, 1718000001.2)
    assert track.args == {"carrier": "DHL", "tracking": "JD0142"}  # a structured attribute
    assert track.result == "Out for delivery; expected 14 June before 18:00"
    assert not lookup.is_error and not track.is_error
    assert [run.messages[c.message_index or 0].tool_call_ids for c in run.tool_calls] == [
        ["call_1"],
        ["call_2"],
    ]


def test_a_tool_calling_agent_gives_one_conversation_its_usage_model_and_answer() -> None:
    run = load_record(TOOL_AGENT)
    assert run.task == "Where is my order A-1001? It was due on Monday."
    assert (run.user_turns, run.turns) == ([run.task], 1)
    roles = [m.role for m in run.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert run.final_answer == (
        "Your order A-1001 is with DHL (tracking JD0142): out for delivery, "
        "expected on 14 June before 18:00."
    )
    # three chat calls; the agent span's own total is not added a second time
    assert (run.usage.input_tokens, run.usage.output_tokens) == (812 + 903 + 896, 41 + 38 + 50)
    assert run.model == run.usage.model == "gpt-4o-mini-2024-07-18"
    ((model, spent),) = run.usage.by_model.items()  # each chat span, under its model
    assert model == "gpt-4o-mini-2024-07-18" and spent.input_tokens == 812 + 903 + 896
    assert run.duration_ms == pytest.approx(4200.0)
    assert run.error is None
    assert "JD0142" in run.ids_seen_before(1)  # the tracking number came from the lookup


def test_what_no_field_takes_is_kept_in_metadata_and_noted() -> None:
    run = load_record(TOOL_AGENT)
    spans = run.metadata["otel_spans"]
    assert spans["e1e1e1e1e1e1e1e1"]["attributes"]["url.full"].endswith("/JD0142")
    assert spans["d1d1d1d1d1d1d1d1"]["attributes"] == {"gen_ai.tool.type": "function"}
    assert spans["c1c1c1c1c1c1c1c1"]["attributes"]["gen_ai.response.id"] == "chatcmpl-9a1"
    assert spans["a1a1a1a1a1a1a1a1"]["attributes"]["gen_ai.usage.input_tokens"] == 2611
    assert run.metadata["trace_id"] == "5b8aa5a2d2c872e8321cf37308d69df2"
    assert run.metadata["otel_resources"][0]["service.name"] == "support-bot"
    assert run.metadata["otel_scopes"] == ["acme.agents.tracing 0.9.0"]
    notes = "\n".join(run.metadata["import_notes"])
    assert "('GET')" in notes and "usage of 'invoke_agent support-bot' is not added" in notes


def test_an_errored_tool_is_marked_and_a_failed_model_call_is_the_runs_error() -> None:
    run = load_record(ERRORED_TOOL)
    failed, listed = run.tool_calls
    assert (failed.name, failed.is_error, failed.result) == (
        "run_sql",
        True,
        "no such table: orders",
    )
    assert failed.args == {"query": "SELECT SUM(amount) FROM orders WHERE country = 'NO'"}
    assert (listed.name, listed.is_error, listed.result) == (
        "list_tables",
        False,
        '["sales", "customers"]',
    )
    assert run.error == "chat claude-sonnet-4: 429 Too Many Requests"
    assert (run.usage.input_tokens, run.usage.output_tokens) == (2500, 80)
    assert run.final_answer == "Let me query the sales table."  # the last thing it said
    exception = run.metadata["otel_spans"]["9f1c000000000003"]["events"][0]
    assert exception["attributes"]["exception.type"] == "sqlite3.OperationalError"


def test_the_older_event_form_gives_turns_calls_results_and_answers() -> None:
    run = load_record(EVENT_FORM)
    assert run.user_turns == ["What's the weather in Oslo?", "Should I bring an umbrella tomorrow?"]
    assert run.turns == 2 and run.messages[0].role == "system"
    weather, forecast = run.tool_calls
    # the tool spans carry neither arguments nor results: the messages do
    assert (weather.name, weather.args, weather.result, weather.turn) == (
        "get_weather",
        {"city": "Oslo"},
        "light rain, 9°C",
        1,
    )
    assert (forecast.args, forecast.result, forecast.turn) == (
        {"city": "Oslo", "day": "tomorrow"},
        "showers all day, 8°C",
        2,
    )
    assert weather.started_at == 1718000001.1
    answers = [m.text for m in run.messages if m.role == "assistant" and m.text]
    assert answers == [
        "It is raining lightly in Oslo, 9°C.",
        "Yes, take an umbrella: showers are expected all day tomorrow.",
    ]
    assert run.final_answer == answers[-1]
    assert (run.usage.input_tokens, run.usage.output_tokens) == (615, 69)  # prompt_tokens, ...
    assert run.duration_ms == pytest.approx(9000.0)  # the root span, not a GenAI one
    assert "handle_conversation" in run.metadata["otel_spans"]["00f067aa0ba902b7"]["name"]


# ---- detection and choosing a trace ------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "why"),
    [(TOOL_AGENT, "'resourceSpans'"), (EVENT_FORM, "'resourceSpans'"), (ERRORED_TOOL, "list")],
)
def test_exports_and_span_lists_are_detected(path: Path, why: str) -> None:
    format, reason = detect_format(path.read_text())
    assert format == "otel"
    assert why in reason


def test_an_export_of_several_traces_is_refused_with_their_ids() -> None:
    both = json.loads(TOOL_AGENT.read_text())
    both["resourceSpans"] += json.loads(EVENT_FORM.read_text())["resourceSpans"]
    with pytest.raises(RecordError) as caught:
        _read(both)
    message = str(caught.value)
    assert message.startswith("trace.json: the export holds 2 traces")
    assert "5b8aa5a2d2c872e8321cf37308d69df2 (7 spans, root 'invoke_agent support-bot')" in message
    assert "4bf92f3577b34da6a3ce929d0e0e4736 (7 spans, root 'handle_conversation')" in message
    assert message.endswith(
        "name one with parse_otel(data, source, trace_id=...), or export a single trace"
    )
    run = _read(both, trace_id="4bf92f3577b34da6a3ce929d0e0e4736")
    assert run.tools_called == ["get_weather", "get_forecast"]
    with pytest.raises(RecordError, match="no trace 'abc' in the export"):
        _read(both, trace_id="abc")


# ---- the mapping rules, on small traces ---------------------------------------------------


def test_a_tool_span_without_a_call_id_is_the_call_the_model_asked_for() -> None:
    run = _read(
        _export(
            _chat(
                "c1",
                0,
                1,
                gen_ai__input__messages=[_text("user", "hi")],
                gen_ai__output__messages=[_asks("call_9", "ping", {"host": "a"})],
            ),
            _tool("t1", 1, 2, gen_ai__tool__name="ping", gen_ai__tool__call__result="pong"),
        )
    )
    (call,) = run.tool_calls  # one call, not one from the message and one from the span
    assert (call.id, call.args, call.result, call.message_index) == (
        "call_9",
        {"host": "a"},
        "pong",
        1,
    )


def test_calls_only_the_messages_show_are_calls_too() -> None:
    run = _read(
        _export(
            _chat("c1", 0, 1, gen_ai__input__messages=[_text("user", "2+2?")]),
            _chat(
                "c2",
                1,
                2,
                gen_ai__input__messages=[_text("user", "2+2?"), _asks("k", "calc", {"e": "2+2"})],
            ),
            _chat(
                "c3",
                2,
                3,
                gen_ai__input__messages=[_asks("k", "calc", {"e": "2+2"}), _answers("k", "4")],
                gen_ai__output__messages=[_text("assistant", "4")],
            ),
        )
    )
    (call,) = run.tool_calls
    assert (call.name, call.args, call.result, call.started_at) == ("calc", {"e": "2+2"}, "4", None)
    assert [m.role for m in run.messages] == ["user", "assistant", "tool", "assistant"]


def test_a_sub_agent_run_as_a_tool_adds_usage_but_not_its_conversation() -> None:
    run = _read(
        _export(
            _chat("c1", 0, 1, gen_ai__input__messages=[_text("user", "summarise")]),
            _tool("t1", 1, 5, gen_ai__tool__name="researcher", gen_ai__tool__call__id="r"),
            _chat(
                "inner",
                2,
                3,
                "t1",
                gen_ai__input__messages=[_text("user", "inner question")],
                gen_ai__usage__input_tokens=30,
                error="timeout",
            ),
        )
    )
    assert run.user_turns == ["summarise"]
    assert run.usage.input_tokens == 30
    assert run.error is None  # a failure inside a tool is the tool's business
    assert "inner question" in json.dumps(run.metadata["otel_spans"]["inner"])
    assert any("runs inside a tool call" in n for n in run.metadata["import_notes"])


def test_spans_without_content_give_calls_and_a_note() -> None:
    run = _read(_export(_tool("t1", 0, 1, gen_ai__tool__name="search", gen_ai__tool__call__id="s")))
    assert run.tools_called == ["search"] and run.final_answer is None and run.user_turns == []
    assert any("no span carried messages" in n for n in run.metadata["import_notes"])


def test_a_message_attribute_that_is_not_json_is_kept_and_noted() -> None:
    run = _read(_export(_chat("c1", 0, 1, gen_ai__input__messages='[{"role": "user", "par')))
    assert run.metadata["otel_spans"]["c1"]["attributes"]["gen_ai.input.messages"].endswith("par")
    assert any("gen_ai.input.messages: not JSON" in n for n in run.metadata["import_notes"])


def test_an_event_body_may_be_its_attributes_and_an_unreadable_one_is_kept() -> None:
    events = [
        {"name": "gen_ai.user.message", "attributes": _attributes({"content": "hello"})},
        {"name": "gen_ai.choice", "attributes": _attributes({"gen_ai.event.content": "{oops"})},
    ]
    run = _read(_export(_chat("c1", 0, 1) | {"events": events}))
    assert (run.user_turns, run.final_answer) == (["hello"], None)
    (kept,) = run.metadata["otel_spans"]["c1"]["events"]
    assert kept["attributes"]["gen_ai.event.content"] == "{oops"
    assert any("events[1]: not JSON" in n for n in run.metadata["import_notes"])


def test_a_span_list_with_plain_attributes_and_numbers_is_read() -> None:
    spans = [
        {
            "traceId": TRACE,
            "spanId": "t1",
            "startTimeUnixNano": T0,
            "endTimeUnixNano": T0 + 10**9,
            "attributes": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f"},
            "status": {"code": "STATUS_CODE_ERROR", "message": "boom"},
        }
    ]
    (call,) = _read(spans).tool_calls
    assert (call.name, call.is_error, call.result) == ("f", True, "boom")


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"spans": []}, "a JSON object without 'resourceSpans'"),
        ({"resourceSpans": []}, "the export holds no spans"),
        (_export({"spanId": "x"}), "resourceSpans[0].scopeSpans[0].spans[0]: a span without"),
        (
            _export(_span("a", 0, 1) | {"startTimeUnixNano": "soon"}),
            "spans[0].startTimeUnixNano: 'startTimeUnixNano' is \"soon\"",
        ),
        (
            _export(_span("a", 0, 1) | {"attributes": [{"value": {"stringValue": "x"}}]}),
            "spans[0].attributes[0]: an attribute without a string 'key'",
        ),
        (
            _export(_span("a", 0, 1) | {"attributes": [{"key": "k", "value": {"odd": 1}}]}),
            "none of the OTLP kinds (its keys: odd)",
        ),
    ],
)
def test_a_shape_that_cannot_be_read_names_the_place(data: Any, words: str) -> None:
    with pytest.raises(RecordError) as caught:
        _read(data)
    assert str(caught.value).startswith("trace.json")
    assert words in str(caught.value)


# ---- through the command line -------------------------------------------------------------


def test_sounding_score_reads_an_export(tmp_path: Path, sounding: Any) -> None:
    case = tmp_path / "case.yaml"
    case.write_text(
        "scenarios:\n"
        "  - id: where-is-my-order\n"
        "    user: Where is my order A-1001?\n"
        "    expect:\n"
        "      - tool_called: {name: lookup_order, args: {order_id: A-1001}}\n"
        "      - tool_called: track_shipment\n"
        "      - final_answer_contains: DHL\n"
    )
    done = sounding("score", str(case), "--record", str(TOOL_AGENT))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("PASS composite 1.00")
    failed = sounding("score", str(case), "--record", str(ERRORED_TOOL), "--format", "otel")
    assert failed.returncode == 1
    assert "tool 'lookup_order' was never called" in failed.stdout


def test_sounding_score_picks_one_trace_of_several(tmp_path: Path, sounding: Any) -> None:
    export = json.loads(TOOL_AGENT.read_text())
    other = json.loads(TOOL_AGENT.read_text())
    for span in other["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["traceId"] = "f" * 32
    export["resourceSpans"] += other["resourceSpans"]
    both = tmp_path / "both.json"
    both.write_text(json.dumps(export))
    case = tmp_path / "case.yaml"
    case.write_text(
        "scenarios:\n  - id: s\n    user: x\n    expect: [{tool_called: lookup_order}]\n"
    )
    refused = sounding("score", str(case), "--record", str(both))
    assert refused.returncode == 2 and "f" * 32 in refused.stderr
    message = " ".join(refused.stderr.split())
    assert "name one with --trace-id ID, or export a single trace" in message
    assert "parse_otel" not in message and "trace_id=" not in message
    missing = sounding("score", str(case), "--record", str(both), "--trace-id", "abc")
    assert missing.returncode == 2 and "no trace 'abc' in the export" in missing.stderr
    assert "--trace-id" in missing.stderr and "parse_otel" not in missing.stderr
    picked = sounding("score", str(case), "--record", str(both), "--trace-id", "f" * 32)
    assert picked.returncode == 0, picked.stdout + picked.stderr
