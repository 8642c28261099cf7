"""A registry of its own for the loader's tests, so they do not depend on the families.

The check types mirror the shapes the families register (`file_exists {path}`,
`command_exit {command, exit_code, timeout}`, `tool_called {name, args}`, ...) and the marks
of their fields (`WorkspacePath`, `ServiceName`) without their own param validators, so what
these tests see refused is refused by the loader. (`custom`'s script is the exception: it is
a path of the suite folder, refused by its own validator, as the family's is.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

import pytest
from pydantic import AfterValidator, Field

from sounding.checks import (
    CheckContext,
    CheckResult,
    NoParams,
    Params,
    Registry,
    Role,
    ServiceName,
    WorkspacePath,
)
from sounding.spec import Case, load_case


class FileParams(Params):
    path: WorkspacePath


class CommandParams(Params):
    command: str
    exit_code: int = 0
    timeout: float | None = None


class ToolCalledParams(Params):
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class TextParams(Params):
    text: str


class SqlParams(Params):
    service: ServiceName
    query: str
    equals: Any = None


def _relative(script: str) -> str:
    if PurePosixPath(script).is_absolute():
        raise ValueError(f"'{script}' is absolute; give a path relative to the suite folder")
    return script


class CustomParams(Params):
    script: Annotated[str, AfterValidator(_relative)]


class FileItem(Params):
    path: WorkspacePath


class GoldenParams(Params):
    """Nested and suffixed path params: every one of them is checked by the loader."""

    golden_path: WorkspacePath
    files: list[FileItem] = Field(default_factory=list)


class NamesParams(Params):
    names: list[str]


class PrefixesParams(Params):
    prefixes: list[str]


def _never(params: Params, context: CheckContext) -> CheckResult:
    raise AssertionError("the loader never runs a check")


def _registry() -> Registry:
    registry = Registry()
    checks: list[tuple[str, type[Params], str | None]] = [
        ("file_exists", FileParams, "path"),
        ("command_exit", CommandParams, "command"),
        ("tool_called", ToolCalledParams, "name"),
        ("final_answer_contains", TextParams, "text"),
        ("no_error", NoParams, None),
        ("sql", SqlParams, None),
        ("custom", CustomParams, "script"),
        ("matches_golden", GoldenParams, None),
    ]
    for name, params, shorthand in checks:
        graded = name == "custom"  # its script may give any score from 0 to 1
        registry.check(name, params, family="test", shorthand=shorthand, graded=graded)(_never)
    rules: list[tuple[str, type[Params], str]] = [
        ("tools_forbidden", NamesParams, "names"),
        ("file_writes_outside", PrefixesParams, "prefixes"),
    ]
    for name, params, shorthand in rules:
        registry.check(name, params, family="test", role=Role.FORBIDDEN, shorthand=shorthand)(
            _never
        )
    return registry


@pytest.fixture(scope="session")
def registry() -> Registry:
    return _registry()


Load = Callable[[str, str], Case]


@pytest.fixture
def load(tmp_path: Path, registry: Registry) -> Load:
    """Write `text` to `tmp_path/name` and load it with the test registry."""

    def write_and_load(name: str, text: str) -> Case:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return load_case(path, registry=registry)

    return write_and_load
