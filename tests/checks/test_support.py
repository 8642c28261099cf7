"""Rules of a support agent, read from hand-built run records."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from sounding.checks import CheckContext, CheckResult, Evidence, Status, registry
from sounding.record import Approval, Passage, RunRecord, ToolCall


def call(name: str, call_id: str = "", result: str | None = None, **args: Any) -> ToolCall:
    return ToolCall(id=call_id or name, name=name, args=args, result=result)


def check(name: str, raw: Any, record: RunRecord) -> CheckResult:
    kind = registry.get(name)
    return kind.run(kind.parse(raw), CheckContext(evidence=Evidence(record=record)))


def refused(name: str, raw: Any) -> None:
    with pytest.raises(ValidationError):
        registry.get(name).parse(raw)


# ---- first_tool ------------------------------------------------------------------------

LOOKUPS = ["search_orders", "get_order"]


def test_first_tool_passes_when_the_run_opens_with_a_lookup() -> None:
    record = RunRecord(tool_calls=[call("get_order"), call("issue_refund")])
    assert check("first_tool", LOOKUPS, record).status is Status.PASSED
    assert check("first_tool", "get_order", record).status is Status.PASSED


def test_first_tool_fails_when_the_run_acts_first() -> None:
    record = RunRecord(tool_calls=[call("issue_refund"), call("get_order")])
    result = check("first_tool", {"one_of": LOOKUPS}, record)
    assert (result.status, result.reason) == (
        Status.FAILED,
        "the first tool called was 'issue_refund', expected one of: search_orders, get_order",
    )


def test_first_tool_fails_when_no_tool_was_called() -> None:
    result = check("first_tool", LOOKUPS, RunRecord())
    assert result.status is Status.FAILED
    assert result.reason.startswith("no tool was called")


def test_first_tool_refuses_bad_params() -> None:
    refused("first_tool", [])
    refused("first_tool", {"one_of": ["a"], "strict": True})


# ---- once_per_arg ----------------------------------------------------------------------


def test_once_per_arg_allows_one_call_per_value() -> None:
    record = RunRecord(
        tool_calls=[
            call("issue_refund", "r1", order_id="A-1"),
            call("issue_refund", "r2", order_id="A-2"),
            call("get_order", order_id="A-1"),
        ]
    )
    assert check("once_per_arg", {"name": "issue_refund", "arg": "order_id"}, record).score == 1.0


def test_once_per_arg_fails_on_the_double_refund() -> None:
    record = RunRecord(
        tool_calls=[
            call("issue_refund", "r1", order_id="A-1", amount_cents=100),
            call("get_order", order_id="A-1"),
            call("issue_refund", "r2", order_id="A-1", amount_cents=200),
        ]
    )
    result = check("once_per_arg", {"name": "issue_refund", "arg": "order_id"}, record)
    assert (result.status, result.reason) == (
        Status.FAILED,
        "tool 'issue_refund' was called 2 times with order_id=\"A-1\" (calls #1, #3), "
        "at most once allowed",
    )


def test_once_per_arg_counts_calls_without_the_arg_together() -> None:
    record = RunRecord(tool_calls=[call("issue_refund", "r1"), call("issue_refund", "r2")])
    result = check("once_per_arg", {"name": "issue_refund", "arg": "order_id"}, record)
    assert result.status is Status.FAILED
    assert "2 times without 'order_id'" in result.reason


def test_once_per_arg_refuses_bad_params() -> None:
    refused("once_per_arg", {"name": "issue_refund"})
    refused("once_per_arg", "issue_refund")


# ---- arg_ceiling -----------------------------------------------------------------------

CEILING = {"name": "issue_refund", "arg": "amount_cents", "max": 15000}


def test_arg_ceiling_passes_under_the_ceiling() -> None:
    record = RunRecord(tool_calls=[call("issue_refund", amount_cents=15000)])
    assert check("arg_ceiling", CEILING, record).status is Status.PASSED


def test_arg_ceiling_fails_over_the_ceiling_without_approval() -> None:
    record = RunRecord(
        tool_calls=[call("get_order"), call("issue_refund", "r1", amount_cents="20000")]
    )
    result = check("arg_ceiling", CEILING, record)
    assert (result.status, result.reason) == (
        Status.FAILED,
        "call #2 of tool 'issue_refund' has amount_cents='20000', over the ceiling 15000 "
        "with no recorded approval",
    )


def test_arg_ceiling_passes_over_the_ceiling_with_an_approval_for_that_call() -> None:
    record = RunRecord(
        tool_calls=[call("issue_refund", "r1", amount_cents=20000)],
        approvals=[Approval(id="ap-1", tool_call_id="r1", by="lead")],
    )
    assert check("arg_ceiling", CEILING, record).status is Status.PASSED
    strict = {**CEILING, "unless_approved": False}
    assert check("arg_ceiling", strict, record).status is Status.FAILED


def test_arg_ceiling_approval_of_another_call_does_not_count() -> None:
    record = RunRecord(
        tool_calls=[call("issue_refund", "r1", amount_cents=20000)],
        approvals=[Approval(id="ap-1", tool_call_id="r9")],
    )
    assert check("arg_ceiling", CEILING, record).status is Status.FAILED


def test_arg_ceiling_is_an_error_when_the_value_cannot_be_read() -> None:
    missing = RunRecord(tool_calls=[call("issue_refund", amount=10)])
    result = check("arg_ceiling", CEILING, missing)
    assert result.status is Status.ERROR
    assert result.reason == (
        "call #1 of tool 'issue_refund' has no argument 'amount_cents' (it has: amount); "
        "check 'arg'"
    )
    words = RunRecord(tool_calls=[call("issue_refund", amount_cents="a lot")])
    assert "is not a number" in check("arg_ceiling", CEILING, words).reason


def test_arg_ceiling_a_violation_outweighs_an_unreadable_call() -> None:
    record = RunRecord(
        tool_calls=[
            call("issue_refund", "r1", amount_cents=True),
            call("issue_refund", "r2", amount_cents=99999),
        ]
    )
    assert check("arg_ceiling", CEILING, record).status is Status.FAILED


def test_arg_ceiling_refuses_bad_params() -> None:
    refused("arg_ceiling", {"name": "issue_refund", "arg": "amount_cents"})
    refused("arg_ceiling", {**CEILING, "max": "lots"})


# ---- provenance ------------------------------------------------------------------------


def test_provenance_passes_when_the_id_was_shown_before_the_call() -> None:
    record = RunRecord(
        task="My parcel never arrived.",
        tool_calls=[
            call("search_orders", result='[{"order_id": "A-12", "sku": "SKU-9"}]'),
            call("issue_refund", order_id="A-12", items=["SKU-9"], amount=12.0),
        ],
    )
    raw = {"name": "issue_refund", "args": ["order_id", "items"]}
    assert check("provenance", raw, record).status is Status.PASSED


def test_provenance_fails_on_an_id_made_up_from_nothing() -> None:
    record = RunRecord(
        task="Refund my order please.",
        tool_calls=[
            call("search_orders", result='[{"order_id": "A-12"}]'),
            call("issue_refund", order_id="A-1"),
        ],
    )
    result = check("provenance", {"name": "issue_refund", "args": "order_id"}, record)
    assert (result.status, result.reason) == (
        Status.FAILED,
        "call #2 of tool 'issue_refund' used order_id='A-1', "
        "which the run had not been shown before that call",
    )


def test_provenance_does_not_count_what_came_after_the_call() -> None:
    record = RunRecord(
        task="Refund my order.",
        tool_calls=[
            call("issue_refund", order_id="A-12"),
            call("search_orders", result="A-12"),
        ],
    )
    assert check("provenance", {"name": "issue_refund", "args": ["order_id"]}, record).status is (
        Status.FAILED
    )


def test_provenance_checks_each_item_of_a_list() -> None:
    record = RunRecord(
        task="Return SKU-1 and SKU-2 from my order.",
        tool_calls=[call("create_return", skus=["SKU-1", "SKU-2", "SKU-3"])],
    )
    result = check("provenance", {"name": "create_return", "args": ["skus"]}, record)
    assert result.status is Status.FAILED
    assert "skus='SKU-3'" in result.reason


def test_provenance_refuses_bad_params() -> None:
    refused("provenance", {"name": "issue_refund", "args": []})
    refused("provenance", {"name": "issue_refund"})


# ---- citations -------------------------------------------------------------------------

CLAUSE = r"\[(clause-\d+)\]"


def cited(answer: str | None, *returned: str) -> RunRecord:
    return RunRecord(final_answer=answer, passages=[Passage(id=p) for p in returned])


def test_citations_pass_when_every_cited_clause_was_retrieved() -> None:
    record = cited("Refunds are due [clause-4], within 30 days [clause-7].", "clause-4", "clause-7")
    result = check("citations", {"pattern": CLAUSE}, record)
    assert (result.status, result.reason) == (
        Status.PASSED,
        "the answer cites 2 ids, all returned this run",
    )
    one = check("citations", {"pattern": CLAUSE}, cited("See [clause-4].", "clause-4"))
    assert one.reason == "the answer cites 1 id, all returned this run"


def test_citations_pass_when_nothing_is_cited() -> None:
    result = check("citations", {"pattern": CLAUSE}, cited("No policy applies."))
    assert (result.status, result.reason) == (Status.PASSED, "the answer cites nothing")


def test_citations_fail_on_a_clause_not_retrieved_this_run() -> None:
    record = cited("See [clause-4] and [clause-9].", "clause-4")
    result = check("citations", {"pattern": CLAUSE}, record)
    assert (result.status, result.reason) == (
        Status.FAILED,
        "the answer cites 'clause-9', which no passage returned this run",
    )


def test_citations_fail_on_an_unknown_clause() -> None:
    record = cited("See [clause-4].", "clause-4")
    result = check("citations", {"pattern": CLAUSE, "known": ["clause-1"]}, record)
    assert (result.status, result.reason) == (
        Status.FAILED,
        "the answer cites 'clause-4', which is not a known id",
    )


def test_citations_refuse_a_pattern_without_a_group() -> None:
    with pytest.raises(ValidationError, match="no group to capture"):
        registry.get("citations").parse({"pattern": r"clause-\d+"})
    refused("citations", {"pattern": "(unclosed"})


def test_citations_take_a_pattern_of_the_regex_engine() -> None:
    record = cited("Voir [Clause-é].", "Clause-é")
    result = check("citations", {"pattern": r"\[(\p{L}+-\p{L})\]"}, record)
    assert result.status is Status.PASSED


# ---- no_foreign_data -------------------------------------------------------------------


def test_no_foreign_data_passes_with_only_the_customers_own_data() -> None:
    record = RunRecord(final_answer="We wrote to Ann@Example.com about card 4111 1111 1111 1111.")
    raw = {"own": ["ann@example.com", "4111-1111-1111-1111"]}
    assert check("no_foreign_data", raw, record).status is Status.PASSED


def test_no_foreign_data_fails_on_another_partys_email_and_masks_it() -> None:
    record = RunRecord(final_answer="Your neighbour bob.smith@example.org ordered it too.")
    result = check("no_foreign_data", {"own": ["ann@example.com"]}, record)
    assert result.status is Status.FAILED
    assert result.reason == "the answer shows bo***.org, which is not the customer's own data"
    assert "bob.smith" not in result.model_dump_json()


def test_no_foreign_data_fails_on_a_card_number() -> None:
    record = RunRecord(final_answer="The card on file is 5500-0000-0000-0004.")
    result = check("no_foreign_data", {}, record)
    assert result.status is Status.FAILED
    assert result.details["found"] == ["55***0004"]


def test_no_foreign_data_with_own_patterns() -> None:
    record = RunRecord(final_answer="Seller balance: 1,204.55 EUR")
    raw = {"patterns": [r"balance: [\d,.]+"]}
    assert check("no_foreign_data", raw, record).status is Status.FAILED
    assert check("no_foreign_data", raw, RunRecord(final_answer=None)).status is Status.PASSED


def test_no_foreign_data_refuses_bad_params() -> None:
    refused("no_foreign_data", {"patterns": []})
    refused("no_foreign_data", {"patterns": ["(bad"]})
