"""Anthropic Messages-API conversations: tool_use and tool_result blocks, system apart."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sounding.record import RecordError, RunRecord, parse_record

CONVERSATION: dict[str, Any] = {
    "model": "claude-x",
    "max_tokens": 1024,
    "system": [{"type": "text", "text": "You are a support agent."}],
    "messages": [
        {"role": "user", "content": "Where is order A-1?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "tu_1", "name": "get_order", "input": {"id": "A-1"}},
                {"type": "tool_use", "id": "tu_2", "name": "get_carrier", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "tu_1", "content": "shipped via C-9"},
                {
                    "type": "tool_result",
                    "tool_use_id": "tu_2",
                    "content": [{"type": "text", "text": "carrier down"}],
                    "is_error": True,
                },
            ],
        },
        {"role": "assistant", "content": "It shipped via C-9."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Thanks, and B-2?"},
                {"type": "image", "source": {"type": "base64", "data": "..."}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "tu_3", "name": "get_order", "input": {"id": "B-2"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "tu_3", "content": "lost"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "B-2 was lost."}]},
    ],
}


def _anthropic(data: Any) -> RunRecord:
    return parse_record(json.dumps(data), "anthropic", source="conv.json")


def test_tool_use_blocks_become_calls_with_their_results() -> None:
    run = _anthropic(CONVERSATION)
    first, second, third = run.tool_calls
    assert (first.id, first.name, first.args, first.result) == (
        "tu_1",
        "get_order",
        {"id": "A-1"},
        "shipped via C-9",
    )
    assert (second.result, second.is_error) == ("carrier down", True)
    assert (third.args, third.result, third.turn) == ({"id": "B-2"}, "lost", 2)
    assert run.messages[2].tool_call_ids == ["tu_1", "tu_2"]


def test_only_user_text_opens_a_turn_and_the_system_prompt_stays_apart() -> None:
    run = _anthropic(CONVERSATION)
    assert run.turns == 2
    assert run.user_turns == ["Where is order A-1?", "Thanks, and B-2?"]
    assert run.task == "Where is order A-1?"
    assert run.messages[0].role == "system"
    assert run.messages[0].text == "You are a support agent."
    assert [m.turn for m in run.messages] == [0, 1, 1, 1, 1, 2, 2, 2, 2]


def test_the_final_answer_is_the_last_assistant_text_and_the_rest_is_kept() -> None:
    run = _anthropic(CONVERSATION)
    assert run.final_answer == "B-2 was lost."
    assert (run.model, run.metadata, run.source_format) == (
        "claude-x",
        {"max_tokens": 1024},
        "anthropic",
    )


def test_a_bare_message_list_is_read_too() -> None:
    run = _anthropic(CONVERSATION["messages"])
    assert run.tools_called == ["get_order", "get_carrier", "get_order"]
    assert run.model is None


def test_server_tools_and_their_results_are_calls() -> None:
    search_result = [{"type": "web_search_result", "url": "https://x.example", "title": "X"}]
    run = _anthropic(
        [
            {"role": "user", "content": "search x"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "server_tool_use",
                        "id": "srv_1",
                        "name": "web_search",
                        "input": {"query": "x"},
                    },
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srv_1",
                        "content": search_result,
                    },
                    {"type": "text", "text": "Found X."},
                ],
            },
        ]
    )
    (call,) = run.tool_calls
    assert (call.name, call.args) == ("web_search", {"query": "x"})
    assert json.loads(call.result or "") == search_result
    assert run.final_answer == "Found X."


def test_an_orphan_result_is_noted_not_lost() -> None:
    run = _anthropic(
        [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "r"}]}]
    )
    assert run.turns == 0
    assert run.messages[0].content == [{"type": "tool_result", "tool_use_id": "x", "content": "r"}]
    assert "'x'" in run.metadata["import_notes"][0]


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([{"role": "usr", "content": "x"}], "did you mean 'user'"),
        ([{"role": "assistant", "content": [{"type": "tool_use", "name": "f"}]}], "content[0]"),
        ([{"role": "user", "content": ["text"]}], "messages[0].content"),
        ({"system": "s"}, "no 'messages' list"),
    ],
)
def test_a_shape_that_cannot_be_read_names_the_place(data: Any, words: str) -> None:
    with pytest.raises(RecordError, match=r"^conv\.json") as caught:
        _anthropic(data)
    assert words in str(caught.value)
