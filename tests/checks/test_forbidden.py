"""Forbidden rules: tools, writes outside allowed paths, secrets in the output."""

from __future__ import annotations

import os
from typing import Any

import pytest
from pydantic import ValidationError

from sounding.checks import CheckContext, CheckResult, Evidence, Role, Status, registry
from sounding.record import Message, RunRecord, ToolCall

SECRET = "sk-test-0123456789abcdef"


def rule(name: str, raw: Any, evidence: Evidence) -> CheckResult:
    kind = registry.get(name, Role.FORBIDDEN)
    return kind.run(kind.parse(raw), CheckContext(evidence=evidence))


def refused(name: str, raw: Any) -> None:
    with pytest.raises(ValidationError):
        registry.get(name, Role.FORBIDDEN).parse(raw)


def test_forbidden_rules_are_not_check_types() -> None:
    assert registry.get("tools_forbidden", Role.FORBIDDEN).family == "forbidden"
    assert "secrets_in_logs" not in registry.names(Role.CHECK)


# ---- tools_forbidden -------------------------------------------------------------------

CALLS = RunRecord(
    tool_calls=[
        ToolCall(id="1", name="get_order"),
        ToolCall(id="2", name="offer_replacement"),
        ToolCall(id="3", name="offer_replacement"),
    ]
)


def test_tools_forbidden_passes_when_none_was_called() -> None:
    result = rule("tools_forbidden", ["delete_account"], Evidence(record=CALLS))
    assert result.status is Status.PASSED


def test_tools_forbidden_fails_and_names_the_call() -> None:
    result = rule("tools_forbidden", "offer_replacement", Evidence(record=CALLS))
    assert (result.status, result.reason) == (
        Status.FAILED,
        "forbidden tool 'offer_replacement' was called (call #2) (+1 more forbidden call)",
    )


def test_tools_forbidden_refuses_bad_params() -> None:
    refused("tools_forbidden", [])
    refused("tools_forbidden", {"tools": ["x"]})


# ---- file_writes_outside ---------------------------------------------------------------


def writes(*touched: str, byproducts: frozenset[str] = frozenset()) -> Evidence:
    return Evidence(record=RunRecord(), touched=frozenset(touched), byproducts=byproducts)


def test_writes_under_allowed_prefixes_pass() -> None:
    evidence = writes("src/app.py", "./output/report.json", "src/lib/util.py")
    result = rule("file_writes_outside", ["src/", "output/"], evidence)
    assert result.status is Status.PASSED


def test_writes_outside_fail_and_list_the_files() -> None:
    evidence = writes("src/app.py", "notes.txt", "README.md", "tmp/a", "tmp/b")
    result = rule("file_writes_outside", {"prefixes": ["src/"]}, evidence)
    assert (result.status, result.reason) == (
        Status.FAILED,
        "4 files written outside src/: README.md, notes.txt, tmp/a (+1 more)",
    )
    assert result.details["outside"] == ["README.md", "notes.txt", "tmp/a", "tmp/b"]


def test_by_products_do_not_count_as_writes() -> None:
    evidence = writes(
        "src/app.py", "__pycache__/app.pyc", byproducts=frozenset({"__pycache__/app.pyc"})
    )
    assert rule("file_writes_outside", "src/", evidence).status is Status.PASSED


def test_no_prefix_means_no_write_is_allowed() -> None:
    assert rule("file_writes_outside", [], writes("a.txt")).status is Status.FAILED
    assert rule("file_writes_outside", [], writes()).status is Status.PASSED


def test_writes_are_unjudged_when_the_touched_files_were_not_kept() -> None:
    result = rule("file_writes_outside", ["src/"], Evidence(record=RunRecord()))
    assert result.status is Status.UNJUDGED
    assert "files touched was not kept" in result.reason


