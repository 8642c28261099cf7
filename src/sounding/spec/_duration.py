"""Durations as case files write them: `300`, `2.5`, `"300s"`, `"5m"`, `"1h30m"`, `"250ms"`."""

from __future__ import annotations

import math
import re

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_PLAIN = re.compile(rf"{_NUMBER}\Z")
_PART = re.compile(rf"({_NUMBER})\s*(ms|s|m|h)\s*")
_WHOLE = re.compile(rf"(?:{_NUMBER}\s*(?:ms|s|m|h)\s*)+\Z")


def parse_duration(value: object) -> float:
    """Seconds from a number of seconds or a text like `"300s"`, `"5m"`, `"1h30m"`, `"250ms"`.

    Raises ValueError, saying what is accepted, for anything else or a negative amount.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(_refusal(value))
    seconds = _from_text(value) if isinstance(value, str) else float(value)
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(_refusal(value))
    return seconds


def _from_text(text: str) -> float:
    compact = text.strip()
    if _PLAIN.match(compact):
        return float(compact)
    if not _WHOLE.match(compact):
        raise ValueError(_refusal(text))
    return sum(float(amount) * _UNITS[unit] for amount, unit in _PART.findall(compact))


def _refusal(value: object) -> str:
    return (
        f"{value!r} is not a duration: write a number of seconds (300) or a number "
        "with a unit: '250ms', '30s', '5m', '1h', '1h30m'"
    )
