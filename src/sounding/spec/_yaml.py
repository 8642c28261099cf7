"""Read YAML into plain data, keeping the line of every key and every list item.

The parser's events (which carry their marks) are turned into plain data here, rather
than loaded, so that each key path keeps its line and a key written twice is caught.
Building from events skips the node tree `yaml.compose` would build first: for a file
of 5,000 scenarios that tree alone costs more than everything else the loader does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from sounding._problems import KeyPath, Problem, render_key
from sounding.spec._errors import SpecError

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - libyaml missing: the pure-Python parser is slower
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_TAG = "tag:yaml.org,2002:"
_RESOLVER = Resolver()
_CONSTRUCT = SafeConstructor()
_SCALARS: dict[str, Callable[[ScalarNode], Any]] = {
    _TAG + "str": _CONSTRUCT.construct_scalar,
    _TAG + "timestamp": _CONSTRUCT.construct_scalar,  # kept as written: `ref: 2024-01-01`
    _TAG + "null": _CONSTRUCT.construct_yaml_null,
    _TAG + "bool": _CONSTRUCT.construct_yaml_bool,
    _TAG + "int": _CONSTRUCT.construct_yaml_int,
    _TAG + "float": _CONSTRUCT.construct_yaml_float,
}
_KINDS = {MappingStartEvent: "map", SequenceStartEvent: "seq"}
_DEPTH = 64  # lists and mappings inside each other; a case needs a handful
_ALIASED = 100_000  # values aliases may bring in, or ten times the values written if more


def read_yaml(text: str, file: str) -> tuple[Any, dict[KeyPath, int]]:
    """The document as plain data, and the line (from 1) of each key path in it."""
    loader = None
    try:  # the pure-Python loader refuses unprintable text as it starts
        loader = _Loader(text)
        builder = _Builder(file, iter(loader.get_event, None))
        data = builder.stream()
    except yaml.MarkedYAMLError as exc:
        raise SpecError([_syntax_problem(exc, file)]) from None
    except yaml.YAMLError as exc:
        raise SpecError([Problem(file, None, "", f"cannot read YAML: {exc}")]) from None
    finally:
        if loader is not None:
            loader.dispose()
    if builder.problems:
        raise SpecError(builder.problems)
    return data, builder.lines


def _syntax_problem(exc: yaml.MarkedYAMLError, file: str) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    what = " ".join(part for part in (exc.context, exc.problem) if part)
    if mark is None:  # pragma: no cover - the parser marks every error it raises
        return Problem(file, None, "", f"YAML syntax error: {what}")
    return Problem(
        file,
        mark.line + 1,
        "",
        f"YAML syntax error at column {mark.column + 1}: {what} "
        "(check the indentation and quoting on this line and the one before)",
    )


def _line(event: Event) -> int:
    mark = event.start_mark
    return int(mark.line) + 1 if mark is not None else 0


class _Builder:
    """Consumes the events of one stream, recording lines and collecting what cannot be read."""

    def __init__(self, file: str, events: Iterator[Event]) -> None:
        self.file = file
        self.events = events
        self.lines: dict[KeyPath, int] = {}
        self.problems: list[Problem] = []
        self.anchors: dict[str, tuple[Any, int]] = {}  # the value and how many values it holds
        self.depth = 0
        self.written = 0  # values read from the text
        self.aliased = 0  # values aliases brought in again

    def stream(self) -> Any:
        next(self.events)  # stream start
        if isinstance(next(self.events), StreamEndEvent):
            return None  # an empty file
        root = next(self.events)
        self.lines[()] = _line(root)
        data = self.value(root, ())
        next(self.events)  # document end
        extra = next(self.events)
        if not isinstance(extra, StreamEndEvent):
            self._problem((), "holds several documents ('---'): keep one case per file", extra)
        return data

    def value(self, event: Event, path: KeyPath) -> Any:
        if isinstance(event, AliasEvent):
            return self._alias(event, path)
        before = self.written + self.aliased
        self.written += 1
        if isinstance(event, ScalarEvent):
            value = self._scalar(event, path)
        elif isinstance(event, CollectionStartEvent):
            value = self._collection(event, path)
        else:  # pragma: no cover - the parser yields only these inside a document
            raise yaml.YAMLError(f"unexpected {type(event).__name__}")
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, self.written + self.aliased - before)
        return value

    def _scalar(self, event: ScalarEvent, path: KeyPath) -> Any:
        tag = event.tag
        if tag in (None, "!"):
            tag = _RESOLVER.resolve(ScalarNode, event.value, event.implicit)  # type: ignore[no-untyped-call]
        construct = _SCALARS.get(tag)
        if construct is None:
            self._problem(path, f"unsupported YAML tag '{tag}': write a plain value", event)
            return event.value
        try:
            return construct(ScalarNode(tag, event.value))
        except ValueError:  # more digits than Python converts
            self._problem(
                path, f"the number has {len(event.value)} characters: write a smaller one", event
            )
            return event.value

    def _collection(self, start: CollectionStartEvent, path: KeyPath) -> Any:
        tag = start.tag
        if tag not in (None, "!", _TAG + _KINDS[type(start)]):
            self._problem(path, f"unsupported YAML tag '{tag}': write it without the tag", start)
        self.depth += 1
        if self.depth > _DEPTH:
            self._stop(path, f"nested more than {_DEPTH} lists or mappings deep: flatten it", start)
        try:
            if isinstance(start, MappingStartEvent):
                return self._mapping(path)
            return self._sequence(path)
        finally:
            self.depth -= 1

    def _alias(self, event: AliasEvent, path: KeyPath) -> Any:
        if event.anchor not in self.anchors:
            anchor = event.anchor
            message = f"alias '*{anchor}' names no anchor ('&{anchor}') defined before it"
            self._problem(path, message, event)
            return None
        value, size = self.anchors[event.anchor]
        self.aliased += size
        if self.aliased > max(_ALIASED, 10 * self.written):
            problem = (
                f"aliases bring in {self.aliased:,} values, more than ten times the "
                f"{self.written:,} the file writes (nested aliases multiply): write the "
                "values out, or use fewer aliases"
            )
            self._stop(path, problem, event)
        return value

    def _sequence(self, path: KeyPath) -> list[Any]:
        items: list[Any] = []
        for event in self.events:
            if isinstance(event, SequenceEndEvent):
                break
            here = (*path, len(items))
            self.lines[here] = _line(event)
            items.append(self.value(event, here))
        return items

    def _mapping(self, path: KeyPath) -> dict[str, Any]:
        own: dict[str, Any] = {}
        merged: dict[str, Any] = {}
        for event in self.events:
            if isinstance(event, MappingEndEvent):
                break
            if not isinstance(event, ScalarEvent):
                self._key(event, path)
                continue
            key, here = event.value, (*path, event.value)
            if key == "<<" and event.implicit[0]:
                for name, item in self._merged(next(self.events), path):
                    merged.setdefault(name, item)  # earlier sources win
                    self.lines.setdefault((*path, name), _line(event))
            elif key in own:
                message = f"key '{key}' appears twice (first at line {self.lines[here]}): keep one"
                self._problem(here, message, event)
                self.value(next(self.events), path)  # read past it
            else:
                self.lines[here] = _line(event)
                own[key] = self.value(next(self.events), here)
        return {**merged, **own}

    def _key(self, event: Event, path: KeyPath) -> None:
        """A key that is a list or a mapping: read past it and its value, and say so."""
        self.value(event, path)
        self._problem(path, "a key must be plain text, not a list or a mapping", event)
        self.value(next(self.events), path)

    def _merged(self, event: Event, path: KeyPath) -> Iterator[tuple[str, Any]]:
        """The keys a `<<: *anchor` (or `<<: [*a, *b]`) brings in, earlier sources first."""
        value = self.value(event, (*path, "<<"))
        for source in value if isinstance(value, list) else [value]:
            if isinstance(source, dict):
                yield from source.items()
            else:
                self._problem(path, "`<<` merges mappings only: point it at a mapping", event)

    def _problem(self, path: KeyPath, message: str, event: Event) -> None:
        self.problems.append(Problem(self.file, _line(event), render_key(path), message))

    def _stop(self, path: KeyPath, message: str, event: Event) -> NoReturn:
        """A file built to break the loader (nested too deep, aliases that multiply): reading
        stops at once, and says where."""
        raise SpecError([Problem(self.file, _line(event), render_key(path), message)])