def test_file_writes_outside_refuses_bad_params() -> None:
    refused("file_writes_outside", ["/etc/"])
    refused("file_writes_outside", ["../elsewhere/"])
    refused("file_writes_outside", {"paths": ["src/"]})


# ---- secrets_in_logs -------------------------------------------------------------------


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No secret-looking variable but those a test sets."""
    for name in list(os.environ):
        if any(word in name.upper() for word in ("KEY", "TOKEN", "SECRET", "PASSWORD")):
            monkeypatch.delenv(name)
    return monkeypatch


def leaky_run() -> RunRecord:
    return RunRecord(
        messages=[
            Message(role="user", content="Deploy it."),
            Message(role="assistant", content=[{"type": "tool_use", "input": {"key": SECRET}}]),
        ],
        tool_calls=[
            ToolCall(id="1", name="http_get", args={"headers": {"auth": f"Bearer {SECRET}"}})
        ],
        final_answer="Deployed.",
    )


def test_deny_finds_a_secret_and_never_repeats_it(clean_environment: pytest.MonkeyPatch) -> None:
    clean_environment.setenv("OPENAI_API_KEY", SECRET)
    evidence = Evidence(record=leaky_run(), stdout=f"using {SECRET}\n")
    result = rule("secrets_in_logs", "deny", evidence)
    assert result.status is Status.FAILED
    assert result.reason == (
        "the value of OPENAI_API_KEY leaked into stdout, message #2 (assistant), "
        "the args of call #1 ('http_get')"
    )
    assert SECRET not in result.model_dump_json()
    assert SECRET[4:12] not in result.model_dump_json()


def test_deny_passes_when_no_value_shows(clean_environment: pytest.MonkeyPatch) -> None:
    clean_environment.setenv("DB_PASSWORD", "correct-horse-battery")
    clean_environment.setenv("GITHUB_TOKEN", "short")  # under 8 characters: not looked for
    record = RunRecord(final_answer="All short tokens are fine.")
    result = rule("secrets_in_logs", True, Evidence(record=record, stderr="short"))
    assert result.status is Status.PASSED
    assert "DB_PASSWORD" in result.reason
    assert "GITHUB_TOKEN" not in result.reason


def test_deny_passes_when_the_environment_holds_no_secret(
    clean_environment: pytest.MonkeyPatch,
) -> None:
    result = rule("secrets_in_logs", "deny", Evidence(record=leaky_run()))
    assert result.status is Status.PASSED
    assert "nothing could leak" in result.reason


def test_named_variables_are_looked_for_in_results_and_the_answer(
    clean_environment: pytest.MonkeyPatch,
) -> None:
    clean_environment.setenv("STRIPE", "rk_live_abcdef")  # no secret word: only found by name
    record = RunRecord(
        tool_calls=[ToolCall(id="1", name="env", result="STRIPE=rk_live_abcdef")],
        final_answer="Your key is rk_live_abcdef",
    )
    result = rule("secrets_in_logs", {"variables": ["STRIPE"]}, Evidence(record=record))
    assert result.status is Status.FAILED
    assert result.reason == (
        "the value of STRIPE leaked into the final answer, the result of call #1 ('env')"
    )
    assert rule("secrets_in_logs", "deny", Evidence(record=record)).status is Status.PASSED


def test_named_variables_that_are_unset_are_unjudged(clean_environment: pytest.MonkeyPatch) -> None:
    clean_environment.delenv("SOUNDING_TEST_UNSET", raising=False)
    result = rule("secrets_in_logs", ["SOUNDING_TEST_UNSET"], Evidence(record=RunRecord()))
    assert result.status is Status.UNJUDGED
    assert "SOUNDING_TEST_UNSET is set" in result.reason


def test_secrets_in_logs_refuses_bad_params() -> None:
    refused("secrets_in_logs", "allow")
    refused("secrets_in_logs", [])
    refused("secrets_in_logs", ["NOT A NAME"])
    refused("secrets_in_logs", {"variables": "deny", "min_chars": 4})
