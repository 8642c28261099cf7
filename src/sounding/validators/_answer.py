"""The answer every validator gives: `{"metrics": {...}, "reasons": {...}, "unjudged": {...}}`.

Read strictly: anything off contract is a problem in words, which makes the trial invalid.
An unreadable answer must never count as false, nor as true.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sounding._files import json_kind, loads

ANSWER_KEYS = ("metrics", "reasons", "unjudged")
_SHOWN = 80


@dataclass(frozen=True)
class Answer:
    """One validator's metrics, their reasons, and the metrics it could not judge (why)."""

    metrics: Mapping[str, Any] = field(default_factory=dict)
    reasons: Mapping[str, str] = field(default_factory=dict)
    unjudged: Mapping[str, str] = field(default_factory=dict)


def read_answer(stdout: bytes, declared: Sequence[str]) -> Answer | str:
    """The answer printed on stdout, or what is wrong with it (a problem in words)."""
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError:
        return "printed bytes that are not UTF-8 text on stdout"
    try:
        value = loads(text)
    except json.JSONDecodeError as exc:
        shown = text.strip()[:_SHOWN]
        return f"printed no JSON object on stdout ({exc.msg}): {shown!r}"
    if not isinstance(value, dict):
        return f"printed {json_kind(value, article=True)}, expected an object with 'metrics'"
    return check_answer(value, declared)


def check_answer(value: Mapping[str, Any], declared: Sequence[str]) -> Answer | str:
    """Hold a parsed answer to the contract and to the metrics it owes."""
    problem = _shape(value)
    if problem is not None:
        return problem
    metrics: dict[str, Any] = dict(value["metrics"])
    unjudged: dict[str, str] = dict(value.get("unjudged") or {})
    both = sorted(set(metrics) & set(unjudged))
    if both:
        return f"returned {_names(both)} both as a value and as unjudged: give one or the other"
    blank = sorted(name for name, reason in unjudged.items() if not reason.strip())
    if blank:
        return f"marked {_names(blank)} unjudged without a reason: say why it could not judge"
    missing = [name for name in declared if name not in metrics and name not in unjudged]
    if missing:
        returned = ", ".join(sorted(metrics)) or "none"
        return f"did not return the declared {_names(missing)} (returned: {returned})"
    reasons = {k: v for k, v in (value.get("reasons") or {}).items() if v.strip()}
    return Answer(metrics, reasons, unjudged)


def _shape(value: Mapping[str, Any]) -> str | None:
    unknown = sorted(set(value) - set(ANSWER_KEYS))
    if unknown:
        allowed = ", ".join(ANSWER_KEYS)
        return f"answered with unknown {_names(unknown, 'key')} (allowed: {allowed})"
    if "metrics" not in value:
        return "answered without 'metrics': print {\"metrics\": {...}}"
    if not isinstance(value["metrics"], dict):
        kind = json_kind(value["metrics"], article=True)
        return f"answered 'metrics' as {kind}, expected an object"
    for key in ("reasons", "unjudged"):
        part = value.get(key)
        if part is None:
            continue
        if not isinstance(part, dict):
            kind = json_kind(part, article=True)
            return f"answered '{key}' as {kind}, expected an object of strings"
        wrong = sorted(name for name, text in part.items() if not isinstance(text, str))
        if wrong:
            return f"answered '{key}' with a non-string for {_names(wrong, 'key')}"
    return None


def _names(names: Sequence[str], noun: str = "metric") -> str:
    quoted = ", ".join(f"'{name}'" for name in names)
    return f"{noun}{'s' if len(names) > 1 else ''} {quoted}"
