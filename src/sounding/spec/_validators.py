"""`validators:` of a case: how each validator runs and the metrics it owes, checked at load.

A validator is one of three modes. `script` runs a program of the suite (`command`, split
into words without a shell, with a `timeout`); `judge` asks the suite's judge model once per
trial (`rubric`, `pieces`, optional `model` and `types`); `form` is filled by a person later
(`metrics`, optional `types`). Every validator declares `metrics`; two validators of a case
may not declare the same one. Every scenario of the case inherits the case's validators.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sounding._problems import KeyPath, Locator, Problem, validation_problems
from sounding.spec._guards import command_refusal, path_refusal
from sounding.spec._raw import Duration

Mode = Literal["script", "judge", "form"]
Piece = Literal["prompt", "response", "diff"]
MetricKind = Literal["bool", "number", "string"]

DEFAULT_TIMEOUT = 60.0
SUITE_PLACEHOLDER = "{suite}"
RESERVED_METRICS = frozenset({"passed", "composite"})
"""Names measures.json already gives every trial; a validator may not declare them."""

_METRIC = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")
_COMMON = ("mode", "name", "metrics", "lower_is_better")
_MODE_KEYS: dict[str, dict[str, str | None]] = {  # each mode's keys; a required one's example
    "script": {
        "command": ", like `command: checks/scope.py` (a program of the suite folder)",
        "timeout": None,
    },
    "judge": {
        "rubric": ", like `rubric: rubrics/note.md` (a file of the suite folder)",
        "pieces": ", like `pieces: [prompt, response, diff]`",
        "model": None,
        "types": None,
    },
    "form": {"types": None, "checks": None},
}


class RawValidator(BaseModel):
    """One entry of `validators:` as written."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Mode
    name: str | None = None
    metrics: list[str]
    command: str | Annotated[list[str], Field(min_length=1)] | None = None
    timeout: Duration | None = None
    rubric: str | None = None
    pieces: list[Piece] | None = None
    model: str | None = Field(default=None, min_length=1)
    types: dict[str, MetricKind] | None = None
    lower_is_better: list[str] | None = None
    checks: dict[str, str] | None = None


class ValidatorSpec(BaseModel):
    """A validator of a case, resolved: its name is unique in the case and names its files.

    `command` is the argv as written (a string already split); its first word is a path
    relative to the suite folder, or a program on PATH, and `{suite}` in any word stands for
    the suite folder. `types` gives judge and form metrics their kind (bool by default).
    `checks` ties a form metric to the judge check (or judge validator metric) people check
    by filling it: `sounding agreement` compares the two.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    mode: Mode
    metrics: list[str]
    command: list[str] = Field(default_factory=list)
    timeout: float = DEFAULT_TIMEOUT
    rubric: str | None = None
    pieces: list[Piece] = Field(default_factory=list)
    model: str | None = None
    types: dict[str, MetricKind] = Field(default_factory=dict)
    lower_is_better: list[str] = Field(default_factory=list)  # the rest: higher is better
    checks: dict[str, str] = Field(default_factory=dict)
    line: int | None = None

    def kind(self, metric: str) -> MetricKind:
        """The kind a judge or form metric is asked in: `types`, else bool."""
        return self.types.get(metric, "bool")


def declared_metrics(validators: list[ValidatorSpec]) -> dict[str, ValidatorSpec]:
    """Every metric a case's validators declare, with the validator that declares it."""
    return {metric: v for v in validators for metric in v.metrics}


def resolve_validators(
    raw: list[Any], locator: Locator, suite_dir: Path | None, problems: list[Problem]
) -> list[ValidatorSpec]:
    """Validate `validators:`; every problem found is added to `problems`."""
    found: dict[int, ValidatorSpec] = {}
    for index, item in enumerate(raw):
        spec = _Resolver(locator, suite_dir, problems, ("validators", index)).resolve(item)
        if spec is not None:
            found[index] = spec
    _check_unique(found, locator, problems)
    return list(found.values())


