"""Paths a check names, resolved inside the folder they belong to and never outside it."""

from __future__ import annotations

import posixpath
from pathlib import Path, PurePosixPath, PureWindowsPath

from sounding.checks._base import CheckResult, Evidence

NO_WORKSPACE = "the workspace was not kept for this trial"


class PathEscapeError(ValueError):
    """A path that is absolute, climbs out with `..`, or leaves through a symlink."""


def relative_path(value: str, *, within: str = "the workspace") -> str:
    """Refuse, by its text alone, a path that cannot stay inside `within`; return it normalized.

    Used by params validators, so the mistake is reported when the suite loads.
    """
    if not value.strip():
        raise PathEscapeError(f"the path is empty; give a path relative to {within}")
    if PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute():
        raise PathEscapeError(
            f"'{value}' is absolute; give a path relative to {within} (e.g. 'out/report.json')"
        )
    normal = posixpath.normpath(value)
    if normal == ".." or normal.startswith("../"):
        raise PathEscapeError(f"'{value}' climbs out of {within} with '..'; remove the '..'")
    return normal


def resolve_inside(root: Path, value: str, *, within: str = "the workspace") -> Path:
    """The real location of `value` under `root`, refused when it ends up outside `root`.

    Checks call this even though params were validated: a check is safe on its own.
    """
    relative_path(value, within=within)
    base = root.resolve()
    try:
        target = (base / value).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise PathEscapeError(f"'{value}' cannot be resolved in {within}: {exc}") from None
    if target != base and not target.is_relative_to(base):
        raise PathEscapeError(
            f"'{value}' leads outside {within} through a symlink (to {target}); "
            "checks only read inside it"
        )
    return target


def in_workspace(evidence: Evidence, path: str) -> Path | CheckResult:
    """The real location of `path` in the workspace, or the result to report instead."""
    if evidence.workspace is None:
        return CheckResult.unjudged(NO_WORKSPACE)
    try:
        return resolve_inside(evidence.workspace, path)
    except PathEscapeError as exc:
        return CheckResult.error(str(exc))
