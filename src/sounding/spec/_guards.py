"""Refusals that keep a case inside its folders and away from a shell.

Each function answers why a value may not be used, or None when it may.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from pathlib import Path, PurePosixPath, PureWindowsPath

_OPERATOR = re.compile(r"&&|\|\||[|;><&]")
_EXPANSION = re.compile(r"`|\$(?:[({]|[A-Za-z_]\w*)")


def path_refusal(value: str, root: str) -> str | None:
    """Why `value` is not a path that stays inside `root` ("the workspace", ...), or None."""
    if not value.strip():
        return f"is empty: give a path relative to {root}"
    if value.startswith("~"):
        return f"'{value}' starts with '~': give a path relative to {root}"
    if PurePosixPath(value).is_absolute() or PureWindowsPath(value).drive:  # `C:`, `//host/share`
        return f"'{value}' is absolute: give a path relative to {root}"
    normal = posixpath.normpath(value.replace("\\", "/"))
    if normal == ".." or normal.startswith("../"):
        return f"'{value}' climbs out of {root} with '..': keep it inside"
    return None


def command_refusal(command: str) -> str | None:
    """Why `command` cannot run as one program with its arguments (no shell), or None."""
    if not command.strip():
        return "is empty: write the command to run, like 'pytest -q'"
    syntax = shell_syntax(command)
    if syntax is not None:
        return (
            f"uses shell syntax '{syntax}', but commands run without a shell (split into "
            "words, like shlex): run one program; put several steps in a script you call, "
            "or in separate `prepare:` items"
        )
    try:
        shlex.split(command)
    except ValueError as exc:
        return f"cannot be split into words ({exc}): close the quote"
    return None


def shell_syntax(command: str) -> str | None:
    """The first piece of `command` that only means something to a shell, if any.

    Inside single quotes nothing counts; inside double quotes only `$(`, `${`, `$NAME` and
    backquotes do, as a shell would still expand them there.
    """
    quote: str | None = None
    index = 0
    while index < len(command):
        char = command[index]
        if quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            index += 1  # the next character is taken as written
        else:
            found = _EXPANSION.match(command, index)
            found = found or (None if quote else _OPERATOR.match(command, index))
            if found is not None:
                return found.group()
            if char in "'\"":
                quote = None if quote == char else (quote or char)
        index += 1
    return None


def suite_of(case_file: Path) -> Path:
    """The suite a case file belongs to: the folder above `cases/`, or its own folder."""
    parent = case_file.resolve().parent
    return parent.parent if parent.name == "cases" else parent
