"""Read YAML into plain data, keeping the line of every key and every list item.

The parser's events (which carry their marks) are turned into plain data here, rather
than loaded, so that each key path keeps its line and a key written twice is caught.
Building from events skips the node tree `yaml.compose` would build first: for a file
of 5,000 scenarios that tree alone costs more than everything else the loader does.
The events are taken from the parser one call each, and the few texts a case file
repeats (`true`, `3`, a check's shorthand) are resolved once per file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

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

from sounding.spec._errors import KeyPath, Problem, SpecError, render_key

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - libyaml missing: the pure-Python parser is slower
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_TAG = "tag:yaml.org,2002:"
_RESOLVER = Resolver()
_CONSTRUCT = SafeConstructor()
_KINDS = {MappingStartEvent: "map", SequenceStartEvent: "seq"}
_PLAIN = (True, False)  # the implicit flags of a plain (unquoted, untagged) scalar
_IMPLICIT = Resolver.yaml_implicit_resolvers
"""Resolvers by a plain scalar's first character (PyYAML's has no wildcard among them):
a plain text whose first character has none reads as text."""
_UNREAD = object()  # no value: a text not resolved yet, or a tag this reader refuses


def read_yaml(text: str, file: str) -> tuple[Any, dict[KeyPath, int]]:
    """The document as plain data, and the line (from 1) of each key path in it."""
    builder = _Builder(file)
    loader = None
    try:
        loader = _Loader(text)
        data = builder.stream(iter(loader.get_event, None))
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


def _typed(tag: str, text: str) -> Any:
    """The value of a scalar of `tag`, or `_UNREAD`; a timestamp stays text."""
    if tag == _TAG + "str" or tag == _TAG + "timestamp":  # `ref: 2024-01-01` stays text
        return text
    if tag == _TAG + "null":
        return None
    if tag == _TAG + "bool":
        return _CONSTRUCT.bool_values[text.lower()]
    if tag == _TAG + "int":
        return _CONSTRUCT.construct_yaml_int(ScalarNode(tag, text))
    if tag == _TAG + "float":
        return _CONSTRUCT.construct_yaml_float(ScalarNode(tag, text))
    return _UNREAD


def _line(event: Event) -> int:
    mark = event.start_mark
    return int(mark.line) + 1 if mark is not None else 0


class _Builder:
    """Consumes the events of one stream, recording lines and collecting what cannot be read."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.lines: dict[KeyPath, int] = {}
        self.problems: list[Problem] = []
        self.anchors: dict[str, Any] = {}
        self.plain: dict[str, Any] = {}
        """Plain scalars' values by their text, resolved once: text, null, bool or int."""

    def stream(self, events: Iterator[Event]) -> Any:
        next(events)  # stream start
        if isinstance(next(events), StreamEndEvent):
            return None  # an empty file
        root = next(events)
        self.lines[()] = _line(root)
        data = self.value(root, events, ())
        next(events)  # document end
        extra = next(events)
        if not isinstance(extra, StreamEndEvent):
            self._problem((), "holds several documents ('---'): keep one case per file", extra)
        return data

    def value(self, event: Event, events: Iterator[Event], path: KeyPath) -> Any:
        if type(event) is ScalarEvent:
            value = self._scalar(event, path)
        elif type(event) is MappingStartEvent:
            value = self._mapping(event, events, path)
        elif type(event) is SequenceStartEvent:
            value = self._sequence(event, events, path)
        elif type(event) is AliasEvent:
            return self._alias(event, path)
        else:  # pragma: no cover - the parser yields only these inside a document
            raise yaml.YAMLError(f"unexpected {type(event).__name__}")
        if event.anchor is not None:
            self.anchors[event.anchor] = value
        return value

    def _scalar(self, event: ScalarEvent, path: KeyPath) -> Any:
        tag, text = event.tag, event.value
        if tag is None or tag == "!":
            if not event.implicit[0] or text[:1] not in _IMPLICIT:
                return text  # quoted, or plain and no resolver reads it: text
            value = self.plain.get(text, _UNREAD)
            if value is not _UNREAD:
                return value
            tag = _RESOLVER.resolve(ScalarNode, text, _PLAIN)  # type: ignore[no-untyped-call]
            value = _typed(tag, text)
            if value is not _UNREAD:
                if type(value) is not float:  # each `.nan` stays a value of its own
                    self.plain[text] = value
                return value
        else:
            value = _typed(tag, text)
            if value is not _UNREAD:
                return value
        self._problem(path, f"unsupported YAML tag '{tag}': write a plain value", event)
        return text

    def _alias(self, event: AliasEvent, path: KeyPath) -> Any:
        if event.anchor not in self.anchors:
            anchor = event.anchor
            message = f"alias '*{anchor}' names no anchor ('&{anchor}') defined before it"
            self._problem(path, message, event)
            return None
        return self.anchors[event.anchor]

    def _sequence(self, start: SequenceStartEvent, events: Iterator[Event], path: KeyPath) -> Any:
        if start.tag is not None:
            self._check_tag(start, path)
        lines, value, mapping = self.lines, self.value, self._mapping
        items: list[Any] = []
        for event in events:
            if type(event) is SequenceEndEvent:
                return items
            here = (*path, len(items))
            mark = event.start_mark  # what `_line` reads, inline: this runs for every item
            lines[here] = mark.line + 1 if mark is not None else 0
            if type(event) is MappingStartEvent and event.anchor is None:
                items.append(mapping(event, events, here))  # as `value` would, one call less
            else:
                items.append(value(event, events, here))
        return items  # pragma: no cover - the parser always closes a sequence

    def _mapping(self, start: MappingStartEvent, events: Iterator[Event], path: KeyPath) -> Any:
        if start.tag is not None:
            self._check_tag(start, path)
        lines, value, scalar = self.lines, self.value, self._scalar
        own: dict[str, Any] = {}
        merged: dict[str, Any] = {}
        for event in events:
            if type(event) is MappingEndEvent:
                break
            if type(event) is not ScalarEvent:
                self._key(event, events, path)
                value(next(events), events, path)  # read past it
                continue
            key = event.value
            value_event = next(events)
            if key == "<<" and event.implicit[0]:
                for name, item in self._merged(value_event, events, path).items():
                    merged.setdefault(name, item)
                    lines.setdefault((*path, name), _line(event))
            elif key in own:
                first = lines[(*path, key)]
                message = f"key '{key}' appears twice (first at line {first}): keep one"
                self._problem((*path, key), message, event)
                value(value_event, events, path)
            else:
                here = (*path, key)
                mark = event.start_mark  # what `_line` reads, inline: this runs for every key
                lines[here] = mark.line + 1 if mark is not None else 0
                if type(value_event) is not ScalarEvent or value_event.anchor is not None:
                    own[key] = value(value_event, events, here)
                elif value_event.tag is None and value_event.value[:1] not in _IMPLICIT:
                    own[key] = value_event.value  # text as written, as `_scalar` would read it
                else:
                    own[key] = scalar(value_event, here)
        return {**merged, **own} if merged else own

    def _key(self, event: Event, events: Iterator[Event], path: KeyPath) -> None:
        """A key that is a list or a mapping: read past it, and say so."""
        self.value(event, events, path)
        self._problem(path, "a key must be plain text, not a list or a mapping", event)

    def _merged(self, event: Event, events: Iterator[Event], path: KeyPath) -> dict[str, Any]:
        """The keys a `<<: *anchor` (or `<<: [*a, *b]`) brings in; earlier sources win."""
        value = self.value(event, events, (*path, "<<"))
        sources = value if isinstance(value, list) else [value]
        merged: dict[str, Any] = {}
        for source in sources:
            if not isinstance(source, dict):
                self._problem(path, "`<<` merges mappings only: point it at a mapping", event)
                continue
            for name, item in source.items():
                merged.setdefault(name, item)
        return merged

    def _check_tag(self, event: CollectionStartEvent, path: KeyPath) -> None:
        tag = event.tag
        if tag is not None and tag != "!" and tag != _TAG + _KINDS[type(event)]:
            self._problem(path, f"unsupported YAML tag '{tag}': write it without the tag", event)

    def _problem(self, path: KeyPath, message: str, event: Event) -> None:
        self.problems.append(Problem(self.file, _line(event), render_key(path), message))
