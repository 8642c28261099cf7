"""The JSON Lines event stream: every event type, and the errors that name the line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sounding.record import RecordError, RunRecord, parse_record


def _stream(*events: dict[str, Any]) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


def _read(*events: dict[str, Any]) -> RunRecord:
    return parse_record(_stream(*events), "jsonl", source="trace.jsonl")


def _error(text: str) -> RecordError:
    with pytest.raises(RecordError) as caught:
        parse_record(text, "jsonl", source="trace.jsonl")
    return caught.value


FULL = (
    {"type": "meta", "model": "gpt-x", "seed": 7, "agent": "support-bot"},
    {"type": "task", "prompt": "Refund order A-1", "ts": 100.0},
    {"type": "assistant", "text": "Looking it up.", "ts": 100.5},
    {"type": "tool_call", "id": "c1", "name": "get_order", "args": {"id": "A-1"}, "ts": 101.0},
    {"type": "tool_result", "id": "c1", "result": {"status": "broken"}, "ts": 101.25},
    {"type": "passage", "id": "policy-2", "text": "Broken goods are refunded.", "source": "kb"},
    {
        "type": "hook",
        "name": "ceiling",
        "decision": "deny",
        "reason": "over 150",
        "tool_call_id": 9,
    },
    {"type": "usage", "input_tokens": 100, "output_tokens": 20, "cost_usd": 0.5, "model": "gpt-x"},
    {"type": "user", "text": "Yes, refund it", "ts": 102.0},
    {"type": "approval", "id": "ap-1", "tool": "refund", "tool_call_id": "c2", "by": "lead"},
    {"type": "tool_call", "id": "c2", "name": "refund", "args": {"cents": 900}, "ts": 103.0},
    {"type": "tool_result", "id": "c2", "result": "card declined", "is_error": True, "ts": 104.0},
    {"type": "audit", "kind": "http_call", "details": {"host": "pay.example"}, "ts": 104.0},
    {"type": "usage", "input_tokens": 50, "output_tokens": 5, "cost_usd": 0.25},
    {"type": "final", "text": "The refund failed: card declined.", "ts": 105.0},
    {"type": "error", "message": "payment service down"},
)


def test_every_event_type_lands_in_its_field() -> None:
    run = _read(*FULL)
    assert (run.task, run.user_turns, run.turns) == (
        "Refund order A-1",
        ["Refund order A-1", "Yes, refund it"],
        2,
    )
    lookup, refund = run.tool_calls
    assert (lookup.id, lookup.name, lookup.args, lookup.turn) == (
        "c1",
        "get_order",
        {"id": "A-1"},
        1,
    )
    assert json.loads(lookup.result or "") == {"status": "broken"}
    assert (lookup.started_at, lookup.ended_at) == (101.0, 101.25)
    assert (refund.result, refund.is_error, refund.turn) == ("card declined", True, 2)
    assert run.final_answer == "The refund failed: card declined."
    assert run.error == "payment service down"
    assert [(p.id, p.source, p.turn) for p in run.passages] == [("policy-2", "kb", 1)]
    assert (run.hooks[0].decision, run.hooks[0].tool_call_id) == ("deny", "9")
    assert run.approved(refund) and not run.approved(lookup)
    assert (run.audit[0].type, run.audit[0].details, run.audit[0].at) == (
        "http_call",
        {"host": "pay.example"},
        104.0,
    )
    assert (run.model, run.seed, run.metadata["agent"]) == ("gpt-x", 7, "support-bot")
    assert run.duration_ms == pytest.approx(5000.0)
    assert run.source_format == "jsonl"


def test_usage_events_add_up() -> None:
    usage = _read(*FULL).usage
    assert (usage.input_tokens, usage.output_tokens) == (150, 25)
    assert usage.cost_usd == pytest.approx(0.75)
    assert usage.model == "gpt-x"


def test_messages_keep_the_conversation_with_calls_on_the_assistant_message() -> None:
    run = _read(*FULL)
    roles = [m.role for m in run.messages]
    assert roles == ["user", "assistant", "tool", "user", "assistant", "tool", "assistant"]
    assert run.messages[1].tool_call_ids == ["c1"]
    assert run.tool_calls[0].message_index == 1
    assert run.messages[2].tool_call_id == "c1"
    assert run.messages[-1].text == "The refund failed: card declined."


def test_without_a_final_event_the_answer_is_the_last_assistant_text() -> None:
    run = _read(
        {"type": "user", "text": "hi"},
        {"type": "assistant", "text": "first"},
        {"type": "assistant", "text": "second"},
        {"type": "tool_call", "name": "noop"},
    )
    assert run.final_answer == "second"
    assert run.task == "hi"


def test_a_call_without_id_gets_one_and_an_id_less_result_answers_it() -> None:
    run = _read(
        {"type": "tool_call", "name": "search", "args": '{"q": "x"}'},
        {"type": "tool_result", "result": "3 hits"},
    )
    (call,) = run.tool_calls
    assert (call.id, call.args, call.result, call.turn) == ("call-1", {"q": "x"}, "3 hits", 0)


def test_args_text_that_is_not_json_is_kept_raw_and_marked() -> None:
    (call,) = _read({"type": "tool_call", "id": "a", "name": "run", "args": "ls -la"}).tool_calls
    assert call.args == {"_raw": "ls -la"}
    assert call.args_error is not None and "not valid JSON" in call.args_error


def test_reused_call_ids_are_answered_in_order() -> None:
    run = _read(
        {"type": "tool_call", "id": "c", "name": "a"},
        {"type": "tool_result", "id": "c", "result": "one"},
        {"type": "tool_call", "id": "c", "name": "b"},
        {"type": "tool_result", "id": "c", "result": "two"},
    )
    assert [(c.name, c.result) for c in run.tool_calls] == [("a", "one"), ("b", "two")]


def test_a_malformed_line_names_its_number_and_the_fix() -> None:
    text = _stream({"type": "user", "text": "hi"}) + '{"type": "final" "text": "x"}\n'
    error = _error(text)
    assert error.line == 2
    assert "line 2" in str(error) and "not JSON" in str(error)
    assert "each line must be one JSON object" in str(error)


def test_an_unfinished_last_line_is_dropped_and_marked() -> None:
    text = _stream({"type": "tool_call", "id": "c1", "name": "slow"}) + '{"type": "tool_res'
    run = parse_record(text, "jsonl")
    assert run.tools_called == ["slow"]
    assert run.metadata["truncated_line"] == 2


def test_only_the_cut_last_line_is_dropped_never_a_null_line() -> None:
    error = _error('null\n{"type": "user", "text": "hi"}\n{"type": "fin')
    assert error.line == 1 and "a JSON null" in str(error)


def test_a_broken_last_line_that_was_finished_is_an_error() -> None:
    text = _stream({"type": "user", "text": "hi"}) + '{"type": "tool_res\n'
    assert _error(text).line == 2


def test_an_unknown_type_names_the_line_the_closest_type_and_all_types() -> None:
    error = _error(_stream({"type": "user", "text": "a"}, {"type": "tool_cal", "name": "x"}))
    assert error.line == 2
    assert "did you mean 'tool_call'" in str(error)
    assert "tool_result" in str(error) and "passage" in str(error)


def test_an_unknown_field_is_refused_with_the_closest_one() -> None:
    error = _error(_stream({"type": "tool_call", "name": "x", "arguments": {}}))
    assert "no field 'arguments'" in str(error) and "did you mean 'args'" in str(error)


@pytest.mark.parametrize(
    ("event", "words"),
    [
        ({"type": "user"}, "needs 'text'"),
        ({"type": "user", "text": 5}, "'text' must be a string"),
        ({"type": "tool_call", "name": "x", "args": [1]}, "'args' must be a JSON object"),
        ({"type": "usage", "input_tokens": -3}, "non-negative integer"),
        ({"type": "final", "text": "x", "ts": "noon"}, "'ts' must be a number"),
        ({"type": "meta", "seed": "abc"}, "meta 'seed' must be an integer"),
        ({"text": "x"}, "no string 'type'"),
        (["user", "x"], "a JSON array, not an object"),
        (None, "a JSON null, not an object"),
    ],
)
def test_a_badly_typed_event_says_which_field(event: Any, words: str) -> None:
    error = _error(_stream({"type": "user", "text": "ok"}, event))
    assert error.line == 2
    assert words in str(error)


def test_a_result_for_an_unknown_call_names_the_known_ids() -> None:
    error = _error(
        _stream(
            {"type": "tool_call", "id": "c1", "name": "x"},
            {"type": "tool_result", "id": "c9", "result": "?"},
        )
    )
    assert error.line == 2 and "'c9'" in str(error) and "c1" in str(error)


def test_a_second_result_for_one_call_is_an_error() -> None:
    error = _error(
        _stream(
            {"type": "tool_call", "id": "c1", "name": "x"},
            {"type": "tool_result", "id": "c1", "result": "a"},
            {"type": "tool_result", "id": "c1", "result": "b"},
        )
    )
    assert error.line == 3 and "second tool_result" in str(error)


def test_an_empty_trace_is_an_empty_record() -> None:
    run = parse_record("\n\n", "jsonl")
    assert (run.tool_calls, run.final_answer, run.turns) == ([], None, 0)


def test_many_records_of_twenty_calls_each_read_whole() -> None:
    def trace(n: int) -> str:
        events: list[dict[str, Any]] = [{"type": "task", "prompt": f"order {n}", "ts": 1.0}]
        for i in range(20):
            events.append({"type": "tool_call", "id": f"c{i}", "name": "get", "args": {"i": i}})
            events.append({"type": "tool_result", "id": f"c{i}", "result": {"ok": True}})
        events.append({"type": "final", "text": "done", "ts": 2.0})
        return _stream(*events)

    runs = [parse_record(trace(n), "jsonl") for n in range(200)]
    assert all(len(run.tool_calls) == 20 for run in runs)
    assert [call.args for call in runs[7].tool_calls] == [{"i": i} for i in range(20)]
    assert runs[7].task == "order 7"


def test_one_long_trace_with_a_reused_id_pairs_every_result() -> None:
    events: list[dict[str, Any]] = []
    for i in range(10_000):
        events.append({"type": "tool_call", "id": "same", "name": "poll", "args": {"i": i}})
        events.append({"type": "tool_result", "id": "same", "result": i})
    run = parse_record(_stream(*events), "jsonl")
    assert len(run.tool_calls) == 10_000
    assert run.tool_calls[-1].result == "9999"
