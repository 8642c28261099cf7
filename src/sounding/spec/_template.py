"""Scenarios made from a dataset: `dataset: {path: ...}` and a `scenario:` template.

The template is shaped like one scenario; each of its strings (keys included) may hold
`{{ field }}` placeholders, rendered per row by Jinja2's sandbox with undefined names
refused. A string that is one placeholder and nothing else takes the row's value as it is
(a number stays a number, a list a list); any other string renders to text. The scenarios
made are added after those written under `scenarios:`, and resolved like them: a problem
in one names its dataset row and the template's line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from sounding._problems import KeyPath, Locator, Problem
from sounding.spec._dataset import DatasetError, Row, read_rows
from sounding.spec._errors import SpecError
from sounding.spec._guards import path_refusal, suite_of

Render = Callable[[dict[str, Any]], Any]
_WHOLE = re.compile(r"\A\{\{(?P<expr>(?:(?!\}\}|\{\{|\{%).)*)\}\}\Z", re.DOTALL)
_KEY = re.compile(r"\Ascenarios\[(\d+)\]")
_NAME = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SYNTAX = re.compile(r"\{[{%#]")


def _alternating(parts: list[str]) -> Iterator[tuple[bool, str]]:
    """(is a field name, part) of `_NAME.split`: text, name, text, ..."""
    return ((index % 2 == 1, part) for index, part in enumerate(parts))


def expand_dataset(
    data: dict[str, Any], locator: Locator, *, path: Path, suite_dir: Path | None
) -> tuple[dict[str, Any], Locator, Callable[[SpecError], SpecError]]:
    """The case data with one scenario per row added, the locator that finds their lines
    in the template, and what names a made scenario's row in later problems."""
    spec, template = data.get("dataset"), data.get("scenario")
    rest = {k: v for k, v in data.items() if k not in ("dataset", "scenario")}
    written = rest.get("scenarios", [])
    if not isinstance(written, list):
        return rest, locator, same  # `scenarios:` itself is refused by the models
    file, template = _dataset_file(spec, template, locator)
    root = suite_dir if suite_dir is not None else suite_of(path)
    try:
        rows = read_rows(root / file, file)
    except DatasetError as exc:
        raise SpecError([locator.problem(("dataset", "path"), str(exc))]) from None
    made = _Maker(template, locator, file).scenarios(rows)
    _check_ids(written, made, rows, locator, file)
    lines = _TemplateLines(locator.lines, len(written), len(made))
    place = _RowNamer(file, rows, len(written))
    return {**rest, "scenarios": [*written, *made]}, Locator(locator.file, lines), place


def same(error: SpecError) -> SpecError:
    """A case without a dataset: its problems name no row."""
    return error


def _dataset_file(spec: Any, template: Any, locator: Locator) -> tuple[str, dict[str, Any]]:
    """`dataset.path`, once `dataset:` and `scenario:` are both there and well formed."""
    if spec is None:  # more often `scenarios:` mistyped than a template without its rows
        message = (
            "unknown key 'scenario' without `dataset:`: a list of scenarios is `scenarios:`; "
            "`scenario:` is the template of the scenarios made from the rows of a "
            "`dataset: {path: rows.jsonl}` beside it (docs/cases.md)"
        )
        raise SpecError(
            [locator.problem(("scenario",), message, typo="scenario", allowed=["scenarios"])]
        )
    if template is None:
        message = (
            "needs `scenario:` beside it: `dataset: {path: rows.jsonl}` names the rows, "
            "`scenario:` is the template of the scenario made from each (docs/cases.md)"
        )
        raise SpecError([locator.problem(("dataset",), message)])
    if not isinstance(template, dict):
        raise SpecError(
            [locator.problem(("scenario",), "must be a mapping shaped like a scenario")]
        )
    if not isinstance(spec, dict) or set(spec) != {"path"} or not isinstance(spec["path"], str):
        message = "must be a mapping with one key, `path` (the rows: JSONL, CSV, Parquet)"
        raise SpecError([locator.problem(("dataset",), message, allowed=["path"])])
    if refusal := path_refusal(spec["path"], "the suite folder"):
        raise SpecError([locator.problem(("dataset", "path"), refusal)])
    return str(spec["path"]), template


