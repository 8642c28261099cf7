"""OpenAI chat-completions lists, checked against real tau-bench runs nobody here wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sounding.record import RecordError, RunRecord, load_record, parse_record

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tau-bench"
TAU_FILES = sorted(FIXTURES.glob("*.json"))
SHARED = Path("/work/shared/data/tau-bench-gpt-4o-airline.json")


def _openai(messages: Any) -> RunRecord:
    return parse_record(json.dumps(messages), "openai", source="chat.json")


def _assert_lossless(entry: dict[str, Any], run: RunRecord) -> None:
    """Every call with its arguments and result, the call count and the final answer."""
    traj = entry["traj"]
    calls = [call for m in traj if m["role"] == "assistant" for call in m.get("tool_calls") or []]
    results = [m for m in traj if m["role"] == "tool"]
    assert len(run.tool_calls) == len(calls)
    for got, call, result in zip(run.tool_calls, calls, results, strict=False):
        assert result["tool_call_id"] == call["id"]  # tau-bench answers each call in turn
        assert (got.id, got.name) == (call["id"], call["function"]["name"])
        assert got.args == json.loads(call["function"]["arguments"])
        assert got.args_error is None
        assert got.result == result["content"]
    answered = len(results)
    assert all(c.result is None for c in run.tool_calls[answered:])
    texts = [m["content"] for m in traj if m["role"] == "assistant" and m.get("content")]
    assert run.final_answer == texts[-1]


def test_the_fixtures_are_diverse() -> None:
    entries = [json.loads(path.read_text()) for path in TAU_FILES]
    assert len(entries) >= 4
    assert {e["reward"] for e in entries} == {0.0, 1.0}
    assert max(sum(len(m.get("tool_calls") or []) for m in e["traj"]) for e in entries) >= 20
    assert (FIXTURES / "LICENSE").read_text().startswith("MIT License")


@pytest.mark.parametrize("path", TAU_FILES, ids=lambda p: p.stem)
def test_a_tau_bench_run_imports_without_loss(path: Path) -> None:
    entry = json.loads(path.read_text())
    run = load_record(path)
    assert run.source_format == "openai"
    _assert_lossless(entry, run)
    users = [m["content"] for m in entry["traj"] if m["role"] == "user"]
    assert (run.user_turns, run.turns, run.task) == (users, len(users), users[0])
    assert run.metadata["reward"] == entry["reward"]
    assert run.metadata["task_id"] == entry["task_id"]
    assert run.messages[0].role == "system"


def test_provenance_on_a_real_run_an_id_comes_from_an_earlier_result() -> None:
    run = load_record(FIXTURES / "airline-task-03-trial-0.json")
    lookup = run.tool_calls[1]
    assert lookup.args == {"reservation_id": "OI5L9G"}
    assert "OI5L9G" not in run.ids_seen_before(0)  # nobody said it before the profile came
    assert "OI5L9G" in run.ids_seen_before(1)  # the get_user_details result listed it


@pytest.mark.skipif(not SHARED.exists(), reason=f"{SHARED} is not part of the project")
def test_all_two_hundred_shared_runs_import_without_loss() -> None:
    entries = json.loads(SHARED.read_text())
    assert len(entries) == 200
    for entry in entries:
        _assert_lossless(entry, parse_record(json.dumps(entry), source=f"task {entry['task_id']}"))


def test_arguments_that_are_not_json_are_kept_raw_and_marked() -> None:
    run = _openai(
        [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{x"}},
                    {"id": "b", "type": "function", "function": {"name": "g", "arguments": "[1]"}},
                    {"id": "c", "type": "function", "function": {"name": "h", "arguments": ""}},
                ],
            },
        ]
    )
    broken, listed, empty = run.tool_calls
    assert broken.args == {"_raw": "{x"} and "not valid JSON" in (broken.args_error or "")
    assert listed.args == {"_raw": "[1]"} and "not an object" in (listed.args_error or "")
    assert (empty.args, empty.args_error) == ({}, None)


def test_a_request_body_keeps_its_model_and_the_other_keys() -> None:
    body = {
        "model": "gpt-4o",
        "temperature": 0,
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]},
        ],
    }
    run = parse_record(json.dumps(body), "openai")
    assert (run.model, run.metadata, run.task, run.final_answer) == (
        "gpt-4o",
        {"temperature": 0},
        "Hi",
        "Hello",
    )
    assert run.messages[0].role == "system"


def test_the_legacy_function_call_form_is_read() -> None:
    run = _openai(
        [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "weather", "arguments": '{"city": "Oslo"}'},
            },
            {"role": "function", "name": "weather", "content": "rain"},
            {"role": "assistant", "content": "It rains in Oslo."},
        ]
    )
    (call,) = run.tool_calls
    assert (call.name, call.args, call.result) == ("weather", {"city": "Oslo"}, "rain")
    assert run.final_answer == "It rains in Oslo."


def test_a_result_that_answers_no_call_is_kept_and_noted() -> None:
    run = _openai(
        [
            {"role": "tool", "tool_call_id": "gone", "content": "old result"},
            {"role": "user", "content": "hi"},
        ]
    )
    assert run.messages[0].content == "old result"
    assert run.tool_calls == []
    assert "messages[0]" in run.metadata["import_notes"][0]


def test_a_refusal_counts_as_the_answer_text() -> None:
    run = _openai([{"role": "user", "content": "x"}, {"role": "assistant", "refusal": "No."}])
    assert run.final_answer == "No."


@pytest.mark.parametrize(
    ("messages", "words"),
    [
        ([{"role": "asistant", "content": "x"}], "did you mean 'assistant'"),
        ([{"role": "user", "content": 5}], "messages[0].content"),
        ([{"role": "assistant", "tool_calls": [{"id": "x"}]}], "messages[0].tool_calls[0]"),
        ({"choices": []}, "neither 'messages' nor 'traj'"),
        (["hello"], "not a message"),
    ],
)
def test_a_shape_that_cannot_be_read_names_the_place(messages: Any, words: str) -> None:
    with pytest.raises(RecordError, match=r"^chat\.json") as caught:
        _openai(messages)
    assert words in str(caught.value)
