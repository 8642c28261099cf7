"""Read TOML into plain data, and find the line of each key path by scanning the text.

`tomllib` keeps no positions, so once it has parsed the file a small scanner walks the
same text: table headers, `key =` pairs, items of arrays and keys of inline tables. It is
best effort; a path it missed falls back to the line of its table.
"""

from __future__ import annotations

import contextlib
import json
import re
import tomllib
from collections.abc import Callable
from typing import Any

from sounding._files import unreadable
from sounding._problems import KeyPath, Problem
from sounding.spec._errors import SpecError

_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR_END = frozenset(",]}#\n\r")


def read_toml(text: str, file: str) -> tuple[Any, dict[KeyPath, int]]:
    """The document as plain data, and the line (from 1) of each key path in it."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError([_syntax_problem(exc, file, text)]) from None
    except (RecursionError, ValueError) as exc:
        raise SpecError([Problem(file, None, "", f"cannot read TOML: {unreadable(exc)}")]) from None
    lines: dict[KeyPath, int] = {(): 1}
    with contextlib.suppress(IndexError, ValueError):  # keep what was found before it got lost
        _Scanner(text, lines).run()
    return data, lines


def _syntax_problem(exc: tomllib.TOMLDecodeError, file: str, text: str) -> Problem:
    message = str(exc)
    found = _POSITION.search(message)
    what = _POSITION.sub("", message).strip()
    if found is None:  # at the end of the document
        return Problem(file, text.count("\n") + 1, "", f"TOML syntax error: {what}")
    line, column = found.groups()
    return Problem(file, int(line), "", f"TOML syntax error at column {column}: {what}")


class _Scanner:
    """Walks valid TOML text, recording the line of each header, key and array item."""

    def __init__(self, text: str, lines: dict[KeyPath, int]) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.lines = lines
        self.table: KeyPath = ()
        self.arrays: dict[KeyPath, int] = {}  # array of tables -> index of its last table

    def run(self) -> None:
        while self._skip(newlines=True):
            if self.text[self.pos] == "[":
                self._header()
            else:
                self._pair(self.table)

    def _skip(self, *, newlines: bool) -> bool:
        """Skip blanks and comments (and line ends when asked); False at the end of text."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t" or (newlines and char == "\r"):
                self.pos += 1
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif newlines and char == "\n":
                self.pos += 1
                self.line += 1
            else:
                return True
        return False

    def _header(self) -> None:
        many = self.text.startswith("[[", self.pos)
        self.pos += 2 if many else 1
        keys = self._key()
        self._skip(newlines=False)
        self.pos += 2 if many else 1
        if many:
            array = (*self._resolve(keys[:-1]), keys[-1])
            index = self.arrays.get(array, -1) + 1
            self.arrays[array] = index
            self.table = (*array, index)
        else:
            self.table = self._resolve(keys)
        self._record(self.table)

    def _resolve(self, keys: KeyPath) -> KeyPath:
        """A header's dotted key, with the current index of each array of tables it crosses."""
        path: KeyPath = ()
        for key in keys:
            path = (*path, key)
            if path in self.arrays:
                path = (*path, self.arrays[path])
        return path

    def _record(self, path: KeyPath) -> None:
        for end in range(1, len(path)):
            self.lines.setdefault(path[:end], self.line)
        self.lines[path] = self.line

    def _pair(self, base: KeyPath) -> None:
        path = (*base, *self._key())
        self._record(path)
        self._skip(newlines=False)
        if self.text[self.pos] != "=":
            raise ValueError("expected '='")
        self.pos += 1
        self._skip(newlines=False)
        self._value(path)

    def _key(self) -> KeyPath:
        keys: list[str] = []
        while True:
            self._skip(newlines=False)
            keys.append(self._key_part())
            self._skip(newlines=False)
            if self.text[self.pos] != ".":
                return tuple(keys)
            self.pos += 1

    def _key_part(self) -> str:
        char = self.text[self.pos]
        if char in "\"'":
            start = self.pos
            self._string()
            quoted = self.text[start : self.pos]
            return quoted[1:-1] if char == "'" else str(json.loads(quoted))
        found = _BARE_KEY.match(self.text, self.pos)
        if found is None:
            raise ValueError("expected a key")
        self.pos = found.end()
        return found.group()

    def _value(self, path: KeyPath) -> None:
        char = self.text[self.pos]
        if char == "[":
            self._items("]", lambda index: self._item((*path, index)))
        elif char == "{":
            self._items("}", lambda _: self._pair(path))
        elif char in "\"'":
            self._string()
        else:
            start = self.pos
            while self.pos < len(self.text) and self.text[self.pos] not in _SCALAR_END:
                self.pos += 1
            if self.pos == start:
                raise ValueError("expected a value")

    def _item(self, path: KeyPath) -> None:
        self.lines[path] = self.line
        self._value(path)

    def _items(self, close: str, read: Callable[[int], None]) -> None:
        """The items of an array or the pairs of an inline table, each read with its index."""
        self.pos += 1
        index = 0
        while self._skip(newlines=True):
            if self.text[self.pos] == close:
                self.pos += 1
                return
            read(index)
            self._skip(newlines=True)
            if self.text[self.pos] == ",":
                self.pos += 1
                index += 1

    def _string(self) -> None:
        """Move past a string of any of the four kinds, counting the lines it spans."""
        text = self.text
        quote = text[self.pos]
        triple = text.startswith(quote * 3, self.pos)
        self.pos += 3 if triple else 1
        while True:
            char = text[self.pos]
            if char == "\\" and quote == '"':
                self.pos += 2 if text[self.pos + 1] != "\n" else 1
                continue
            if char == "\n":
                self.line += 1
            if char == quote and (not triple or text.startswith(quote * 3, self.pos)):
                break
            self.pos += 1
        if triple:
            self.pos += 3
            while self.pos < len(text) and text[self.pos] == quote:  # `""""` ends with a quote
                self.pos += 1
        else:
            self.pos += 1
