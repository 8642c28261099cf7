"""Where a value sits in a document, what is wrong with it, and pydantic's validation
errors said in those words: one way to name a problem, for case files, sounding.toml,
service declarations, run records and stored results alike."""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from sounding._words import closest_match

KeyPath = tuple[str | int, ...]
"""Where a value sits in a document: `("scenarios", 2, "expect", 0)`."""

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
    """One thing wrong in a document, with its place and what would be accepted instead."""

    file: str
    line: int | None
    key: str
    message: str
    allowed: tuple[str, ...] = ()
    closest: str | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.said}"

    @property
    def said(self) -> str:
        """The problem without its file: `key: message (allowed: ...; did you mean ...?)`."""
        hints: list[str] = []
        if self.allowed:
            hints.append("allowed: " + ", ".join(self.allowed))
        if self.closest:
            hints.append(f"did you mean '{self.closest}'?")
        head = f"{self.key}: " if self.key else ""
        return head + self.message + (f" ({'; '.join(hints)})" if hints else "")


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


_QUOTED = re.compile(r"'([^']*)'")
_EXPECTED = {
    "string": "text",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "list": "a list",
    "dict": "a mapping (key: value)",
    "model": "a mapping (key: value)",
    "model_attributes": "a mapping (key: value)",
}
_BOUNDS = {  # an error type, how it reads, and the key of its limit
    "greater_than_equal": ("at least", "ge"),
    "greater_than": ("more than", "gt"),
    "less_than_equal": ("at most", "le"),
    "less_than": ("less than", "lt"),
}


def validation_problems(
    exc: ValidationError,
    model: type[BaseModel],
    base: KeyPath = (),
    locator: Locator | None = None,
    *,
    shorthand: str | None = None,
) -> list[Problem]:
    """One problem per error of `model` validated at `base` in the file `locator` reads
    (without one, problems name no file and no line: say them with `Problem.said`).

    `shorthand` names the field a scalar in the file was given to: its errors are placed
    on `base` itself, where that scalar is written.
    """
    locator = locator or Locator("", {})
    errors = exc.errors(include_url=False)
    for error in errors:
        if shorthand is not None and error["loc"][:1] == (shorthand,):
            error["loc"] = error["loc"][1:]
    found = [(error, _problem(error, model, base, locator)) for error in errors]
    # a missing key that an unknown key beside it was meant to be: the unknown one says it all
    meant = {(e["loc"][:-1], p.closest) for e, p in found if e["type"] == "extra_forbidden"}
    return [
        problem
        for error, problem in found
        if error["type"] != "missing" or (error["loc"][:-1], error["loc"][-1]) not in meant
    ]


def _problem(
    error: ErrorDetails, model: type[BaseModel], base: KeyPath, locator: Locator
) -> Problem:
    loc = tuple(error["loc"])
    kind = error["type"]
    if kind == "missing" and loc:
        return locator.problem((*base, *loc[:-1]), f"missing required key '{loc[-1]}'")
    if kind == "extra_forbidden":
        name = str(loc[-1])
        allowed = sorted(_fields_at(model, loc[:-1]))
        return locator.problem((*base, *loc), f"unknown key '{name}'", allowed=allowed, typo=name)
    if kind in ("enum", "literal_error"):
        allowed = _QUOTED.findall(str(error.get("ctx", {}).get("expected", "")))
        value = error["input"]
        message = f"{value!r} is not one of the allowed values"
        return locator.problem((*base, *loc), message, allowed=allowed, typo=str(value))
    return locator.problem((*base, *loc), _message(error))


def _message(error: ErrorDetails) -> str:
    kind, value, ctx = error["type"], error["input"], error.get("ctx", {})
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    if kind in _BOUNDS:
        phrase, key = _BOUNDS[kind]
        limit = ctx.get(key)
        shown = int(limit) if isinstance(limit, float) and limit.is_integer() else limit
        return f"must be {phrase} {shown} (got {value!r})"
    for prefix, expected in _EXPECTED.items():
        if kind in (f"{prefix}_type", f"{prefix}_parsing", f"{prefix}_from_float"):
            return f"must be {expected} (got {_describe(value)})"
    return f"{error['msg']} (got {_describe(value)})"


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing"
    return f"{type(value).__name__} {value!r}"


def _fields_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The keys the model found at `loc` inside `model` accepts (empty when not a model),
    as the file writes them: a field's alias (`pass`), never its Python name (`pass_`)."""
    current: Any = model
    for part in loc:
        current = _step(_unwrap(current), part)
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(_keys(current))
    return []


def _keys(model: type[BaseModel]) -> dict[str, Any]:
    """Each key of `model` as written in a file, with its field."""
    return {field.alias or name: field for name, field in model.model_fields.items()}


def _step(annotation: Any, part: int | str) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = _keys(annotation).get(str(part))
        return field.annotation if field else None
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin is list and isinstance(part, int):
        return args[0]
    if origin is dict:
        return args[1]
    return None


def _unwrap(annotation: Any) -> Any:
    """`Annotated[X, ...]` and `X | None` read as `X`."""
    while True:
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is typing.Annotated:
            annotation = args[0]
        elif origin in (typing.Union, types.UnionType):
            rest = [arg for arg in args if arg is not type(None)]
            if len(rest) != 1:
                return annotation
            annotation = rest[0]
        else:
            return annotation
