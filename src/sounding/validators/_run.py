"""`Run`: a finished trial as a validator written in Python reads it, from its context file.

Everything is computed by the harness once and read here: the files touched, the
by-products among them, the given files, every file of the final workspace. What needs
work (the run record, the tests, the reference's sources) is done only when asked.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sounding._process import run_bounded
from sounding.record import RunRecord, ToolCall
from sounding.validators._context import CONTEXT_SCHEMA, ContextDocument

_SKILL = re.compile(r"(?<![\w/])/skill:([A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)")
_TAIL = 2000


class CannotJudge(Exception):
    """Nobody can judge this metric in this run (no test suite declared, a `prepare` step
    that failed, no reference tree...). The `@validator` decorator turns it into an
    unjudged metric with this reason: never false."""


class ContextError(ValueError):
    """The context file cannot be read as a validation context; says which file and why."""


class Run:
    """One finished trial, read from the `context.json` the harness wrote for it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.context = context = _read_context(self.path)
        self.workspace = Path(context.workspace)
        self.checkout = Path(context.reference.checkout) if context.reference.checkout else None
        self.ref = context.reference.ref
        self.touched = frozenset(context.touched)
        self.byproducts = frozenset(context.byproducts or context.artefacts)
        self.given = frozenset(context.given)
        self.files = frozenset(context.files)
        self.declared = frozenset(context.declared)
        self.test_command = context.test_command
        self.prepare = tuple(context.prepare)
        self.case, self.scenario = context.case, context.scenario
        self.trial, self.cell = context.trial, context.cell

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r})"

    @property
    def artefacts(self) -> frozenset[str]:
        """The old name of `byproducts`."""
        return self.byproducts

    @cached_property
    def prompt(self) -> str:
        """The task as the agent was given it (empty when the context names no prompt file)."""
        return _read(self.context.prompt, "prompt") if self.context.prompt else ""

    @cached_property
    def record(self) -> RunRecord:
        """The run record (`sounding.run/1`) of the trial."""
        if not self.context.record:
            raise CannotJudge("the context names no run record for this trial")
        try:
            return RunRecord.model_validate_json(_read(self.context.record, "record"))
        except ValidationError as exc:
            raise ContextError(f"{self.context.record} is not a run record: {exc}") from None

    @property
    def response(self) -> str | None:
        """The agent's final answer (its last prose, not its transcript); None if it gave none."""
        return self.record.final_answer

    def tool_calls(self) -> list[ToolCall]:
        """Every tool call the agent made, in order, with its args, result and error flag."""
        return list(self.record.tool_calls)

    def first_write(self, path: str) -> int | None:
        """The 0-based index of the first tool call whose args name `path`, or None.

        `path` is relative to the workspace; an argument names it when it is that path
        (`./` and `..` folded away), or the same file under the workspace's absolute path.
        """
        wanted = posixpath.normpath(path)
        for index, call in enumerate(self.record.tool_calls):
            if any(self._names(text, wanted) for text in _strings(call.args)):
                return index
        return None

    def _names(self, text: str, wanted: str) -> bool:
        if os.path.isabs(text):
            inside = Path(text)
            if not inside.is_relative_to(self.workspace):
                return False
            text = inside.relative_to(self.workspace).as_posix()
        return posixpath.normpath(text) == wanted

    @cached_property
    def skills_expanded(self) -> frozenset[str]:
        """Skills whose body arrived in the prompt (`/skill:<name>`): nothing to read, no call."""
        return frozenset(_SKILL.findall(self.prompt))

    def sources_at_reference(self, pattern: str) -> dict[str, str]:
        """The text of the reference tree's files matching `pattern` (a glob, like `src/*.py`).

        CannotJudge when the trial started from an empty workspace (no reference tree).
        """
        if self.checkout is None or not self.checkout.is_dir():
            raise CannotJudge("this trial has no reference tree (its workspace started empty)")
        found = {}
        for path in sorted(self.checkout.glob(pattern)):
            relative = path.relative_to(self.checkout)
            if path.is_file() and relative.parts[0] != ".git":
                found[relative.as_posix()] = path.read_text(encoding="utf-8", errors="replace")
        return found

    def tests(self, *, timeout: float | None = None) -> bool:
        """Run the scenario's `test_command` on a copy of the workspace: True when it passes.

        The `prepare` steps run first. CannotJudge when no test_command is declared, when a
        prepare step fails, or when a step cannot start or runs past `timeout` seconds:
        nobody judged. The suite failing is a measurement: False. The copy keeps the
        archived workspace as the agent left it.
        """
        if self.test_command is None:
            raise CannotJudge("the scenario declares no test_command: nothing decides `tests`")
        with tempfile.TemporaryDirectory(prefix="sounding-tests-") as scratch:
            copy = Path(scratch) / "workspace"
            shutil.copytree(self.workspace, copy, symlinks=True)
            for step in self.prepare:
                if _step(step, copy, timeout) != 0:
                    raise CannotJudge(f"prepare step '{step}' failed, so the tests were not run")
            return _step(self.test_command, copy, timeout) == 0


def _read_context(path: Path) -> ContextDocument:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ContextError(f"cannot read the context {path}: {exc.strerror or exc}") from None
    try:
        context = ContextDocument.model_validate_json(data)
    except ValidationError as exc:
        raise ContextError(f"{path} is not a validation context: {exc}") from None
    if context.schema_ != CONTEXT_SCHEMA:
        raise ContextError(
            f"{path} has schema '{context.schema_}'; this sounding reads '{CONTEXT_SCHEMA}'"
        )
    return context


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ContextError(f"cannot read the {what} file {path}: {exc.strerror or exc}") from None


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _step(command: str, cwd: Path, timeout: float | None) -> int:
    """Run one command (split like the loader split it, no shell); its exit code.

    Its output goes to stderr, which the harness keeps as the validator's stderr.
    """
    try:
        done = run_bounded(shlex.split(command), cwd=cwd, timeout=timeout, limit=_TAIL)
    except OSError as exc:
        raise CannotJudge(f"'{command}' could not start: {exc.strerror or exc}") from None
    if done.timed_out:
        raise CannotJudge(f"'{command}' ran past {timeout:g}s")
    output = (done.stdout + done.stderr).decode("utf-8", errors="replace")[-_TAIL:]
    print(f"$ {command}  (exit {done.returncode})\n{output}", file=sys.stderr)
    return done.returncode
