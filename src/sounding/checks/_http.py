"""The `http_mock_assertions` check: what an http_mock service recorded, asserted field by field.

The fields and what `equals` and `contains` mean on each are in docs/services.md. The check
fails when any assertion fails, and says which (`assertions[i]` and the field).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator, model_validator

from sounding._words import counted
from sounding.checks._base import CheckContext, CheckResult, Params, service_of, shown
from sounding.checks._fields import ServiceName
from sounding.checks._registry import Reads, registry

FAMILY = "http"

FIELD = re.compile(r"^(request_count|last_request|requests\[(-?\d+)\])(\.body|\.headers)?$")
REQUEST_KEYS = frozenset({"method", "path", "query", "headers", "body"})


class RequestFilter(Params):
    """Which recorded requests an assertion looks at: method, path (`*` globs), headers."""

    method: str | None = None
    path: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)

    def selects(self, request: Mapping[str, Any]) -> bool:
        if self.method and str(request.get("method", "")).upper() != self.method.upper():
            return False
        if self.path and not _path_matches(str(request.get("path", "")), self.path):
            return False
        return _headers_equal(request, self.headers)


class HttpAssertion(Params):
    """One field of the recording, with `equals` and/or `contains`."""

    field: str
    filters: RequestFilter = Field(default_factory=RequestFilter)
    equals: Any = None
    contains: Any = None

    @field_validator("field")
    @classmethod
    def _known_field(cls, value: str) -> str:
        if not FIELD.match(value):
            raise ValueError(
                f"unknown field '{value}' (known: request_count, last_request, "
                "last_request.body, last_request.headers, requests[N], requests[N].body, "
                "requests[N].headers)"
            )
        return value

    @model_validator(mode="after")
    def _operators(self) -> HttpAssertion:
        given = self.model_fields_set & {"equals", "contains"}
        if not given:
            raise ValueError(f"assertion on '{self.field}' needs equals: or contains:")
        part = self.part
        if part == "count" and ("contains" in given or type(self.equals) is not int):
            raise ValueError("request_count takes equals: <a whole number>")
        if part == "request":
            for name in given:
                _check_request_keys(getattr(self, name), name)
        if part == "headers" and "equals" in given and not isinstance(self.equals, Mapping):
            raise ValueError("equals: on headers takes a mapping of header: value")
        if part == "headers" and "contains" in given:
            _check_headers_contain(self.contains)
        return self

    @property
    def part(self) -> str:
        """`count`, `request`, `body` or `headers`: what the field reads."""
        if self.field == "request_count":
            return "count"
        return self.field.rpartition(".")[2] if "." in self.field else "request"

    @property
    def index(self) -> int:
        match = FIELD.match(self.field)
        return int(match.group(2)) if match and match.group(2) is not None else -1


def _check_request_keys(value: Any, operator: str) -> None:
    if not isinstance(value, Mapping):
        raise ValueError(f"{operator}: on a request takes a mapping of {sorted(REQUEST_KEYS)}")
    unknown = sorted(set(value) - REQUEST_KEYS)
    if unknown:
        raise ValueError(
            f"{operator}: unknown request keys {unknown} (known: {sorted(REQUEST_KEYS)})"
        )
    if operator == "contains" and "headers" in value:
        _check_headers_contain(value["headers"])


def _check_headers_contain(value: Any) -> None:
    names = isinstance(value, list) and all(isinstance(name, str) for name in value)
    if not (isinstance(value, str | Mapping) or names):
        raise ValueError(
            "contains: on headers takes a header name, a list of names (each must be there), "
            "or a mapping of header: text (each value must contain its text)"
        )


class HttpMockParams(Params):
    """`{service, assertions: [...]}` on an http_mock service with `record: true`."""

    service: ServiceName
    assertions: list[HttpAssertion] = Field(min_length=1)


@registry.check("http_mock_assertions", HttpMockParams, family=FAMILY, reads=Reads.SERVICES)
def http_mock_assertions(params: HttpMockParams, context: CheckContext) -> CheckResult:
    """Every assertion on an http_mock service's recorded requests holds."""
    requests = _recording(params.service, context)
    if isinstance(requests, CheckResult):
        return requests
    failures = [
        f"assertions[{number}] ({assertion.field}): {found}"
        for number, assertion in enumerate(params.assertions)
        if (found := failure(assertion, requests))
    ]
    if failures:
        return CheckResult.failed("; ".join(failures), failures=failures)
    count = len(params.assertions)
    return CheckResult.passed(
        f"{counted(count, 'assertion')} held on '{params.service}' "
        f"({counted(len(requests), 'request')} recorded)"
    )