class _Maker:
    """The template compiled once, rendered for each row."""

    def __init__(self, template: dict[str, Any], locator: Locator, file: str) -> None:
        from jinja2 import StrictUndefined
        from jinja2.sandbox import SandboxedEnvironment

        self.env = SandboxedEnvironment(
            undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True
        )
        self.locator = locator
        self.file = file
        self.fields: dict[str, KeyPath] = {}  # each field the template uses, where first
        self.problems: list[Problem] = []
        self.where: KeyPath = ()
        self.render = self._compile(template, ("scenario",))
        if self.problems:
            raise SpecError(self.problems)

    def scenarios(self, rows: list[Row]) -> list[Any]:
        made = [self._row(row) for row in rows]
        if self.problems:
            raise SpecError(self.problems)
        return made

    def _row(self, row: Row) -> Any:
        for field, key in self.fields.items():
            if field not in row.values:
                message = (
                    f"{row.where(self.file)} has no field '{field}', which the template uses "
                    "here: add it to the row, or take the placeholder out"
                )
                self.problems.append(self.locator.problem(key, message))
                return None
        from jinja2 import TemplateError

        try:
            return self.render(row.values)
        except TemplateError as exc:
            message = f"{row.where(self.file)}: {exc}: fix the row or the template"
            self.problems.append(self.locator.problem(self.where, message))
            return None

    def _compile(self, value: Any, key: KeyPath) -> Render:
        if isinstance(value, dict):
            return self._mapping(value, key)
        if isinstance(value, list):
            items = [self._compile(item, (*key, i)) for i, item in enumerate(value)]
            return lambda row: [item(row) for item in items]
        if isinstance(value, str) and ("{{" in value or "{%" in value):
            return self._text(value, key)
        return lambda row: value

    def _mapping(self, value: dict[str, Any], key: KeyPath) -> Render:
        pairs = [
            (self._compile(name, key), self._compile(item, (*key, name)))
            for name, item in value.items()
        ]
        return lambda row: {name(row): item(row) for name, item in pairs}

    def _text(self, text: str, key: KeyPath) -> Render:
        plain = self._plain(text, key)
        if plain is not None:
            return plain
        from jinja2 import TemplateSyntaxError, meta

        try:
            for field in meta.find_undeclared_variables(self.env.parse(text)):
                if field not in self.env.globals:
                    self.fields.setdefault(field, key)
            whole = _WHOLE.match(text)
            if whole is not None:
                return self._native(self.env.compile_expression(whole["expr"]), key)
            template = self.env.from_string(text)
        except TemplateSyntaxError as exc:
            message = (
                f"is not a valid template ({exc.message}): write placeholders as {{{{ field }}}}"
            )
            self.problems.append(self.locator.problem(key, message))
            return lambda row: text
        return self._located(template.render, key)

    def _plain(self, text: str, key: KeyPath) -> Render | None:
        """Text whose placeholders are all bare field names (`{{ order }}`) is filled
        without Jinja: what Jinja would render (`str` of each value; the value itself for a
        whole placeholder), at a fraction of its cost per row. None for anything else."""
        parts = _NAME.split(text)
        names = parts[1::2]
        if _SYNTAX.search("".join(parts[::2])) or any(n in self.env.globals for n in names):
            return None
        for name in names:
            self.fields.setdefault(name, key)
        if parts[0] == parts[-1] == "" and len(names) == 1:
            (field,) = names
            return lambda row: row[field]
        return lambda row: "".join(
            str(row[part]) if odd else part for odd, part in _alternating(parts)
        )

    def _native(self, expression: Callable[..., Any], key: KeyPath) -> Render:
        """A string that is one placeholder keeps the value's own type."""

        def render(row: dict[str, Any]) -> Any:
            value = expression(row)
            from jinja2 import Undefined

            if isinstance(value, Undefined):
                str(value)  # raises the UndefinedError that names it
            return value

        return self._located(render, key)

    def _located(self, render: Callable[..., Any], key: KeyPath) -> Render:
        def located(row: dict[str, Any]) -> Any:
            self.where = key
            return render(row)

        return located


def _check_ids(
    written: list[Any], made: list[Any], rows: list[Row], locator: Locator, file: str
) -> None:
    """Two rows that make one id are refused naming both; so is a made id already written."""
    first: dict[Any, str] = {}
    for index, scenario in enumerate(written):
        if isinstance(scenario, dict) and isinstance(scenario.get("id"), str):
            line = locator.line(("scenarios", index))
            first.setdefault(scenario["id"], f"scenarios[{index}] (line {line})")
    problems: list[Problem] = []
    for scenario, row in zip(made, rows, strict=True):
        made_id = scenario.get("id") if isinstance(scenario, dict) else None
        if not isinstance(made_id, str):
            continue  # refused as the scenario is resolved
        here = row.where(file)
        other = first.setdefault(made_id, here)
        if other != here:
            message = f"{here} makes scenario id '{made_id}', as {other} does: make ids unique"
            problems.append(locator.problem(("scenario", "id"), message))
    if problems:
        raise SpecError(problems)


class _TemplateLines(Mapping[KeyPath, int]):
    """The lines of the case file, where a made scenario's keys are the template's."""

    def __init__(self, lines: Mapping[KeyPath, int], start: int, count: int) -> None:
        self.lines, self.start, self.end = lines, start, start + count

    def __getitem__(self, key: KeyPath) -> int:
        index = key[1] if len(key) >= 2 and key[0] == "scenarios" else None
        if isinstance(index, int) and self.start <= index < self.end:
            return self.lines[("scenario", *key[2:])]
        return self.lines[key]

    def __iter__(self) -> Iterator[KeyPath]:
        return iter(self.lines)

    def __len__(self) -> int:
        return len(self.lines)


class _RowNamer:
    """Adds to a problem of a made scenario the dataset row it was made from."""

    def __init__(self, file: str, rows: list[Row], start: int) -> None:
        self.file, self.rows, self.start = file, rows, start

    def __call__(self, error: SpecError) -> SpecError:
        return SpecError([self._named(problem) for problem in error.problems])

    def _named(self, problem: Problem) -> Problem:
        found = _KEY.match(problem.key)
        index = int(found[1]) - self.start if found else -1
        if not 0 <= index < len(self.rows):
            return problem
        key = "scenario" + problem.key[found.end() :] if found else problem.key
        message = f"(made from {self.rows[index].where(self.file)}) {problem.message}"
        return Problem(problem.file, problem.line, key, message, problem.allowed, problem.closest)
