"""The verdict tool: the function the judge is forced to call, built from declared metrics.

The judge never answers in prose that we parse. Its answer is the arguments of one call of
this tool, read back strictly: anything missing, extra, mistyped or out of range is a
JudgeError, because an unreadable verdict must never count as a pass or as a fail.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sounding._files import loads
from sounding.judge._errors import JudgeError

MetricType = Literal["bool", "number", "string"]
Value = bool | float | str

TOOL_NAME = "record_verdict"
_JSON_TYPES: dict[str, str] = {"bool": "boolean", "number": "number", "string": "string"}
_METRIC_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_SNIPPET = 200


class VerdictTool(BaseModel):
    """The tool offered to the judge: a name, and one typed parameter per metric."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = TOOL_NAME
    description: str
    caller: str = "the judge"  # who is made to call it, as errors name it
    metrics: dict[str, MetricType]
    bounds: dict[str, tuple[float, float]] = Field(default_factory=dict)
    hints: dict[str, str] = Field(default_factory=dict)

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments: every metric required, nothing else allowed."""
        properties = {name: self._property(name, kind) for name, kind in self.metrics.items()}
        return {
            "type": "object",
            "properties": properties,
            "required": list(self.metrics),
            "additionalProperties": False,
        }

    def _property(self, name: str, kind: MetricType) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": _JSON_TYPES[kind]}
        if name in self.bounds:
            schema["minimum"], schema["maximum"] = self.bounds[name]
        if name in self.hints:
            schema["description"] = self.hints[name]
        return schema

    def read(self, arguments: str | Mapping[str, Any]) -> dict[str, Value]:
        """The metrics of one call, checked against the schema; JudgeError when they are not."""
        values = _as_object(self, arguments)
        missing = [name for name in self.metrics if name not in values]
        extra = sorted(set(values) - set(self.metrics))
        if missing or extra:
            lacking, unexpected = ", ".join(missing) or "none", ", ".join(extra) or "none"
            raise JudgeError(
                f"{self.caller} called {self.name} with the wrong fields "
                f"(missing: {lacking}; unexpected: {unexpected})"
            )
        return {name: self._value(name, kind, values[name]) for name, kind in self.metrics.items()}

    def _value(self, name: str, kind: MetricType, value: Any) -> Value:
        if kind == "bool" and isinstance(value, bool):
            return value
        if kind == "string" and isinstance(value, str):
            return value
        if kind != "number" or not _is_number(value):
            raise JudgeError(
                f"{self.caller} called {self.name} with {name}={json.dumps(value)[:_SNIPPET]}, "
                f"which is not a {_JSON_TYPES[kind]}"
            )
        number, (low, high) = float(value), self.bounds.get(name, (-math.inf, math.inf))
        if not low <= number <= high:
            raise JudgeError(
                f"{self.caller} called {self.name} with {name}={number}, outside [{low}, {high}]"
            )
        return number


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _as_object(tool: VerdictTool, arguments: str | Mapping[str, Any]) -> Mapping[str, Any]:
    value: Any = arguments
    called = f"{tool.caller} called {tool.name}"
    if isinstance(arguments, str):
        try:
            value = loads(arguments)
        except ValueError as exc:
            raise JudgeError(
                f"{called} with arguments that are not JSON ({exc}): {arguments[:_SNIPPET]!r}"
            ) from None
    if not isinstance(value, Mapping):
        raise JudgeError(f"{called} with {type(value).__name__} arguments, not an object")
    return value


def verdict_tool(
    metrics: Mapping[str, MetricType],
    *,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    hints: Mapping[str, str] | None = None,
    description: str = "Record your verdict on the material. Call this exactly once.",
    tool_name: str = TOOL_NAME,
    caller: str = "the judge",
) -> VerdictTool:
    """Build the verdict tool whose parameters are `metrics` (name → bool, number or string).

    `bounds` limits numbers (`{"score": (0, 1)}`); `hints` describe a metric to the judge.
    """
    if not metrics:
        raise ValueError("a verdict tool needs at least one metric")
    for metric, kind in metrics.items():
        if not _METRIC_NAME.match(metric):
            raise ValueError(f"metric name '{metric}' must be letters, digits and _ (max 64)")
        if kind not in _JSON_TYPES:
            raise ValueError(f"metric '{metric}' has type '{kind}'; use bool, number or string")
    for metric in bounds or {}:
        if metrics.get(metric) != "number":
            raise ValueError(f"bounds given for '{metric}', which is not a number metric")
    for metric in hints or {}:
        if metric not in metrics:
            raise ValueError(f"a hint is given for '{metric}', which is not a metric")
    return VerdictTool(
        name=tool_name,
        caller=caller,
        description=description,
        metrics=dict(metrics),
        bounds=dict(bounds or {}),
        hints=dict(hints or {}),
    )
