"""The `http_mock_assertions` check: what an http_mock service recorded, asserted field by field.

Fields: `request_count`, `last_request`, `requests[N]` (N from 0; -1 is the last), and
`.body` / `.headers` of the last or N-th request, among the requests the `filters` select.

- `equals` on a body: a mapping or list compares with the parsed JSON body, text with
  the body's text; on headers: each listed header has exactly that value (names ignore
  case; clients add headers of their own, which are ignored); on a request: each listed
  key (method, path, query, headers, body) equals by the rules above.
- `contains` on a body: text is a substring, a mapping or list is a part of the JSON
  body; on headers: a name (or a list of names) means the header is (each is) present, a
  mapping means each listed header's value contains the text; on a request: each listed
  key contains its value. Header names ignore case everywhere.

The check fails when any assertion fails, and says which (`assertions[i]` and the field).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator, model_validator

from sounding._words import counted
from sounding.checks._base import CheckContext, CheckResult, Params
from sounding.checks._fields import ServiceName
from sounding.checks._registry import Reads, registry
from sounding.services import ServiceEvidence

FAMILY = "http"

FIELD = re.compile(r"^(request_count|last_request|requests\[(-?\d+)\])(\.body|\.headers)?$")
REQUEST_KEYS = frozenset({"method", "path", "query", "headers", "body"})
_MISSING = object()


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
        return _headers_equal(request.get("headers") or {}, self.headers)


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
        if part == "count" and ("contains" in given or not _is_int(self.equals)):
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
        match = FIELD.match(self.field)
        suffix = match.group(3) if match else None
        return suffix[1:] if suffix else "request"

    @property
    def index(self) -> int:
        match = FIELD.match(self.field)
        return int(match.group(2)) if match and match.group(2) is not None else -1


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
    service = context.evidence.services.get(params.service)
    requests, problem = _recording(params.service, service, context)
    if problem is not None:
        return problem
    failures = []
    for number, assertion in enumerate(params.assertions):
        found = failure(assertion, requests)
        if found:
            failures.append(f"assertions[{number}] ({assertion.field}): {found}")
    if failures:
        return CheckResult.failed("; ".join(failures), failures=failures)
    count = len(params.assertions)
    return CheckResult.passed(
        f"{counted(count, 'assertion')} held on '{params.service}' "
        f"({counted(len(requests), 'request')} recorded)"
    )


def _recording(
    name: str, service: ServiceEvidence | None, context: CheckContext
) -> tuple[list[Mapping[str, Any]], CheckResult | None]:
    mocks = sorted(n for n, s in context.evidence.services.items() if s.type == "http_mock")
    if service is None or service.type != "http_mock":
        listed = ", ".join(mocks) or "none"
        return [], CheckResult.error(
            f"no http_mock service '{name}' in this trial (http_mock services: {listed}); "
            "declare it under services: or fix the name"
        )
    if not service.details.get("record"):
        return [], CheckResult.error(
            f"http_mock '{name}' does not record request details; set record: true on it"
        )
    requests = service.details.get("requests")
    if not isinstance(requests, list):
        return [], CheckResult.unjudged(f"http_mock '{name}' left no recording to read")
    return requests, None


def failure(assertion: HttpAssertion, requests: list[Mapping[str, Any]]) -> str | None:
    """Why `assertion` does not hold on `requests`, or None when it does."""
    selected = [r for r in requests if assertion.filters.selects(r)]
    if assertion.part == "count":
        return (
            None
            if len(selected) == assertion.equals
            else f"expected {counted(assertion.equals, 'matching request')}, got {len(selected)}"
        )
    request = _pick(selected, assertion.index)
    if request is None:
        recorded = counted(len(selected), "matching request")
        return f"no such request: {recorded} {'was' if len(selected) == 1 else 'were'} recorded"
    value = _value(request, assertion.part)
    given = assertion.model_fields_set
    if "equals" in given and not _equals(assertion.part, value, assertion.equals):
        return f"expected {_show(assertion.equals)}, got {_show(value)}"
    if "contains" in given and not _contains(assertion.part, value, assertion.contains):
        return f"expected it to contain {_show(assertion.contains)}, got {_show(value)}"
    return None


def _pick(selected: list[Mapping[str, Any]], index: int) -> Mapping[str, Any] | None:
    if -len(selected) <= index < len(selected):
        return selected[index]
    return None


def _value(request: Mapping[str, Any], part: str) -> Any:
    if part == "body":
        return _Body(request)
    if part == "headers":
        return dict(request.get("headers") or {})
    return request


class _Body:
    """A recorded body: its text, and its parsed JSON when it was JSON."""

    def __init__(self, request: Mapping[str, Any]) -> None:
        self.text = str(request.get("body") or "")
        self.json = request.get("json", _MISSING)

    def __repr__(self) -> str:
        return repr(self.text)


def _equals(part: str, value: Any, expected: Any) -> bool:
    if part == "body":
        return _body_equals(value, expected)
    if part == "headers":
        return _headers_equal(value, expected)
    return all(_key_equals(key, value, wanted) for key, wanted in expected.items())


def _contains(part: str, value: Any, expected: Any) -> bool:
    if part == "body":
        return _body_contains(value, expected)
    if part == "headers":
        return _headers_contain(value, expected)
    return all(_key_contains(key, value, wanted) for key, wanted in expected.items())


def _body_equals(body: _Body, expected: Any) -> bool:
    if isinstance(expected, str):
        return body.text == expected
    return body.json is not _MISSING and body.json == expected


def _body_contains(body: _Body, expected: Any) -> bool:
    if isinstance(expected, str):
        return expected in body.text
    return body.json is not _MISSING and _part_of(expected, body.json)


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


def _headers_equal(headers: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    folded = {str(k).lower(): str(v) for k, v in headers.items()}
    return all(folded.get(str(k).lower()) == str(v) for k, v in expected.items())


def _headers_contain(headers: Mapping[str, Any], expected: Any) -> bool:
    folded = {str(k).lower(): str(v) for k, v in headers.items()}
    if isinstance(expected, str):
        return expected.lower() in folded
    if isinstance(expected, list):
        return all(str(name).lower() in folded for name in expected)
    if isinstance(expected, Mapping):
        return all(str(v) in folded.get(str(k).lower(), "") for k, v in expected.items())
    return False


def _key_equals(key: str, request: Mapping[str, Any], wanted: Any) -> bool:
    if key == "body":
        return _body_equals(_Body(request), wanted)
    if key == "headers":
        return isinstance(wanted, Mapping) and _headers_equal(request.get("headers") or {}, wanted)
    if key == "method":
        return str(request.get("method", "")).upper() == str(wanted).upper()
    if key == "query":
        return _query(request) == _query({"query": wanted})
    return bool(request.get(key) == wanted)


def _key_contains(key: str, request: Mapping[str, Any], wanted: Any) -> bool:
    if key == "body":
        return _body_contains(_Body(request), wanted)
    if key == "headers":
        return _headers_contain(request.get("headers") or {}, wanted)
    if key == "query":
        return _part_of(_query({"query": wanted}), _query(request))
    return str(wanted).lower() in str(request.get(key, "")).lower()


def _query(request: Mapping[str, Any]) -> dict[str, list[str]]:
    """A query as name → list of values; `{"a": "1"}` is written short for `{"a": ["1"]}`."""
    raw = request.get("query") or {}
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): [str(x) for x in (v if isinstance(v, list) else [v])] for k, v in raw.items()}


def _path_matches(path: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(path, pattern) if "*" in pattern else path == pattern


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."
