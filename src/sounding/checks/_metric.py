"""`metric`: a validator's metric enters the verdict only through this check.

Validators (docs/validators.md) measure a trial into named metrics; the runner hands them to
the checks as `evidence.extra["metrics"]` (name → value, None when unjudged),
`["reasons"]` and `["unjudged"]` (name → why). A bool passes when true; a number passes
when it lies within `at_least` / `at_most`; anything else is diagnostic and cannot be scored.
The loader refuses a `metric` that no validator of the case declares.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import Field, model_validator

from sounding.checks._base import CheckContext, CheckResult, Params
from sounding.checks._fields import MetricName
from sounding.checks._registry import registry

NOT_KEPT = (
    "no validator metrics were kept for this trial (it was scored outside `sounding run`, "
    "or before its validators ran)"
)


class MetricParams(Params):
    """The metric's name, and for a number the bounds it must lie within."""

    metric: MetricName = Field(min_length=1)
    at_least: float | None = None
    at_most: float | None = None

    @model_validator(mode="after")
    def _bounds_in_order(self) -> MetricParams:
        if self.at_least is not None and self.at_most is not None and self.at_least > self.at_most:
            raise ValueError(
                f"at_least ({self.at_least:g}) is above at_most ({self.at_most:g}): "
                "no value could pass; swap them"
            )
        return self


@registry.check("metric", MetricParams, family="metric", shorthand="metric")
def metric(params: MetricParams, context: CheckContext) -> CheckResult:
    """A validator's metric: true for a bool, within at_least/at_most for a number."""
    extra = context.evidence.extra
    name = params.metric
    unjudged: Mapping[str, str] = extra.get("unjudged") or {}
    if name in unjudged:
        return CheckResult.unjudged(f"metric '{name}' was not judged: {unjudged[name]}")
    metrics: Mapping[str, Any] | None = extra.get("metrics")
    if metrics is None:
        return CheckResult.unjudged(NOT_KEPT)
    if metrics.get(name) is None:
        return CheckResult.unjudged(f"no validator measured metric '{name}' in this trial")
    said: str = (extra.get("reasons") or {}).get(name, "")
    return _judge(params, metrics[name], said)


def _judge(params: MetricParams, value: Any, said: str) -> CheckResult:
    name = params.metric
    bounded = params.at_least is not None or params.at_most is not None
    if isinstance(value, bool):
        if bounded:
            return CheckResult.error(
                f"metric '{name}' is a bool ({str(value).lower()}): at_least / at_most apply to "
                "numbers; remove them to pass when it is true"
            )
        reason = f"metric '{name}' is {str(value).lower()}" + (f": {said}" if said else "")
        return CheckResult.verdict(value, reason, value=value)
    if isinstance(value, int | float) and math.isfinite(value):
        if not bounded:
            return CheckResult.error(
                f"metric '{name}' is a number ({value:g}): give at_least or at_most to say "
                "which values pass"
            )
        return _within(params, float(value), said)
    return CheckResult.error(
        f"metric '{name}' is {_kind(value)}, which is diagnostic only and cannot be scored: "
        "score a bool or a number metric"
    )


def _within(params: MetricParams, value: float, said: str) -> CheckResult:
    name, low, high = params.metric, params.at_least, params.at_most
    if low is not None and value < low:
        ok, reason = False, f"metric '{name}' is {value:g}, below at_least {low:g}"
    elif high is not None and value > high:
        ok, reason = False, f"metric '{name}' is {value:g}, above at_most {high:g}"
    else:
        limits = [f"at least {low:g}"] if low is not None else []
        limits += [f"at most {high:g}"] if high is not None else []
        ok, reason = True, f"metric '{name}' is {value:g}, {' and '.join(limits)}"
    return CheckResult.verdict(ok, reason + (f": {said}" if said else ""), value=value)


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, float):
        return f"the number {value}"
    return f"a {type(value).__name__}"
