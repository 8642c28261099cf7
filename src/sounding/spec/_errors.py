"""One error type for everything a case file can get wrong: where, what, and how to fix it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sounding._words import closest_match

KeyPath = tuple[str | int, ...]
"""Where a value sits in a case file: `("scenarios", 2, "expect", 0)`."""

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")


def render_key(key: KeyPath) -> str:
    """`("scenarios", 2, "expect", 0)` reads `scenarios[2].expect[0]`."""
    parts: list[str] = []
    for part in key:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        elif _PLAIN_KEY.match(part):
            parts.append(f".{part}" if parts else part)
        else:
            parts.append(f"[{json.dumps(part)}]")
    return "".join(parts)


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a case file, with its place and what would be accepted instead."""

    file: str
    line: int | None
    key: str
    message: str
    allowed: tuple[str, ...] = ()
    closest: str | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        head = f"{where}: {self.key}: " if self.key else f"{where}: "
        hints: list[str] = []
        if self.allowed:
            hints.append("allowed: " + ", ".join(self.allowed))
        if self.closest:
            hints.append(f"did you mean '{self.closest}'?")
        return head + self.message + (f" ({'; '.join(hints)})" if hints else "")


class SpecError(Exception):
    """A case file (or several) that cannot be used; `problems` lists every reason found."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = _in_order(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))


def _in_order(problems: Iterable[Problem]) -> list[Problem]:
    """Each problem once, files in the order met, lines in order within a file."""
    unique = list(dict.fromkeys(problems))
    files = list(dict.fromkeys(problem.file for problem in unique))
    return sorted(unique, key=lambda p: (files.index(p.file), p.line is None, p.line or 0))


@dataclass(frozen=True)
class Locator:
    """Turns a key path into a `Problem` at the line where that key (or its parent) stands."""

    file: str
    lines: Mapping[KeyPath, int]

    def line(self, key: KeyPath) -> int | None:
        for end in range(len(key), -1, -1):
            found = self.lines.get(key[:end])
            if found is not None:
                return found
        return None

    def problem(
        self, key: KeyPath, message: str, *, allowed: Iterable[str] = (), typo: str | None = None
    ) -> Problem:
        """A problem at `key`; `typo` is the wrong name, matched against `allowed`."""
        names = tuple(allowed)
        closest = None if typo is None else closest_match(typo, names)
        return Problem(self.file, self.line(key), render_key(key), message, names, closest)