class _Resolver:
    """One `validators[i]` entry: model validation, then what its mode needs."""

    def __init__(
        self, locator: Locator, suite_dir: Path | None, problems: list[Problem], key: KeyPath
    ) -> None:
        self.locator, self.suite_dir, self.problems, self.key = locator, suite_dir, problems, key
        self.before = len(problems)

    def add(self, key: KeyPath, message: str, **hints: Any) -> None:
        self.problems.append(self.locator.problem(key, message, **hints))

    def resolve(self, item: Any) -> ValidatorSpec | None:
        if not isinstance(item, Mapping):
            message = "must be a mapping, like `{mode: script, command: x.py, metrics: [y]}`"
            self.add(self.key, message)
            return None
        try:
            raw = RawValidator.model_validate(item)
        except ValidationError as exc:
            self.problems.extend(validation_problems(exc, RawValidator, self.key, self.locator))
            return None
        self._check_keys(raw, item)
        self._check_metrics(raw)
        command = self._command(raw) if raw.mode == "script" else []
        if raw.rubric is not None:
            self._check_rubric(raw.rubric)
        if raw.pieces is not None:
            self._check_pieces(raw.pieces)
        if len(self.problems) > self.before:
            return None
        return ValidatorSpec(
            **raw.model_dump(exclude_none=True, exclude={"name", "command"}),
            name=raw.name or _default_name(raw.mode, command),
            command=command,
            line=self.locator.line(self.key),
        )

    def _check_keys(self, raw: RawValidator, item: Mapping[str, Any]) -> None:
        allowed = (*_COMMON, *_MODE_KEYS[raw.mode])
        for name in item:
            if name not in allowed:
                owner = next(m for m, keys in _MODE_KEYS.items() if name in keys)
                message = f"`{name}` is for mode {owner}; a {raw.mode} validator takes"
                self.add((*self.key, name), f"{message} {', '.join(allowed)}")
        for name, example in _MODE_KEYS[raw.mode].items():
            if example is not None and name not in item:
                self.add(self.key, f"a {raw.mode} validator needs `{name}`{example}")
        if raw.name is not None and not _NAME.match(raw.name):
            message = f"'{raw.name}' may use only letters, digits, '_', '.' and '-'"
            self.add((*self.key, "name"), message)

    def _check_metrics(self, raw: RawValidator) -> None:
        key = (*self.key, "metrics")
        if not raw.metrics:
            self.add(key, "is empty: declare the metrics this validator returns")
        for position, metric in enumerate(raw.metrics):
            if refusal := _metric_refusal(metric, raw.metrics[:position]):
                self.add((*key, position), refusal)
        for metric in raw.types or {}:
            if metric not in raw.metrics:
                message = f"gives a type to '{metric}', which `metrics` does not declare"
                self.add((*self.key, "types", metric), message, allowed=raw.metrics, typo=metric)
        for position, metric in enumerate(raw.lower_is_better or []):
            if metric not in raw.metrics:
                message = f"names '{metric}', which `metrics` does not declare"
                where = (*self.key, "lower_is_better", position)
                self.add(where, message, allowed=raw.metrics, typo=metric)
        for metric, judge in (raw.checks or {}).items():
            self._check_tie(raw, metric, judge)

    def _check_tie(self, raw: RawValidator, metric: str, judge: str) -> None:
        """A form metric that checks a judge is one it declares, yes/no or a number."""
        key = (*self.key, "checks", metric)
        if metric not in raw.metrics:
            message = f"ties '{metric}' to a judge, but `metrics` does not declare it"
            self.add(key, message, allowed=raw.metrics, typo=metric)
        elif (raw.types or {}).get(metric) == "string":
            self.add(key, f"'{metric}' is text: only a yes/no or number metric checks a judge")
        if not judge.strip():
            self.add(key, "is empty: name the judge check (or judge metric) this metric checks")

    def _command(self, raw: RawValidator) -> list[str]:
        key = (*self.key, "command")
        if raw.command is None:
            return []
        if isinstance(raw.command, list):
            self._check_program(raw.command[0], (*key, 0))
            return raw.command
        if refusal := command_refusal(raw.command):
            self.add(key, refusal)
            return []
        words = shlex.split(raw.command)
        self._check_program(words[0], key)
        return words

    def _check_program(self, program: str, key: KeyPath) -> None:
        """A program of the suite folder must be a file of it, and executable; a bare name
        that is no file of it is a program on PATH, found when it runs."""
        relative = program.removeprefix(SUITE_PLACEHOLDER + "/")
        bare = "/" not in relative and relative == program
        refusal = None if bare else path_refusal(relative, "the suite folder")
        if refusal is not None:
            self.add(key, refusal)
            return
        if self.suite_dir is None:
            return
        path = self.suite_dir / relative
        if not path.is_file():
            if not bare:
                self.add(key, f"validator '{relative}' does not exist in {self.suite_dir}")
        elif not os.access(path, os.X_OK):
            message = (
                f"validator '{relative}' is not executable: run 'chmod +x {relative}' (and give "
                "it a first line like '#!/usr/bin/env python3')"
            )
            self.add(key, message)

    def _check_rubric(self, rubric: str) -> None:
        key = (*self.key, "rubric")
        if refusal := path_refusal(rubric, "the suite folder"):
            self.add(key, refusal)
        elif self.suite_dir is not None and not (self.suite_dir / rubric).is_file():
            self.add(key, f"rubric '{rubric}' is not a file in {self.suite_dir}: fix the path")

    def _check_pieces(self, pieces: list[Piece]) -> None:
        key = (*self.key, "pieces")
        if not pieces:
            self.add(key, "is empty: name what the judge reads (prompt, response, diff)")
        for position, piece in enumerate(pieces):
            if piece in pieces[:position]:
                self.add((*key, position), f"'{piece}' is listed twice")


