"""Counts in words for what sounding prints: `1 trial`, `3 trials`, `1 case file`."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, the noun plural unless the count is 1 (`plural`, or noun + "s")."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
