"""Fresh workspaces: a copy of a fixture folder or a pinned clone, and what changed in it."""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sounding.spec import Workspace

_FULL_COMMIT = 40
_clone_lock = threading.Lock()


class WorkspaceError(RuntimeError):
    """The workspace could not be prepared; says which source and how to fix it."""


@dataclass(frozen=True)
class Origin:
    """What a trial's workspace starts as: a pristine tree plus the given files on top."""

    tree: Path | None
    given: dict[str, Path]
    artefacts: tuple[str, ...]
    is_git: bool = False


@dataclass(frozen=True)
class Changes:
    touched: list[str]
    artefacts: list[str]
    diff: str


def resolve_origin(spec: Workspace, suite_root: Path, cache_dir: Path) -> Origin:
    """Find (and for a repository, clone once) the pristine tree of a scenario's workspace."""
    given = {dest: _inside(suite_root, src, "workspace.given") for dest, src in spec.given.items()}
    artefacts = tuple(spec.artefacts)
    if spec.fixture:
        tree = _inside(suite_root, spec.fixture, "workspace.fixture")
        if not tree.is_dir():
            raise WorkspaceError(
                f"workspace.fixture '{spec.fixture}' is not a folder of {suite_root}"
            )
        return Origin(tree, given, artefacts)
    if spec.repo:
        return Origin(_clone(spec.repo, spec.ref, suite_root, cache_dir), given, artefacts, True)
    return Origin(None, given, artefacts)


def _inside(root: Path, relative: str, key: str) -> Path:
    path = (root / relative).resolve()
    if not path.is_relative_to(root.resolve()):
        raise WorkspaceError(f"{key} '{relative}' escapes the suite folder {root}")
    if not path.exists():
        raise WorkspaceError(f"{key} '{relative}' does not exist under {root}")
    return path


def _clone(repo: str, ref: str | None, suite_root: Path, cache_dir: Path) -> Path:
    if not ref:
        raise WorkspaceError(f"workspace.repo '{repo}' needs a pinned `ref` (a tag or full commit)")
    source = (
        repo if "://" in repo or repo.startswith("git@") else str((suite_root / repo).resolve())
    )
    target = cache_dir / hashlib.sha256(f"{source}@{ref}".encode()).hexdigest()[:16]
    with _clone_lock:
        if not target.is_dir():
            _git(["clone", "--quiet", "--no-checkout", source, str(target)], None, repo)
            _git(["checkout", "--quiet", "--detach", ref], target, repo)
            _check_pinned(target, ref, repo)
    return target


def _check_pinned(target: Path, ref: str, repo: str) -> None:
    tags = _git(["tag", "--list", ref], target, repo).split()
    if ref not in tags and len(ref) != _FULL_COMMIT:
        raise WorkspaceError(
            f"workspace.ref '{ref}' of '{repo}' is neither a tag nor a full 40-hex commit: "
            "pin the reference so every trial starts from the same tree"
        )


def _git(args: list[str], cwd: Path | None, repo: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise WorkspaceError(f"git {' '.join(args[:2])} for '{repo}' failed: {done.stderr.strip()}")
    return done.stdout


def prepare(origin: Origin, dest: Path) -> None:
    """Lay a fresh workspace at `dest` (which must not exist yet)."""
    if origin.tree is None:
        dest.mkdir(parents=True)
    else:
        shutil.copytree(origin.tree, dest, symlinks=True)
    for relative, source in origin.given.items():
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    if origin.is_git and origin.given:
        _git(["add", "--", *origin.given], dest, "workspace")
        _git(
            [
                "-c",
                "user.name=sounding",
                "-c",
                "user.email=sounding@localhost",
                "commit",
                "--quiet",
                "-m",
                "given files",
            ],
            dest,
            "workspace",
        )


def _files(root: Path | None) -> dict[str, Path]:
    if root is None or not root.exists():
        return {}
    found = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if relative.parts and relative.parts[0] == ".git":
            continue
        if path.is_file() or path.is_symlink():
            found[relative.as_posix()] = path
    return found


def changes(origin: Origin, workspace: Path) -> Changes:
    """Files the agent touched against the start, the by-products among them, and the diff."""
    before = _files(origin.tree)
    before.update(origin.given)
    after = _files(workspace)
    touched = sorted(
        name
        for name in before.keys() | after.keys()
        if name not in before or name not in after or not _same(before[name], after[name])
    )
    artefacts = [name for name in touched if _is_artefact(name, origin.artefacts)]
    diff = "".join(_diff(name, before.get(name), after.get(name)) for name in touched)
    return Changes(touched, artefacts, diff)


def _same(a: Path, b: Path) -> bool:
    if a.is_symlink() or b.is_symlink():
        return a.is_symlink() and b.is_symlink() and a.readlink() == b.readlink()
    return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()


def _is_artefact(name: str, patterns: tuple[str, ...]) -> bool:
    parts = PurePosixPath(name).parts
    return any(
        fnmatch.fnmatch(name, pattern) or any(fnmatch.fnmatch(part, pattern) for part in parts)
        for pattern in patterns
    )


def _diff(name: str, old: Path | None, new: Path | None) -> str:
    old_text, new_text = _text(old), _text(new)
    if old_text is None or new_text is None:
        return f"Binary files a/{name} and b/{name} differ\n"
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile=f"a/{name}" if old else "/dev/null",
        tofile=f"b/{name}" if new else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _text(path: Path | None) -> str | None:
    if path is None or path.is_symlink():
        return "" if path is None else f"-> {path.readlink()}\n"
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")
