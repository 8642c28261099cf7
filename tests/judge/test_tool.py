"""The verdict tool: its schema built from metrics, and the strict reading of a call."""

from __future__ import annotations

from typing import Any

import pytest

from sounding.judge import JudgeError, verdict_tool

TOOL = verdict_tool(
    {"in_scope": "bool", "quality": "number", "note": "string"},
    bounds={"quality": (0.0, 1.0)},
    hints={"note": "what you saw"},
)


def test_the_schema_requires_every_metric_and_nothing_else() -> None:
    assert TOOL.name == "record_verdict"
    assert TOOL.parameters == {
        "type": "object",
        "properties": {
            "in_scope": {"type": "boolean"},
            "quality": {"type": "number", "minimum": 0.0, "maximum": 1.0},
            "note": {"type": "string", "description": "what you saw"},
        },
        "required": ["in_scope", "quality", "note"],
        "additionalProperties": False,
    }


def test_a_valid_call_reads_as_typed_values() -> None:
    values = TOOL.read('{"in_scope": false, "quality": 1, "note": "ok"}')
    assert values == {"in_scope": False, "quality": 1.0, "note": "ok"}
    assert isinstance(values["quality"], float)
    assert TOOL.read({"in_scope": True, "quality": 0.25, "note": ""})["quality"] == 0.25


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ("not json", "not JSON"),
        ('"a string"', "str arguments, not an object"),
        ({"in_scope": True, "quality": 0.5}, "missing: note"),
        ({"in_scope": True, "quality": 0.5, "note": "", "x": 1}, "unexpected: x"),
        ({"in_scope": 1, "quality": 0.5, "note": ""}, "in_scope=1, which is not a boolean"),
        ({"in_scope": True, "quality": True, "note": ""}, "which is not a number"),
        ({"in_scope": True, "quality": -0.1, "note": ""}, "outside"),
        ({"in_scope": True, "quality": 0.5, "note": None}, "which is not a string"),
        ('{"in_scope": true, "quality": NaN, "note": ""}', "which is not a number"),
    ],
)
def test_a_malformed_call_is_a_judge_error(arguments: Any, problem: str) -> None:
    with pytest.raises(JudgeError, match=problem):
        TOOL.read(arguments)


@pytest.mark.parametrize(
    ("metrics", "options", "problem"),
    [
        ({}, {}, "at least one metric"),
        ({"has space": "bool"}, {}, "letters, digits"),
        ({"x": "integer"}, {}, "use bool, number or string"),
        ({"x": "bool"}, {"bounds": {"x": (0, 1)}}, "not a number metric"),
        ({"x": "bool"}, {"hints": {"y": "?"}}, "not a metric"),
    ],
)
def test_a_tool_that_cannot_be_built_says_why(
    metrics: Any, options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        verdict_tool(metrics, **options)
