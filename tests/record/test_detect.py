"""Reading a file whose format is named or detected, and the errors that say why not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sounding.record import (
    RECORD_FORMATS,
    RecordError,
    RunRecord,
    ToolCall,
    detect_format,
    load_record,
    parse_record,
)

OPENAI_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}
ANTHROPIC_CALL = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
}


@pytest.mark.parametrize(
    ("data", "format", "why"),
    [
        ({"schema": "sounding.run/1"}, "sounding", "'schema'"),
        ({"traj": [], "reward": 1.0}, "openai", "tau-bench"),
        ([{"role": "user", "content": "hi"}, OPENAI_CALL], "openai", "'tool_calls'"),
        ([{"role": "tool", "tool_call_id": "c", "content": "x"}], "openai", "role 'tool'"),
        (
            {"messages": [{"role": "user", "content": "hi"}, ANTHROPIC_CALL]},
            "anthropic",
            "tool_use",
        ),
        ({"system": "s", "messages": [{"role": "user", "content": "hi"}]}, "anthropic", "system"),
        ([{"role": "user", "content": "hi"}], "openai", "alike"),
        ({"type": "final", "text": "x"}, "jsonl", "single event"),
    ],
)
def test_the_format_is_detected_with_a_reason(data: Any, format: str, why: str) -> None:
    found, reason = detect_format(json.dumps(data))
    assert found == format
    assert why in reason


def test_json_lines_are_detected_from_the_first_line() -> None:
    text = '{"type": "user", "text": "hi"}\n{"type": "final", "text": "yo"}\n'
    assert detect_format(text)[0] == "jsonl"
    assert parse_record(text).final_answer == "yo"


def test_a_jsonl_suffix_means_the_event_stream(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text("")
    assert load_record(path).source_format == "jsonl"


def test_a_detected_file_reads_in_its_format(tmp_path: Path) -> None:
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}, ANTHROPIC_CALL]))
    run = load_record(path)
    assert (run.source_format, run.tools_called) == ("anthropic", ["f"])


def test_a_stored_record_round_trips_through_a_file(tmp_path: Path) -> None:
    run = RunRecord(task="t", tool_calls=[ToolCall(id="1", name="f", args={"a": [1]})])
    path = tmp_path / "record.json"
    path.write_text(run.to_json())
    assert load_record(path) == run


def test_mixed_signals_are_refused_with_both_reasons() -> None:
    with pytest.raises(RecordError) as caught:
        detect_format(json.dumps([OPENAI_CALL, ANTHROPIC_CALL]), "mixed.json")
    message = str(caught.value)
    assert "'tool_calls'" in message and "tool_use" in message
    assert "pass the format explicitly" in message and "anthropic" in message


def test_a_json_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n  {"role": "user",\n   "content" "hi"}\n]\n')
    with pytest.raises(RecordError) as caught:
        load_record(path)
    assert (caught.value.line, caught.value.column) == (3, 14)
    assert str(caught.value).startswith(f"{path}, line 3, column 14: not JSON: Expecting ':'")


def test_a_json_error_in_an_explicit_format_names_line_and_column() -> None:
    with pytest.raises(RecordError) as caught:
        parse_record('{"messages": [}', "anthropic", source="x.json")
    assert (caught.value.line, caught.value.column) == (1, 15)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("42", "a JSON number"),
        ('{"name": "x", "steps": []}', "its keys: name, steps"),
        ("[1, 2]", "not all messages"),
        ("hello", "not JSON"),
    ],
)
def test_an_undetectable_text_says_what_was_seen(text: str, words: str) -> None:
    with pytest.raises(RecordError) as caught:
        parse_record(text, source="in.json")
    assert words in str(caught.value)


def test_an_unknown_format_name_suggests_the_closest() -> None:
    with pytest.raises(RecordError, match="did you mean 'openai'"):
        parse_record("[]", "open-ai")
    assert RECORD_FORMATS == ("sounding", "jsonl", "openai", "anthropic", "otel")


def test_another_schema_version_is_refused_with_the_fix() -> None:
    with pytest.raises(
        RecordError, match=r"sounding\.run/2; this version .* reads sounding\.run/1"
    ):
        parse_record('{"schema": "sounding.run/2"}')
    with pytest.raises(RecordError, match="starting with"):
        parse_record('{"schema": "other/1"}', "sounding")


def test_a_stored_trial_gives_its_record() -> None:
    record = RunRecord(final_answer="done", user_turns=["go"])
    stored = json.loads(record.to_json())
    trial = {"schema": "sounding.trial/2", "verdict": "pass", "record": stored}
    assert parse_record(json.dumps(trial)) == record
    trial["record"] = {"schema": "sounding.run/1", "turns": "many"}
    with pytest.raises(RecordError, match=r"<record>: record.*turns"):
        parse_record(json.dumps(trial))
    del trial["record"]  # the harness failed before the agent ran
    with pytest.raises(RecordError, match="left no run record"):
        parse_record(json.dumps(trial))


def test_an_invalid_stored_record_names_the_field() -> None:
    text = json.dumps(
        {"schema": "sounding.run/1", "tool_calls": [{"id": "1", "name": "f", "args": 3}]}
    )
    expected = r"tool_calls\[0\]\.args: must be a mapping \(key: value\) \(got int 3\)"
    with pytest.raises(RecordError, match=expected):
        parse_record(text)


def test_file_problems_are_record_errors(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="no such file; check the path"):
        load_record(tmp_path / "missing.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(RecordError, match=r"not UTF-8 text \(byte 7\)"):
        load_record(binary)
