"""The `http_mock_assertions` check on recorded requests: fields, filters, equals, contains."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from sounding.checks import CheckContext, CheckResult, Evidence, Status, registry
from sounding.record import RunRecord
from sounding.services import ServiceEvidence, start_services


def request(method: str, path: str, body: str = "", **extra: Any) -> dict[str, Any]:
    entry = {"method": method, "path": path, "query": {}, "headers": {}, "body": body, "time": 0}
    return {**entry, **extra}


REQUESTS = [
    request(
        "POST",
        "/api/messages",
        '{"to": "finance@co", "subject": "Renewal", "tags": ["a", "b"]}',
        json={"to": "finance@co", "subject": "Renewal", "tags": ["a", "b"]},
        headers={"Content-Type": "application/json", "Authorization": "Bearer k1"},
        query={"priority": ["high"]},
    ),
    request("GET", "/api/health"),
    request("POST", "/api/messages", "plain renewal notice", headers={"X-Trace": "t-2"}),
]


def assertions(
    *items: dict[str, Any], requests: Any = REQUESTS, record: bool = True
) -> CheckResult:
    mock = ServiceEvidence("smtp", "http_mock", None, {"record": record, "requests": requests})
    kind = registry.get("http_mock_assertions")
    params = kind.parse({"service": "smtp", "assertions": list(items)})
    evidence = Evidence(record=RunRecord(), services={"smtp": mock})
    return kind.run(params, CheckContext(evidence=evidence))


POSTS = {"method": "post", "path": "/api/messages"}


@pytest.mark.parametrize(
    "item",
    [
        {"field": "request_count", "equals": 3},
        {"field": "request_count", "filters": POSTS, "equals": 2},
        {"field": "request_count", "filters": {"path": "/api/*"}, "equals": 3},
        {"field": "request_count", "filters": {"headers": {"x-trace": "t-2"}}, "equals": 1},
        {"field": "last_request.body", "contains": "renewal"},
        {"field": "last_request.body", "equals": "plain renewal notice"},
        {"field": "last_request.headers", "contains": "X-TRACE"},
        {
            "field": "requests[0].body",
            "equals": {"to": "finance@co", "subject": "Renewal", "tags": ["a", "b"]},
        },
        {"field": "requests[0].body", "contains": {"to": "finance@co", "tags": ["b"]}},
        {"field": "requests[0].body", "contains": '"subject": "Renewal"'},
        {"field": "requests[0].headers", "equals": {"authorization": "Bearer k1"}},
        {"field": "requests[0].headers", "contains": {"Authorization": "Bearer"}},
        {"field": "requests[0].headers", "contains": ["Authorization"]},
        {"field": "requests[0].headers", "contains": ["authorization", "CONTENT-TYPE"]},
        {"field": "requests[0]", "contains": {"headers": ["AUTHORIZATION"]}},
        {"field": "requests[-1].body", "contains": "notice"},
        {"field": "requests[1]", "equals": {"method": "get", "path": "/api/health"}},
        {"field": "requests[0]", "equals": {"query": {"priority": "high"}}},
        {"field": "requests[0]", "contains": {"path": "messages", "body": {"to": "finance@co"}}},
        {"field": "last_request", "filters": {"method": "GET"}, "contains": {"path": "health"}},
    ],
)
def test_assertions_that_hold_pass(item: dict[str, Any]) -> None:
    result = assertions(item)
    assert result.status is Status.PASSED, result.reason


@pytest.mark.parametrize(
    ("item", "why"),
    [
        (
            {"field": "request_count", "filters": POSTS, "equals": 1},
            "expected 1 matching request, got 2",
        ),
        ({"field": "last_request.body", "contains": "invoice"}, "expected it to contain 'invoice'"),
        (
            {"field": "requests[0].body", "equals": {"to": "finance@co"}},
            "expected {'to': 'finance@co'}",
        ),
        ({"field": "requests[2].body", "equals": {"a": 1}}, "expected {'a': 1}"),
        ({"field": "requests[0].headers", "equals": {"Authorization": "Bearer k2"}}, "got {"),
        ({"field": "requests[0].headers", "contains": "x-api-key"}, "to contain 'x-api-key'"),
        (
            {"field": "requests[0].headers", "contains": ["Authorization", "X-Api-Key"]},
            "to contain ['Authorization', 'X-Api-Key']",
        ),
        ({"field": "requests[0]", "contains": {"headers": ["x-trace"]}}, "to contain {'headers"),
        ({"field": "requests[5]", "equals": {"method": "GET"}}, "no such request: 3 matching"),
        (
            {"field": "last_request.body", "filters": {"method": "PUT"}, "contains": "x"},
            "0 matching",
        ),
    ],
)
def test_an_assertion_that_does_not_hold_fails_and_says_why(item: dict[str, Any], why: str) -> None:
    result = assertions(item)
    assert result.status is Status.FAILED
    assert why in result.reason


def test_the_failure_names_each_failing_assertion_by_index_and_field() -> None:
    result = assertions(
        {"field": "request_count", "equals": 3},
        {"field": "last_request.body", "contains": "invoice"},
        {"field": "requests[0].headers", "contains": "x-api-key"},
    )
    assert result.status is Status.FAILED
    assert result.details["failures"][0].startswith("assertions[1] (last_request.body): ")
    assert result.details["failures"][1].startswith("assertions[2] (requests[0].headers): ")
    assert len(result.details["failures"]) == 2


def test_a_pass_counts_assertions_and_requests_in_words() -> None:
    one = [{"field": "request_count", "equals": 1}]
    assert assertions(*one, requests=REQUESTS[:1]).reason == (
        "1 assertion held on 'smtp' (1 request recorded)"
    )
    two = [
        {"field": "request_count", "equals": 3},
        {"field": "last_request.body", "contains": "notice"},
    ]
    assert assertions(*two).reason == "2 assertions held on 'smtp' (3 requests recorded)"


def test_equals_and_contains_together_must_both_hold() -> None:
    both = {"field": "last_request.body", "equals": "plain renewal notice", "contains": "xyz"}
    assert assertions(both).status is Status.FAILED


def test_a_mock_without_record_is_an_error_that_says_how_to_fix() -> None:
    result = assertions({"field": "request_count", "equals": 0}, record=False)
    assert result.status is Status.ERROR
    assert "set record: true" in result.reason


def test_an_unknown_service_is_an_error() -> None:
    kind = registry.get("http_mock_assertions")
    params = kind.parse({"service": "sms", "assertions": [{"field": "request_count", "equals": 0}]})
    result = kind.run(params, CheckContext(evidence=Evidence(record=RunRecord())))
    assert result.status is Status.ERROR
    assert "no http_mock service 'sms'" in result.reason


def test_no_recording_left_is_unjudged() -> None:
    result = assertions({"field": "request_count", "equals": 0}, requests=None)
    assert result.status is Status.UNJUDGED


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ({"field": "last_request.cookies", "equals": 1}, "unknown field 'last_request.cookies'"),
        ({"field": "request_count"}, "needs equals: or contains:"),
        ({"field": "request_count", "contains": 1}, "request_count takes equals"),
        ({"field": "request_count", "equals": True}, "request_count takes equals"),
        ({"field": "requests[0]", "equals": {"verb": "GET"}}, "unknown request keys ['verb']"),
        ({"field": "requests[0]", "contains": "GET"}, "takes a mapping"),
        ({"field": "last_request.headers", "equals": "x"}, "mapping of header"),
        ({"field": "last_request.headers", "contains": 1}, "a header name, a list of names"),
        ({"field": "last_request.headers", "contains": [{"a": 1}]}, "a header name, a list of"),
        ({"field": "last_request", "contains": {"headers": 1}}, "a header name, a list of"),
        ({"field": "request_count", "equals": 1, "filter": {}}, "filter"),
    ],
)
def test_bad_assertions_are_refused_at_load(item: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        registry.get("http_mock_assertions").parse({"service": "smtp", "assertions": [item]})


def test_assertions_on_a_live_mock(tmp_path: Path) -> None:
    declared = [{"name": "smtp", "type": "http_mock", "record": True}]
    with start_services(declared, trial_dir=tmp_path, suite_dir=tmp_path) as services:
        base = services.env["SOUNDING_SMTP_URL"]
        httpx.post(f"{base}/api/messages", json={"to": "finance@co", "body": "renewal due"})
        kind = registry.get("http_mock_assertions")
        params = kind.parse(
            {
                "service": "smtp",
                "assertions": [
                    {"field": "request_count", "filters": POSTS, "equals": 1},
                    {"field": "last_request.body", "contains": {"to": "finance@co"}},
                    {"field": "last_request.headers", "contains": {"content-type": "json"}},
                    {"field": "last_request.headers", "contains": ["Content-Type", "HOST"]},
                ],
            }
        )
        evidence = Evidence(record=RunRecord(), services=services.evidence())
        result = kind.run(params, CheckContext(evidence=evidence))
    assert result.status is Status.PASSED, result.reason


AGENT = """
import os, sys, urllib.request
sys.stdin.read()
call = urllib.request.Request(
    os.environ["SOUNDING_PAYMENTS_URL"] + "/v1/refunds",
    data=b"{}",
    headers={"authorization": "Bearer sk_test", "Content-Type": "application/json"},
)
urllib.request.urlopen(call).read()
print("refunded")
"""

CASE = """
services:
  - {name: payments, type: http_mock, record: true, routes: [{method: POST, path: /v1/refunds}]}
scenarios:
  - id: refund
    user: refund order 7
    invariants:
      authorized:
        description: The refund call carries its credentials
        check:
          type: http_mock_assertions
          service: payments
          assertions:
            - {field: last_request.headers, contains: [Authorization, content-type]}
"""


def test_a_list_of_header_names_holds_in_a_run(tmp_path: Path, sounding: Any) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "sounding.toml").write_text(
        f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n'
    )
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases/pay.yaml").write_text(CASE)
    done = sounding("run", str(tmp_path), "--trials", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  pay/refund  1/1" in done.stdout
