"""SQL as text: split a seed script into statements, each with the line it starts on.

What a statement does is never decided here: the `sql` check relies on the databases' own
guarantees (a login that may only read), not on reading its SQL.

The splitter knows quotes ('...', "...", `...`), comments (-- and /* */), PostgreSQL's
$tag$ strings and E'...' strings, backslash escapes on MySQL, and the BEGIN ... END body
of a CREATE TRIGGER. It does not know MySQL's client-side DELIMITER command.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

_COMMENT = [("comment", r"--[^\n]*|/\*.*?\*/")]
_STANDARD = [
    ("string", r"[eE]'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'"),
    ("string", r'"(?:[^"]|"")*"|`(?:[^`]|``)*`'),
]
_BACKSLASH = [
    ("string", r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"|`(?:[^`]|``)*`"),
]
_DOLLAR = [("string", r"\$(?P<tag>[A-Za-z_][A-Za-z0-9_]*)?\$.*?\$(?P=tag)\$|\$\$.*?\$\$")]
_OTHER = [
    ("word", r"[A-Za-z_][A-Za-z0-9_$]*"),
    ("end", r";"),
    ("space", r"\s+"),
    ("opener", r"['\"`]|/\*|\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$"),
    ("other", r"."),
]


def _scanner(*parts: list[tuple[str, str]]) -> re.Pattern[str]:
    alternatives = [f"(?P<{kind}{i}>{rx})" for i, (kind, rx) in enumerate(itertools.chain(*parts))]
    return re.compile("|".join(alternatives), re.DOTALL)


_SCANNERS = {
    "postgresql": _scanner(_COMMENT, _DOLLAR, _STANDARD, _OTHER),
    "mysql": _scanner(_COMMENT, _BACKSLASH, _OTHER),
    "sqlite": _scanner(_COMMENT, _STANDARD, _OTHER),
}

_CLOSES_CONTROL = frozenset({"IF", "LOOP", "WHILE", "REPEAT"})


class SqlTextError(ValueError):
    """A script that cannot be split: an unterminated quote or comment, with its line."""


@dataclass(frozen=True)
class Statement:
    """One statement of a script: its text, the line it starts on, its code alone (the
    text with strings and comments blanked out)."""

    text: str
    line: int
    code: str


@dataclass
class _Pending:
    text: list[str]
    code: list[str]
    line: int
    words: list[str]
    depth: int = 0

    @property
    def in_trigger(self) -> bool:
        return self.words[:1] == ["CREATE"] and "TRIGGER" in self.words[1:6]


def split_statements(script: str, *, dialect: str = "sqlite") -> list[Statement]:
    """The statements of `script`, empty ones left out; raises SqlTextError with a line."""
    scanner = _SCANNERS.get(dialect, _SCANNERS["sqlite"])
    tokens = [(m.lastgroup or "", m.group(0), m.start()) for m in scanner.finditer(script)]
    statements: list[Statement] = []
    pending = _Pending([], [], 1, [])
    for index, (group, value, start) in enumerate(tokens):
        kind = group.rstrip("0123456789")
        if kind == "opener":
            line = script.count("\n", 0, start) + 1
            raise SqlTextError(f"line {line}: {value!r} is never closed")
        if not pending.text and kind in ("space", "comment"):
            continue
        if not pending.text:
            pending.line = script.count("\n", 0, start) + 1
        if kind == "end" and pending.depth <= 0:
            _close(pending, statements)
            pending = _Pending([], [], 1, [])
            continue
        if kind == "word":
            _count_block(pending, value.upper(), _next_word(tokens, index))
        pending.text.append(value)
        pending.code.append(value if kind in ("word", "end", "other") else " ")
    _close(pending, statements)
    return statements


def _count_block(pending: _Pending, word: str, following: str) -> None:
    """Track BEGIN ... END inside a CREATE TRIGGER, where `;` does not end the statement."""
    pending.words.append(word)
    if not pending.in_trigger:
        return
    if word in ("BEGIN", "CASE"):
        pending.depth += 1
    elif word == "END" and following not in _CLOSES_CONTROL:
        pending.depth -= 1


def _next_word(tokens: list[tuple[str, str, int]], index: int) -> str:
    for group, value, _start in tokens[index + 1 :]:
        if group.startswith("word"):
            return value.upper()
        if not group.startswith(("space", "comment")):
            return ""
    return ""


def _close(pending: _Pending, statements: list[Statement]) -> None:
    code = "".join(pending.code)
    if code.strip():
        statements.append(Statement("".join(pending.text).strip(), pending.line, code.strip()))