def _metric_refusal(metric: str, before: list[str]) -> str | None:
    if not _METRIC.match(metric):
        return f"metric '{metric}' must start with a letter or '_' and use letters, digits, '_'"
    if metric in RESERVED_METRICS:
        return f"metric '{metric}' is a name every trial already has in measures.json: rename it"
    if metric in before:
        return f"metric '{metric}' is declared twice by this validator"
    return None


def _default_name(mode: str, command: list[str]) -> str:
    if not command:  # a judge or a form
        return mode
    stem = Path(command[0].removeprefix(SUITE_PLACEHOLDER + "/")).stem
    return stem if _NAME.match(stem) else "script"


def _check_unique(
    found: dict[int, ValidatorSpec], locator: Locator, problems: list[Problem]
) -> None:
    """Names are unique (they name files); a metric is declared by one validator only."""
    by_name: dict[str, ValidatorSpec] = {}
    owner: dict[str, ValidatorSpec] = {}
    for index, spec in found.items():
        first = by_name.setdefault(spec.name, spec)
        if first is not spec:
            message = (
                f"validator name '{spec.name}' is also the name of the validator {_at(first)}: "
                "give each a distinct `name:`"
            )
            problems.append(locator.problem(("validators", index), message))
        for position, metric in enumerate(spec.metrics):
            first = owner.setdefault(metric, spec)
            if first is not spec:  # a validator that declares a metric twice is refused before
                message = (
                    f"metric '{metric}' is declared by validator '{spec.name}' and by validator "
                    f"'{first.name}' {_at(first)}: two validators may not declare one metric; "
                    f"rename one (like '{metric}_{spec.mode}')"
                )
                key = ("validators", index, "metrics", position)
                problems.append(locator.problem(key, message))


def _at(spec: ValidatorSpec) -> str:
    return f"at line {spec.line}" if spec.line is not None else "before it"
