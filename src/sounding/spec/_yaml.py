"""Read YAML into plain data, keeping the line of every key and every list item.

The document is composed into nodes (which carry their marks) and converted here, rather
than loaded, so that each key path keeps its line and a key written twice is caught.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from sounding.spec._errors import KeyPath, Locator, Problem, SpecError

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - libyaml missing: the pure-Python loader is slower
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_TAG = "tag:yaml.org,2002:"
_MERGE = _TAG + "merge"
_CONSTRUCT = SafeConstructor()
_SCALARS: dict[str, Callable[[ScalarNode], Any]] = {
    _TAG + "str": lambda node: node.value,
    _TAG + "timestamp": lambda node: node.value,  # kept as written: `ref: 2024-01-01`
    _TAG + "null": lambda node: None,
    _TAG + "bool": _CONSTRUCT.construct_yaml_bool,
    _TAG + "int": _CONSTRUCT.construct_yaml_int,
    _TAG + "float": _CONSTRUCT.construct_yaml_float,
}


def read_yaml(text: str, file: str) -> tuple[Any, dict[KeyPath, int]]:
    """The document as plain data, and the line (from 1) of each key path in it."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        raise SpecError([_syntax_problem(exc, file)]) from None
    except yaml.YAMLError as exc:
        raise SpecError([Problem(file, None, "", f"cannot read YAML: {exc}")]) from None
    if root is None:
        return None, {}
    converter = _Converter(file)
    converter.lines[()] = root.start_mark.line + 1
    data = converter.convert(root, ())
    if converter.problems:
        raise SpecError(converter.problems)
    return data, converter.lines


def _syntax_problem(exc: yaml.MarkedYAMLError, file: str) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    what = " ".join(part for part in (exc.context, exc.problem) if part)
    if mark is None:
        return Problem(file, None, "", f"YAML syntax error: {what}")
    return Problem(
        file,
        mark.line + 1,
        "",
        f"YAML syntax error at column {mark.column + 1}: {what} "
        "(check the indentation and quoting on this line and the one before)",
    )


class _Converter:
    """Walks the node tree once, recording lines and collecting what cannot be converted."""

    def __init__(self, file: str) -> None:
        self.lines: dict[KeyPath, int] = {}
        self.problems: list[Problem] = []
        self._locator = Locator(file, self.lines)
        self._open: set[int] = set()  # nodes being converted: an alias back to one is a cycle

    def convert(self, node: Node, path: KeyPath) -> Any:
        if isinstance(node, ScalarNode):
            return self._scalar(node, path)
        if id(node) in self._open:
            self._problem(path, "an alias refers to the block it sits in: break the cycle")
            return None
        self._open.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return self._sequence(node, path)
            if isinstance(node, MappingNode):
                return self._mapping(node, path)
        finally:
            self._open.discard(id(node))
        return None  # pragma: no cover - composer yields only these three kinds

    def _scalar(self, node: ScalarNode, path: KeyPath) -> Any:
        convert = _SCALARS.get(node.tag)
        if convert is None:
            self._problem(path, f"unsupported YAML tag '{node.tag}': write a plain value")
            return node.value
        return convert(node)

    def _sequence(self, node: SequenceNode, path: KeyPath) -> list[Any]:
        self._check_tag(node, "seq", path)
        items: list[Any] = []
        for index, item in enumerate(node.value):
            here = (*path, index)
            self.lines[here] = item.start_mark.line + 1
            items.append(self.convert(item, here))
        return items

    def _mapping(self, node: MappingNode, path: KeyPath) -> dict[str, Any]:
        self._check_tag(node, "map", path)
        merged: dict[str, Any] = {}
        own: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        for key_node, value_node in node.value:  # merged first, so own lines are kept
            if key_node.tag == _MERGE:
                for name, value in self._merged(value_node, path).items():
                    merged.setdefault(name, value)
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                continue
            key = self._key(key_node, path, first_line)
            if key is not None:
                line = key_node.start_mark.line + 1
                first_line[key] = line
                self.lines[(*path, key)] = line
                own[key] = self.convert(value_node, (*path, key))
        return {**merged, **own}

    def _key(self, node: Node, path: KeyPath, seen: dict[str, int]) -> str | None:
        if not isinstance(node, ScalarNode):
            self._problem(path, "a key must be plain text, not a list or a mapping", node)
            return None
        key = str(node.value)
        if key in seen:
            self._problem(
                (*path, key),
                f"key '{key}' appears twice (first at line {seen[key]}): keep one",
                node,
            )
            return None
        return key

    def _merged(self, node: Node, path: KeyPath) -> dict[str, Any]:
        """The keys a `<<: *anchor` (or `<<: [*a, *b]`) brings in; earlier sources win."""
        sources = node.value if isinstance(node, SequenceNode) else [node]
        merged: dict[str, Any] = {}
        for source in sources:
            if not isinstance(source, MappingNode):
                self._problem(path, "`<<` merges mappings only: point it at a mapping", source)
                continue
            for name, value in self.convert(source, path).items():
                merged.setdefault(name, value)
        return merged

    def _check_tag(self, node: Node, kind: str, path: KeyPath) -> None:
        if node.tag != _TAG + kind:
            self._problem(path, f"unsupported YAML tag '{node.tag}': write a plain {kind}")

    def _problem(self, path: KeyPath, message: str, node: Node | None = None) -> None:
        problem = self._locator.problem(path, message)
        if node is not None:
            problem = Problem(problem.file, node.start_mark.line + 1, problem.key, message)
        self.problems.append(problem)
