"""Load case files: parse → version → model validation → semantic checks, one error type.

YAML (`.yaml`, `.yml`) and TOML (`.toml`) share one schema (see docs/cases.md). Every
problem found is reported at once, each at its file and line, as one `SpecError`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sounding._problems import KeyPath, Problem
from sounding.checks import Registry
from sounding.spec._errors import SpecError
from sounding.spec._models import Case
from sounding.spec._resolve import resolve_data

CASE_SUFFIXES = (".yaml", ".yml", ".toml")


def load_case(
    path: Path | str, *, suite_dir: Path | None = None, registry: Registry | None = None
) -> Case:
    """Read and resolve one case file; raises `SpecError` listing every problem in it.

    `suite_dir`, when given, is the folder `workspace.fixture` and `workspace.given` sources
    are read from; they must then exist. `registry` defaults to the one of `sounding.checks`.
    """
    path = Path(path)
    data, lines = _parsed(path)
    return resolve_data(data, lines, path=path, suite_dir=suite_dir, registry=registry)


def resolve_case(
    data: Mapping[str, Any],
    *,
    path: Path | str,
    suite_dir: Path | None = None,
    registry: Registry | None = None,
) -> Case:
    """Resolve a case held in memory (a draft, or data built by a tool) as if read at `path`.

    The same checks run as for a file; problems name `path` and the key, without a line.
    """
    return resolve_data(data, {}, path=Path(path), suite_dir=suite_dir, registry=registry)


def load_cases(
    paths: Path | str | Iterable[Path | str],
    *,
    suite_dir: Path | None = None,
    registry: Registry | None = None,
) -> list[Case]:
    """Load case files and folders of them (their *.yaml, *.yml, *.toml, sorted by name).

    Every file is read before failing, so one `SpecError` lists the problems of all.
    """
    files, problems = _case_files(paths)
    cases: list[Case] = []
    for file in files:
        try:
            cases.append(load_case(file, suite_dir=suite_dir, registry=registry))
        except SpecError as exc:
            problems.extend(exc.problems)
    problems.extend(_same_names(cases))
    if problems:
        raise SpecError(problems)
    return cases


def _parsed(path: Path) -> tuple[Any, dict[KeyPath, int]]:
    """The file's data and the line of each key; a parser loads with the first file it reads."""
    suffix = path.suffix.lower()
    if suffix == ".toml":
        from sounding.spec._toml import read_toml as read
    elif suffix in CASE_SUFFIXES:
        from sounding.spec._yaml import read_yaml as read
    else:
        message = "is not a case file: name it *.yaml, *.yml or *.toml"
        raise SpecError([Problem(str(path), None, "", message)])
    return read(_read(path), str(path))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        message = "does not exist: check the path"
    except IsADirectoryError:
        message = "is a folder: load the cases of a folder with `load_cases`"
    except UnicodeDecodeError as exc:
        message = f"is not UTF-8 text (bad byte at offset {exc.start}): save it as UTF-8"
    except OSError as exc:
        message = f"cannot be read ({exc.strerror}): check its permissions"
    raise SpecError([Problem(str(path), None, "", message)])


def case_files(folder: Path) -> list[Path]:
    """The case files of a folder, by name: every *.yaml, *.yml and *.toml in it."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in CASE_SUFFIXES)


def _case_files(paths: Path | str | Iterable[Path | str]) -> tuple[list[Path], list[Problem]]:
    given = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    files: list[Path] = []
    problems: list[Problem] = []
    for entry in map(Path, given):
        # a path that is no folder is read as a case file: load_case says what is wrong with it
        found = case_files(entry) if entry.is_dir() else [entry]
        if not found:
            message = "holds no case files (*.yaml, *.yml, *.toml): add one or name another folder"
            problems.append(Problem(str(entry), None, "", message))
        files.extend(found)
    return files, problems


def _same_names(cases: list[Case]) -> list[Problem]:
    """A case is named by its file; two files of one name would mix their results."""
    first: dict[str, Case] = {}
    problems: list[Problem] = []
    for case in cases:
        other = first.setdefault(case.name, case)
        if other is not case:
            message = f"case name '{case.name}' is also the name of {other.path}: rename one file"
            problems.append(Problem(str(case.path), None, "", message))
    return problems