def _recording(name: str, context: CheckContext) -> list[Mapping[str, Any]] | CheckResult:
    service = service_of(context.evidence, name, "http_mock")
    if isinstance(service, CheckResult):
        return service
    if not service.details.get("record"):
        return CheckResult.error(
            f"http_mock '{name}' does not record request details; set record: true on it"
        )
    requests = service.details.get("requests")
    if not isinstance(requests, list):
        return CheckResult.unjudged(f"http_mock '{name}' left no recording to read")
    return requests


def failure(assertion: HttpAssertion, requests: list[Mapping[str, Any]]) -> str | None:
    """Why `assertion` does not hold on `requests`, or None when it does."""
    selected = [r for r in requests if assertion.filters.selects(r)]
    if assertion.part == "count":
        if len(selected) == assertion.equals:
            return None
        return f"expected {counted(assertion.equals, 'matching request')}, got {len(selected)}"
    if not -len(selected) <= assertion.index < len(selected):
        recorded = counted(len(selected), "matching request")
        return f"no such request: {recorded} {'was' if len(selected) == 1 else 'were'} recorded"
    request, part, given = selected[assertion.index], assertion.part, assertion.model_fields_set
    value = _value(request, part)
    if "equals" in given and not _equals(part, request, assertion.equals):
        return f"expected {shown(assertion.equals, 80)}, got {shown(value, 80)}"
    if "contains" in given and not _contains(part, request, assertion.contains):
        return f"expected it to contain {shown(assertion.contains, 80)}, got {shown(value, 80)}"
    return None


def _value(request: Mapping[str, Any], part: str) -> Any:
    """What the field reads, as a failure shows it: the body's text, the headers, the request."""
    if part == "body":
        return _text(request)
    if part == "headers":
        return dict(request.get("headers") or {})
    return request


def _equals(part: str, request: Mapping[str, Any], expected: Any) -> bool:
    """`part` of the request (`request` for the whole: each listed key) equals `expected`."""
    if part == "request":
        return all(_equals(key, request, wanted) for key, wanted in expected.items())
    if part == "body":
        if isinstance(expected, str):
            return _text(request) == expected
        return "json" in request and request["json"] == expected
    if part == "headers":
        return isinstance(expected, Mapping) and _headers_equal(request, expected)
    if part == "method":
        return str(request.get("method", "")).upper() == str(expected).upper()
    if part == "query":
        return _query(request.get("query")) == _query(expected)
    return bool(request.get(part) == expected)


def _contains(part: str, request: Mapping[str, Any], expected: Any) -> bool:
    """`part` of the request (`request` for the whole: each listed key) contains `expected`."""
    if part == "request":
        return all(_contains(key, request, wanted) for key, wanted in expected.items())
    if part == "body":
        if isinstance(expected, str):
            return expected in _text(request)
        return "json" in request and _part_of(expected, request["json"])
    if part == "headers":
        folded = _folded(request)
        if isinstance(expected, Mapping):
            return all(str(v) in folded.get(str(k).lower(), "") for k, v in expected.items())
        names = [expected] if isinstance(expected, str) else expected
        return all(str(name).lower() in folded for name in names)
    if part == "query":
        return _part_of(_query(expected), _query(request.get("query")))
    return str(expected).lower() in str(request.get(part, "")).lower()


def _text(request: Mapping[str, Any]) -> str:
    return str(request.get("body") or "")


def _part_of(part: Any, whole: Any) -> bool:
    """A mapping's items are in the whole's; a list's items each in some item; else equal."""
    if isinstance(part, Mapping):
        return isinstance(whole, Mapping) and all(
            key in whole and _part_of(value, whole[key]) for key, value in part.items()
        )
    if isinstance(part, list):
        return isinstance(whole, list) and all(
            any(_part_of(item, other) for other in whole) for item in part
        )
    return bool(part == whole)


def _folded(request: Mapping[str, Any]) -> dict[str, str]:
    """The request's headers, their names in lower case (header names ignore case)."""
    return {str(k).lower(): str(v) for k, v in (request.get("headers") or {}).items()}


def _headers_equal(request: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    folded = _folded(request)
    return all(folded.get(str(k).lower()) == str(v) for k, v in expected.items())


def _query(raw: Any) -> dict[str, list[str]]:
    """A query as name → list of values; `{"a": "1"}` is written short for `{"a": ["1"]}`."""
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): [str(x) for x in (v if isinstance(v, list) else [v])] for k, v in raw.items()}


def _path_matches(path: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(path, pattern) if "*" in pattern else path == pattern
