"""Assertions on the run record: tool calls, the final answer, hooks, errors."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from sounding.checks import CheckContext, CheckResult, Evidence, Status, registry
from sounding.record import HookDecision, RunRecord, ToolCall


def call(name: str, result: str | None = None, **args: Any) -> ToolCall:
    return ToolCall(id=f"{name}-{len(args)}", name=name, args=args, result=result)


SUPPORT_RUN = RunRecord(
    task="Order A-1 arrived broken, I want my money back.",
    tool_calls=[
        call("search_orders", result='[{"order_id": "A-1", "total": 4200}]', query="A-1"),
        call("get_policy", result="Clause R-2: refunds within 30 days."),
        call("issue_refund", order_id="A-1", amount_cents=4200, meta={"reason": "broken"}),
        call("send_email", to="buyer@example.com"),
    ],
    final_answer="I have refunded 42.00 EUR for order A-1.\nRef: R-2",
    hooks=[
        HookDecision(name="tools.before", decision="allow"),
        HookDecision(name="tools.before", decision="deny"),
        HookDecision(name="audit", decision=None),
    ],
)


def check(name: str, raw: Any, record: RunRecord = SUPPORT_RUN) -> CheckResult:
    kind = registry.get(name)
    return kind.run(kind.parse(raw), CheckContext(evidence=Evidence(record=record)))


def refused(name: str, raw: Any) -> None:
    with pytest.raises(ValidationError):
        registry.get(name).parse(raw)


# ---- tool_called -----------------------------------------------------------------------


def test_tool_called_passes_by_name_alone() -> None:
    result = check("tool_called", "issue_refund")
    assert (result.status, result.reason) == (Status.PASSED, "tool 'issue_refund' was called once")


def test_tool_called_matches_args_as_a_recursive_subset() -> None:
    raw = {"name": "issue_refund", "args": {"order_id": "A-1", "meta": {"reason": "broken"}}}
    assert check("tool_called", raw).status is Status.PASSED


def test_tool_called_fails_when_never_called() -> None:
    result = check("tool_called", {"name": "offer_replacement"})
    assert (result.status, result.reason) == (
        Status.FAILED,
        "tool 'offer_replacement' was never called",
    )


def test_tool_called_names_the_arg_that_differed_on_the_closest_call() -> None:
    record = RunRecord(
        tool_calls=[
            call("issue_refund", order_id="B-7", amount_cents=100),
            call("issue_refund", order_id="A-1", amount_cents=999),
        ]
    )
    raw = {"name": "issue_refund", "args": {"order_id": "A-1", "amount_cents": 4200}}
    result = check("tool_called", raw, record)
    assert result.status is Status.FAILED
    assert result.reason == (
        "tool 'issue_refund' was never called with the expected args: "
        "on the closest call (#2) args.amount_cents is 999, expected 4200"
    )


def test_tool_called_reports_a_missing_nested_key_and_keeps_bools_apart() -> None:
    nested = {"name": "issue_refund", "args": {"meta": {"channel": "email"}}}
    assert "args.meta.channel is missing" in check("tool_called", nested).reason
    record = RunRecord(tool_calls=[call("notify", urgent=1)])
    assert check("tool_called", {"name": "notify", "args": {"urgent": True}}, record).status is (
        Status.FAILED
    )


def test_tool_called_compares_lists_item_by_item() -> None:
    record = RunRecord(tool_calls=[call("tag", labels=["refund", "broken"])])
    same = {"name": "tag", "args": {"labels": ["refund", "broken"]}}
    assert check("tool_called", same, record).status is Status.PASSED
    other = {"name": "tag", "args": {"labels": ["refund"]}}
    assert "args.labels is ['refund', 'broken']" in check("tool_called", other, record).reason


def test_tool_called_refuses_bad_params() -> None:
    refused("tool_called", {"name": ""})
    refused("tool_called", {"name": "x", "args": ["a"]})
    refused("tool_called", {"tool": "x"})


# ---- tool_not_called -------------------------------------------------------------------


def test_tool_not_called_passes_and_fails_with_positions() -> None:
    assert check("tool_not_called", "offer_replacement").status is Status.PASSED
    result = check("tool_not_called", {"name": "issue_refund"})
    assert result.status is Status.FAILED
    assert result.reason == "tool 'issue_refund' was called once (call #3)"


def test_tool_not_called_refuses_bad_params() -> None:
    refused("tool_not_called", {"name": "x", "count": 1})


# ---- tool_order ------------------------------------------------------------------------


def test_tool_order_passes_when_some_first_call_precedes_some_then_call() -> None:
    assert check("tool_order", {"first": "search_orders", "then": "issue_refund"}).score == 1.0


def test_tool_order_fails_and_says_where_the_calls_stood() -> None:
    result = check("tool_order", {"first": "issue_refund", "then": "get_policy"})
    assert result.status is Status.FAILED
    assert result.reason == (
        "tool 'get_policy' (call #2) was never called after 'issue_refund' (call #3)"
    )


def test_tool_order_fails_when_one_side_is_missing() -> None:
    result = check("tool_order", {"first": "search_orders", "then": "close_ticket"})
    assert result.reason == "tool 'close_ticket' was never called"


def test_tool_order_refuses_bad_params() -> None:
    refused("tool_order", {"first": "a"})
    refused("tool_order", "a")


# ---- min_tool_calls / max_tool_calls ---------------------------------------------------


def test_min_tool_calls_counts_one_tool_or_all() -> None:
    assert check("min_tool_calls", {"name": "issue_refund", "count": 1}).status is Status.PASSED
    assert check("min_tool_calls", {"count": 4}).status is Status.PASSED
    result = check("min_tool_calls", {"name": "get_policy", "count": 2})
    assert (result.status, result.reason) == (
        Status.FAILED,
        "tool 'get_policy' was called once, at least 2 expected",
    )
    assert (
        check("min_tool_calls", {"count": 5}).reason
        == "4 tool calls were made, at least 5 expected"
    )


def test_max_tool_calls_counts_one_tool_or_all() -> None:
    record = RunRecord(tool_calls=[call("issue_refund"), call("issue_refund", order_id="A-1")])
    result = check("max_tool_calls", {"name": "issue_refund", "count": 1}, record)
    assert (result.status, result.reason) == (
        Status.FAILED,
        "tool 'issue_refund' was called 2 times, at most 1 allowed",
    )
    assert check("max_tool_calls", {"count": 2}, record).status is Status.PASSED
    assert check("max_tool_calls", {"count": 1}, record).status is Status.FAILED


def test_tool_counts_refuse_bad_params() -> None:
    refused("min_tool_calls", {"name": "x"})
    refused("max_tool_calls", {"count": -1})
    refused("max_tool_calls", 3)


# ---- result_contains -------------------------------------------------------------------


def test_result_contains_passes_and_fails() -> None:
    ok = check("result_contains", {"name": "get_policy", "substring": "30 days"})
    assert ok.status is Status.PASSED
    bad = check("result_contains", {"name": "get_policy", "substring": "60 days"})
    assert (bad.status, bad.reason) == (
        Status.FAILED,
        "no result of tool 'get_policy' (called once) contains '60 days'",
    )
    assert check("result_contains", {"name": "nope", "substring": "x"}).status is Status.FAILED


def test_result_contains_refuses_bad_params() -> None:
    refused("result_contains", {"name": "x", "substring": ""})


# ---- final answer ----------------------------------------------------------------------

NO_ANSWER = RunRecord(final_answer=None)


def test_final_answer_contains_all_texts() -> None:
    assert check("final_answer_contains", "refunded").status is Status.PASSED
    assert check("final_answer_contains", ["refunded", "A-1"]).status is Status.PASSED
    result = check("final_answer_contains", {"text": ["refunded", "apolog"]})
    assert (result.status, result.reason) == (
        Status.FAILED,
        "the answer does not contain 'apolog'",
    )
    assert check("final_answer_contains", "Refunded").status is Status.FAILED  # case-sensitive
    assert check("final_answer_contains", "x", NO_ANSWER).reason == "there was no final answer"


def test_final_answer_not_contains_none_of_the_texts() -> None:
    assert check("final_answer_not_contains", ["voucher", "replacement"]).status is Status.PASSED
    result = check("final_answer_not_contains", {"text": ["voucher", "EUR"]})
    assert (result.status, result.reason) == (Status.FAILED, "the answer contains 'EUR'")
    assert check("final_answer_not_contains", "x", NO_ANSWER).status is Status.PASSED


def test_final_answer_texts_refuse_bad_params() -> None:
    refused("final_answer_contains", [])
    refused("final_answer_contains", {"text": [""]})
    refused("final_answer_not_contains", {"text": 3})


def test_final_answer_max_chars() -> None:
    size = len(SUPPORT_RUN.final_answer or "")
    assert check("final_answer_max_chars", size).status is Status.PASSED
    result = check("final_answer_max_chars", {"max": 10})
    assert (result.status, result.reason) == (
        Status.FAILED,
        f"the answer has {size} characters, at most 10 allowed",
    )
    refused("final_answer_max_chars", -1)
    refused("final_answer_max_chars", "long")


def test_final_answer_min_chars() -> None:
    assert check("final_answer_min_chars", 10).status is Status.PASSED
    assert check("final_answer_min_chars", {"min": 500}).status is Status.FAILED
    assert check("final_answer_min_chars", 1, NO_ANSWER).reason == "there was no final answer"
    refused("final_answer_min_chars", {"min": 1, "max": 2})


def test_final_answer_matches_searches_with_line_anchors() -> None:
    assert check("final_answer_matches", r"^Ref: R-\d+$").status is Status.PASSED
    result = check("final_answer_matches", {"pattern": r"^Clause \d"})
    assert (result.status, result.reason) == (
        Status.FAILED,
        r"the answer has no match for pattern '^Clause \d'",
    )
    assert check("final_answer_matches", ".", NO_ANSWER).status is Status.FAILED


def test_final_answer_matches_refuses_a_bad_regex_at_load() -> None:
    with pytest.raises(ValidationError, match="not a valid regular expression"):
        registry.get("final_answer_matches").parse("[unclosed")


# ---- hook_called -----------------------------------------------------------------------


def test_hook_called_by_name_and_by_decision() -> None:
    assert check("hook_called", "audit").status is Status.PASSED
    assert check("hook_called", {"name": "tools.before", "decision": "deny"}).score == 1.0
    never = check("hook_called", "rate_limit")
    assert (never.status, never.reason) == (Status.FAILED, "hook 'rate_limit' never ran")
    wrong = check("hook_called", {"name": "tools.before", "decision": "ask"})
    assert wrong.reason == (
        "hook 'tools.before' ran 2 times but never decided 'ask' (decided: allow, deny)"
    )


def test_hook_called_refuses_bad_params() -> None:
    refused("hook_called", {"decision": "deny"})


# ---- no_error --------------------------------------------------------------------------


def test_no_error_passes_and_fails_with_the_first_line() -> None:
    assert check("no_error", True).status is Status.PASSED
    broken = RunRecord(error="Traceback: TimeoutError\n  at line 3")
    result = check("no_error", None, broken)
    assert (result.status, result.reason) == (
        Status.FAILED,
        "the run ended with an error: Traceback: TimeoutError",
    )


def test_no_error_takes_no_params() -> None:
    refused("no_error", {"strict": True})
    refused("no_error", "yes")


@pytest.mark.parametrize(
    ("pattern", "answer", "status"),
    [
        ("^(a+)+$", "a" * 36 + "!", Status.FAILED),  # minutes with `re`; `regex` sees through it
        ("(a|aa)+b", "a" * 40, Status.ERROR),  # a search that runs out of time: no verdict
    ],
)
def test_a_pattern_of_nested_repetition_is_bounded_by_the_checks_time(
    pattern: str, answer: str, status: Status
) -> None:
    """A pattern that backtracks for minutes on an unlucky answer never holds a run: the
    check's own time bounds the search, and a search that runs out is an error."""
    import time

    from sounding.scoring import measure_trial
    from sounding.spec import resolve_case

    case = resolve_case(
        {
            "scenarios": [
                {
                    "id": "s",
                    "user": "hi",
                    "check_timeout": 1,
                    "expect": [{"final_answer_matches": pattern}],
                }
            ]
        },
        path="case.yaml",
    )
    started = time.monotonic()
    score = measure_trial(case.scenarios[0], Evidence(record=RunRecord(final_answer=answer)))
    assert time.monotonic() - started < 5
    (check,) = score.checks
    assert check.result.status is status, check.result.reason
    if status is Status.ERROR:
        assert "ran longer than the check's 1s" in check.result.reason
