"""Words for what sounding prints: counts (`1 trial`, `3 trials`), lists cut short, and the
name a typo meant."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, the noun plural unless the count is 1 (`plural`, or noun + "s")."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def listed(items: Sequence[str], limit: int = 3) -> str:
    """The first `limit` items, and how many more: `a, b, c (+2 more)`."""
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def closest_match(name: str, known: Iterable[str]) -> str | None:
    """The known name `name` was most likely meant to be, if any is close enough."""
    found = difflib.get_close_matches(name, list(known), n=1)
    return found[0] if found else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the known name closest to `name`, or nothing."""
    close = closest_match(name, known)
    return f"; did you mean '{close}'?" if close else ""
