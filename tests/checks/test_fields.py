"""Shared param fields: what a marked field names is found wherever it stands."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from sounding.checks import (
    JudgeModel,
    MetricName,
    Params,
    Ref,
    Role,
    ServiceName,
    WorkspacePath,
    references,
    registry,
)


class Item(Params):
    path: WorkspacePath
    note: str = ""


class Nested(Params):
    service: ServiceName
    metric: MetricName | None = None
    model: JudgeModel | None = None
    items: list[Item] = Field(default_factory=list)
    paths: list[WorkspacePath] = Field(default_factory=list)
    free: dict[str, Any] = Field(default_factory=dict)
    path: str = "a plain text, whatever its name"


def test_marked_texts_are_found_through_optionals_lists_and_nested_models() -> None:
    params = Nested(
        service="db",
        metric="in_scope",
        items=[Item(path="a.txt"), Item(path="b/c.txt", note="x")],
        paths=["d.txt"],
        free={"path": "/etc/passwd"},
    )
    found = [(r.key, r.ref, r.value) for r in references(params)]
    assert found == [
        (("service",), Ref.SERVICE, "db"),
        (("metric",), Ref.METRIC, "in_scope"),
        (("items", 0, "path"), Ref.WORKSPACE_PATH, "a.txt"),
        (("items", 1, "path"), Ref.WORKSPACE_PATH, "b/c.txt"),
        (("paths", 0), Ref.WORKSPACE_PATH, "d.txt"),
    ]


def test_params_without_marks_name_nothing() -> None:
    params = registry.get("tool_called").parse({"name": "read", "args": {"path": "/x"}})
    assert list(references(params)) == []


def _named(name: str, raw: Any, role: Role = Role.CHECK) -> list[tuple[tuple[str | int, ...], Ref]]:
    check_type = registry.get(name, role)
    return [(r.key, r.ref) for r in references(check_type.parse(raw))]


def test_the_families_mark_what_their_params_name() -> None:
    assert _named("file_content", {"path": "out.txt", "contains": "x"}) == [
        (("path",), Ref.WORKSPACE_PATH)
    ]
    assert _named("sql", {"service": "db", "query": "SELECT 1", "equals": 1}) == [
        (("service",), Ref.SERVICE)
    ]
    mock = {"service": "pay", "assertions": [{"field": "request_count", "equals": 1}]}
    assert _named("http_mock_assertions", mock) == [(("service",), Ref.SERVICE)]
    assert _named("http_except", ["pay", "mail"], Role.FORBIDDEN) == [
        (("services", 0), Ref.SERVICE),
        (("services", 1), Ref.SERVICE),
    ]
    assert _named("metric", "in_scope") == [(("metric",), Ref.METRIC)]
    judged = {"criteria": "polite", "model": "judge-1"}
    assert _named("llm_as_judge", judged) == [(("model",), Ref.JUDGE_MODEL)]
