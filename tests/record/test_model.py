"""The run record's derived views: what checks read instead of walking messages."""

from __future__ import annotations

import json

from sounding.record import (
    SCHEMA,
    Approval,
    Message,
    Passage,
    RunRecord,
    ToolCall,
    parse_record,
)


def _refund_run() -> RunRecord:
    """A two-turn support run: lookup, refund, then a second refund after the user's reply."""
    return RunRecord(
        task="Refund order A-100, it arrived broken",
        user_turns=["Refund order A-100, it arrived broken", "Also refund B-7 please"],
        messages=[
            Message(role="user", content="Refund order A-100, it arrived broken", turn=1),
            Message(role="assistant", content=None, tool_call_ids=["c1", "c2"], turn=1),
            Message(role="user", content="Also refund B-7 please", turn=2),
        ],
        tool_calls=[
            ToolCall(
                id="c1",
                name="get_order",
                args={"order_id": "A-100"},
                result='{"order_id": "A-100", "payment": "pay-55"}',
                turn=1,
            ),
            ToolCall(
                id="c2", name="issue_refund", args={"payment": "pay-55", "cents": 900}, turn=1
            ),
            ToolCall(id="c3", name="issue_refund", args={"order_id": "B-7"}, turn=2),
        ],
        passages=[Passage(id="policy-3.2", text="Broken items are refunded."), Passage(id="p-9")],
        approvals=[Approval(id="ap-1", tool_call_id="c2", by="supervisor")],
    )


def test_tools_called_lists_names_in_call_order() -> None:
    assert _refund_run().tools_called == ["get_order", "issue_refund", "issue_refund"]


def test_calls_selects_one_tool_in_order() -> None:
    run = _refund_run()
    assert [c.id for c in run.calls("issue_refund")] == ["c2", "c3"]
    assert run.calls("offer_replacement") == []


def test_ids_seen_before_holds_user_text_and_earlier_results_only() -> None:
    run = _refund_run()
    before_lookup = run.ids_seen_before(0)
    assert "A-100" in before_lookup
    assert "pay-55" not in before_lookup  # only the lookup's own result names it
    assert "pay-55" in run.ids_seen_before(1)


def test_ids_seen_before_does_not_count_a_later_user_turn() -> None:
    run = _refund_run()
    assert "B-7" not in run.ids_seen_before(1)  # said in turn 2, after this turn-1 call
    assert "B-7" in run.ids_seen_before(2)
    assert "B-7" in run.ids_seen


def test_a_call_of_unknown_turn_sees_every_user_turn() -> None:
    run = RunRecord(
        user_turns=["first", "then order Z-1"],
        tool_calls=[ToolCall(id="x", name="get_order", args={"order_id": "Z-1"})],
    )
    assert "Z-1" in run.ids_seen_before(0)


def test_passages_returned_are_the_ids_retrieved() -> None:
    assert _refund_run().passages_returned == {"policy-3.2", "p-9"}


def test_approved_matches_the_call_or_a_general_approval_of_its_tool() -> None:
    run = _refund_run()
    first, _second, third = run.tool_calls
    assert run.approved(run.tool_calls[1])
    assert not run.approved(third)  # the approval names another call
    assert not run.approved(first)
    general = run.model_copy(update={"approvals": [Approval(id="ap-2", tool="issue_refund")]})
    assert general.approved(third)
    assert not general.approved(first)


def test_message_text_keeps_only_text_blocks() -> None:
    message = Message(
        role="user",
        content=[
            {"type": "text", "text": "look at"},
            {"type": "image", "source": {"data": "..."}},
            {"type": "text", "text": "this"},
        ],
    )
    assert message.text == "look at\nthis"
    assert Message(role="assistant", content=None).text == ""


def test_a_stored_record_reads_back_equal_with_its_schema_first() -> None:
    run = _refund_run()
    stored = run.to_json()
    assert json.loads(stored)["schema"] == SCHEMA
    assert parse_record(stored, "sounding") == run
