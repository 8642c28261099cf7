"""The `http_mock` service: a real HTTP server on 127.0.0.1 that answers from routes.

Every request is recorded: method, path and time always (what `http_except` needs);
with `record: true` also the query, headers, body text and parsed JSON body (what
`http_mock_assertions` reads). The declaration and its answers are here; the server is in
`_http_server`, loaded when a mock starts.
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sounding.services._base import SpecModel


class Reply(BaseModel):
    """What the mock answers: a status, a JSON value (`json:`) or a text `body:`, headers."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    status: int = Field(default=200, ge=100, le=599)
    payload: Any = Field(default=None, alias="json")
    body: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_body(self) -> Reply:
        if "payload" in self.model_fields_set and self.body is not None:
            raise ValueError("give either json: or body:, not both")
        return self

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        """The bytes to send and the headers, Content-Type set from the kind of body."""
        if "payload" in self.model_fields_set:
            data, kind = json.dumps(self.payload).encode(), "application/json"
        else:
            data, kind = (self.body or "").encode(), "text/plain; charset=utf-8"
        return data, {"Content-Type": kind, **self.headers}


class Route(Reply):
    """One answer for one method and path (`*` in a path matches anything)."""

    method: str = Field(default="*", pattern=r"^(\*|[A-Za-z]+)$")
    path: str = Field(pattern=r"^/")

    def matches(self, method: str, path: str) -> bool:
        if self.method != "*" and self.method.upper() != method:
            return False
        return fnmatch.fnmatchcase(path, self.path) if "*" in self.path else path == self.path


class HttpMockSpec(SpecModel):
    """`{name, type: http_mock, routes?, default_response?, record?}` as written in a case."""

    type: Literal["http_mock"]
    routes: list[Route] = Field(default_factory=list)
    default_response: Reply | int | None = None
    record: bool = False

    def reply_for(self, method: str, path: str) -> Reply:
        for route in self.routes:
            if route.matches(method, path):
                return route
        if isinstance(self.default_response, int):
            return Reply(status=self.default_response)
        if self.default_response is not None:
            return self.default_response
        missing = f"mock '{self.name}' has no route for {method} {path}"
        return Reply(status=404, payload={"error": missing})
