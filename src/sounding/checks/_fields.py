"""Param field types the check families share, each validated when the suite loads.

A field that names something outside its params (a workspace path, a service, a metric, a
judge model) says so in its type, and the loader checks it against the case by that mark.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator
from enum import Enum
from functools import cache
from typing import Annotated, Any, NamedTuple

import regex
from pydantic import AfterValidator, BaseModel, BeforeValidator, Field


def as_list(value: Any) -> Any:
    """One string stands for a list of one: `contains: x` is `contains: [x]`."""
    return [value] if isinstance(value, str) else value


def _compiles(value: str) -> str:
    try:
        regex.compile(value, regex.MULTILINE)
    except (regex.error, OverflowError, RecursionError) as exc:
        raise ValueError(
            f"'{value}' is not a valid regular expression ({exc}); "
            "escape special characters such as ( [ . * with a backslash"
        ) from None
    return value


def checked(check: Callable[[str], object]) -> AfterValidator:
    """A validator that refuses a text `check` raises ValueError for, and keeps it otherwise."""

    def validate(value: str) -> str:
        check(value)
        return value

    return AfterValidator(validate)


Name = Annotated[str, Field(min_length=1)]
"""A non-empty string: a tool, an argument, a text to look for."""

Names = Annotated[list[Name], BeforeValidator(as_list), Field(min_length=1)]
"""One name or a non-empty list of them."""

Texts = Annotated[list[Name], BeforeValidator(as_list)]
"""One text or a list of them, possibly empty (an optional condition)."""

Regex = Annotated[str, AfterValidator(_compiles)]
"""A regular expression an agent's text is searched with: `^`/`$` match at each line. It
runs with the `regex` engine, bounded by the check's time (`matches`)."""


def matches(pattern: str, text: str, timeout: float) -> list[regex.Match[str]]:
    """Every match of `pattern` in `text`; TimeoutError, saying so, when the search takes
    longer than `timeout` seconds (a pattern of nested repetition on an unlucky text)."""
    try:
        return list(regex.finditer(pattern, text, regex.MULTILINE, timeout=timeout))
    except TimeoutError:
        raise TimeoutError(
            f"pattern '{pattern}' ran longer than the check's {timeout:g}s on a text of "
            f"{len(text)} characters; write it without nested repetition like (a+)+"
        ) from None


class Ref(Enum):
    """What a marked param field names outside its params."""

    WORKSPACE_PATH = "a path inside the workspace"
    SERVICE = "a service the case declares"
    METRIC = "a metric a validator of the case declares"
    JUDGE_MODEL = "a judge model, held to the judge's rules before a run"


WorkspacePath = Annotated[str, Ref.WORKSPACE_PATH]
"""A path relative to the workspace: one that leaves it is refused when the suite loads."""

ServiceName = Annotated[str, Ref.SERVICE]
"""The name of a service of the case: an undeclared one is refused when the suite loads."""

MetricName = Annotated[str, Ref.METRIC]
"""A metric a validator of the case declares: another is refused when the suite loads."""

JudgeModel = Annotated[str, Ref.JUDGE_MODEL]
"""A judge model: a model under test is refused as one before a run starts."""


class Reference(NamedTuple):
    """A text of some params that a field marks, and where it stands (`("files", 0, "path")`)."""

    key: tuple[str | int, ...]
    ref: Ref
    value: str


def references(params: BaseModel) -> Iterator[Reference]:
    """Every marked text of `params`, through nested models and lists."""
    for name, ref in _marked(type(params)):
        yield from _found(getattr(params, name), (name,), ref)


def _found(value: Any, key: tuple[str | int, ...], ref: Ref | None) -> Iterator[Reference]:
    if isinstance(value, str) and ref is not None:
        yield Reference(key, ref, value)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _found(item, (*key, index), ref)
    elif isinstance(value, BaseModel):
        for inner in references(value):
            yield inner._replace(key=(*key, *inner.key))


@cache
def _marked(model: type[BaseModel]) -> tuple[tuple[str, Ref | None], ...]:
    """The fields of `model` that may hold a reference: marked ones, and those whose type
    holds a model with marked fields. Decided once per model."""
    fields = []
    for name, field in model.model_fields.items():
        parts = [*field.metadata, *_parts(field.annotation)]
        ref = next((part for part in parts if isinstance(part, Ref)), None)
        models = [p for p in parts if isinstance(p, type) and issubclass(p, BaseModel)]
        if ref is not None or any(inner is not model and _marked(inner) for inner in models):
            fields.append((name, ref))
    return tuple(fields)


def _parts(annotation: Any) -> Iterator[Any]:
    """A type and everything inside it: union arms, item types, `Annotated` marks."""
    yield annotation
    for arg in typing.get_args(annotation):
        yield from _parts(arg)
