"""Fresh workspaces: a copy of a fixture folder or a pinned clone, and what changed in it."""

from __future__ import annotations

import contextlib
import difflib
import fnmatch
import hashlib
import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from sounding._files import given_through_link, link_on_path, open_regular, read_regular
from sounding.checks import Evidence, Reads
from sounding.spec import Scenario, Workspace

_FULL_COMMIT = 40
DIFF_LIMIT = 1 << 20  # bytes of one file a diff shows
DIFF_TOTAL = 16 << 20  # bytes of a trial's whole diff
_clone_lock = threading.Lock()
_AS_SOUNDING = ["-c", "user.name=sounding", "-c", "user.email=sounding@localhost"]  # git author
ORIGINS = "origins"  # the run's copies of its trials' start states


class WorkspaceError(RuntimeError):
    """The workspace could not be prepared; says which source and how to fix it."""


@dataclass(frozen=True)
class FileState:
    """One file of the start state: enough to tell, after the trial, whether it changed."""

    source: Path
    size: int
    digest: str | None  # of a regular file's content; None for a link, FIFO, socket, device
    link: str | None


@dataclass(frozen=True)
class Origin:
    """What a trial's workspace starts as: a pristine tree plus the given files on top.

    The start state is read once per run (`files`), so that each trial only reads its own
    workspace to find what the agent touched.
    """

    tree: Path | None
    given: dict[str, Path]
    byproducts: tuple[str, ...]
    is_git: bool = False
    files: Mapping[str, FileState] = field(default_factory=dict)
    kept: str | None = None  # where the run keeps it, relative to the run (`keep_origin`)


@dataclass(frozen=True)
class Changes:
    touched: list[str]
    byproducts: list[str]
    diff: str


def resolve_origin(spec: Workspace, suite_root: Path, cache_dir: Path) -> Origin:
    """Find (and for a repository, clone once) the pristine tree of a scenario's workspace."""
    given = {dest: _inside(suite_root, src, "workspace.given") for dest, src in spec.given.items()}
    tree, is_git = None, False
    if spec.fixture:
        tree = _inside(suite_root, spec.fixture, "workspace.fixture")
        if not tree.is_dir():
            raise WorkspaceError(
                f"workspace.fixture '{spec.fixture}' is not a folder of {suite_root}"
            )
    elif spec.repo:
        tree, is_git = _clone(spec.repo, spec.ref, suite_root, cache_dir), True
    return Origin(tree, given, tuple(spec.byproducts), is_git, start_state(tree, given))


def origin_elsewhere(
    origin: Origin, spec: Workspace, suite_root: Path, here: Path, cache: Path
) -> Origin:
    """The origin as another machine finds it, for a trial run there: the suite's files in
    its own copy of the suite (`here`, for `suite_root`), a repository cloned there (into
    `cache`) at its pinned ref. The start state read once per run stays as it was read."""
    tree = origin.tree
    if origin.is_git and spec.repo:
        tree = _clone(spec.repo, spec.ref, here, cache)
    elif tree is not None:
        tree = _rebased(tree, suite_root, here)

    def moved(path: Path) -> Path:
        if origin.tree is not None and tree is not None and path.is_relative_to(origin.tree):
            return tree / path.relative_to(origin.tree)
        return _rebased(path, suite_root, here)

    given = {name: moved(path) for name, path in origin.given.items()}
    files = {
        name: replace(state, source=moved(state.source)) for name, state in origin.files.items()
    }
    return replace(origin, tree=tree, given=given, files=files)


def _rebased(path: Path, old: Path, new: Path) -> Path:
    """`path` under `new` where it was under `old`; any other path as it is."""
    return new / path.relative_to(old) if path.is_relative_to(old) else path


def start_state(tree: Path | None, given: Mapping[str, Path]) -> dict[str, FileState]:
    """Every file a workspace starts with: the fixture's, then the given files on top."""
    sources = {**_files(tree), **given}
    return {name: _state(path) for name, path in sources.items()}


def _state(path: Path) -> FileState:
    if path.is_symlink():
        return FileState(path, 0, None, str(path.readlink()))
    return FileState(path, path.lstat().st_size, _digest(path), None)


def _digest(path: Path) -> str | None:
    """The SHA-256 of a regular file, read in chunks; None for anything else."""
    with open_regular(path) as found:
        if found is None:
            return None
        digest = hashlib.sha256()  # not file_digest: its 256 KiB buffer outweighs a small file
        while chunk := found[0].read(1 << 20):
            digest.update(chunk)
        return digest.hexdigest()


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


def checks_read_workspace(scenario: Scenario) -> bool:
    """Whether a check of the scenario reads files of the workspace (its registered trait)."""
    checks = [entry.check for entry in scenario.invariants]
    checks += [entry.check for entry in (*scenario.expect, *scenario.leads, *scenario.forbidden)]
    return any(Reads.WORKSPACE in check.check_type.reads for check in checks)


def keep_origin(origin: Origin, run_root: Path, number: int) -> Origin:
    """The origin with one copy of its start state kept in the run (`origins/<n>/`, without
    `.git`): trials then keep only the files they touched (`keep_touched`), and the whole
    workspace of any trial is that copy with its touched files laid over it. A resumed run
    keeps the copy it made first. An empty start state needs no copy."""
    if not origin.files:
        return origin
    kept = f"{ORIGINS}/{number}"
    if not (run_root / kept).is_dir():
        prepare(replace(origin, is_git=False), run_root / kept)
        shutil.rmtree(run_root / kept / ".git", ignore_errors=True)
    return replace(origin, kept=kept)


def keep_touched(origin: Origin, workspace: Path, evidence: Evidence) -> str | None:
    """Leave in a finished trial's workspace only what the agent touched: every other file
    is the same as in the run's copy of the origin, which it returns (None when the whole
    workspace stays). A workspace the agent replaced by a link is left alone (nothing is
    removed through a link), as is one whose touched files were not listed."""
    touched = evidence.touched
    unsafe = workspace.is_symlink() or not workspace.is_dir()
    if origin.kept is None or touched is None or unsafe:
        return None
    for name, path in _files(workspace).items():
        if name not in touched:
            path.unlink()
    shutil.rmtree(workspace / ".git", ignore_errors=True)
    for folder in reversed(folders_within(workspace)):  # a folder after those inside it
        with contextlib.suppress(OSError):  # not empty: it holds what the agent touched
            os.rmdir(folder)
    return origin.kept


def folders_within(root: Path) -> list[Path]:
    """`root` and every folder below it, each before those inside it: never through a
    link, and without recursion (a folder may be nested thousands deep)."""
    folders = [root]
    for folder in folders:  # the list grows as it is read: every folder, however deep
        with os.scandir(folder) as entries:
            folders += [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    return folders


def prepare(origin: Origin, dest: Path) -> None:
    """Lay a fresh workspace at `dest` (which must not exist yet)."""
    if origin.tree is None:
        dest.mkdir(parents=True)
    else:
        shutil.copytree(origin.tree, dest, symlinks=True, copy_function=shutil.copyfile)
    for relative, source in origin.given.items():
        # refused when a link of the fixture stands on its way: it would land where that leads
        if (link := link_on_path(dest, relative)) is not None:
            raise WorkspaceError(given_through_link(relative, link))
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    if origin.is_git and origin.given:
        _git(["add", "--", *origin.given], dest, "workspace")
        _git([*_AS_SOUNDING, "commit", "--quiet", "-m", "given files"], dest, "workspace")


def workspace_identity(workspace: Path) -> tuple[int, int] | None:
    """The device and inode of a workspace folder (never through a link); None when it is
    not a folder of its own."""
    try:
        info = workspace.lstat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


AGENT_WRITES = frozenset({"workspace", "trace.jsonl"})
"""What a command agent may make in its trial folder: its workspace (whose identity is
checked apart) and its trace (read never through a link, within a bound)."""


def folder_entries(folder: Path) -> dict[str, tuple[int, int]]:
    """Each entry of a folder with its inode and file type, never through a link."""
    with os.scandir(folder) as entries:
        found = {e.name: e.stat(follow_symlinks=False) for e in entries}
    return {name: (info.st_ino, stat.S_IFMT(info.st_mode)) for name, info in found.items()}


def remove_planted(folder: Path, before: Mapping[str, tuple[int, int]]) -> list[str]:
    """Remove what the agent put in its trial folder, outside its workspace: every entry
    that appeared there while it ran, or took the place of one sounding made, besides
    `AGENT_WRITES`. Returns their names, shown. Sounding reads and stores files there by
    name (a diff, service recordings), so none of them may be the agent's."""
    planted = [
        name
        for name, found in folder_entries(folder).items()
        if name not in AGENT_WRITES and before.get(name) != found
    ]
    for name in planted:
        remove_entry(folder / name)
    return sorted(shown_name(name) for name in planted)


def remove_entry(path: Path) -> None:
    """Remove a file, a link or a whole folder, never through a link (`folders_within`)."""
    if not stat.S_ISDIR(path.lstat().st_mode):
        path.unlink()
        return
    for folder in reversed(folders_within(path)):  # a folder after those inside it
        with os.scandir(folder) as entries:
            for entry in entries:
                if not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.path)
        os.rmdir(folder)


def shown_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (which Python holds as surrogates, and
    no JSON can carry) written as escapes, `\\xff`."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _files(root: Path | None) -> dict[str, Path]:
    """Files (and links) below `root`, by relative POSIX path; `.git` is not the agent's work."""
    found: dict[str, Path] = {}
    if root is None or not os.path.isdir(root):  # a lazy workspace nobody asked for: none
        return found
    pending = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                name = prefix + shown_name(entry.name)
                if entry.is_dir(follow_symlinks=False):
                    if name != ".git":
                        pending.append((Path(entry.path), name + "/"))
                else:
                    found[name] = Path(entry.path)
    return found


def changes(origin: Origin, workspace: Path) -> Changes:
    """Files the agent touched against the start, the by-products among them, and the diff.

    Nothing the agent left is followed or waited on: a link is compared as a link, a FIFO,
    socket or device is touched and never read, a file is read only as far as it must be
    (a file of a new size is changed unread), and the diff shows at most `DIFF_LIMIT`
    bytes of a file and `DIFF_TOTAL` in all."""
    before = origin.files
    after = _files(workspace)
    touched = sorted(
        [name for name in before if name not in after]
        + [name for name, path in after.items() if _changed(before.get(name), path)]
    )
    byproducts = [name for name in touched if _is_byproduct(name, origin.byproducts)]
    parts, size = [], 0
    for name in touched:
        part = _diff(name, before[name].source if name in before else None, after.get(name))
        if size + len(part) > DIFF_TOTAL:
            parts.append(f"(the diff stops here: it holds {DIFF_TOTAL >> 20} MiB at most)\n")
            break
        parts.append(part)
        size += len(part)
    return Changes(touched, byproducts, "".join(parts))


def _changed(state: FileState | None, path: Path) -> bool:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return state is None or str(path.readlink()) != state.link
    if state is None or state.digest is None:  # it was a link or was never read: changed
        return True
    if not stat.S_ISREG(info.st_mode) or info.st_size != state.size:
        return True
    return _digest(path) != state.digest


def _is_byproduct(name: str, patterns: tuple[str, ...]) -> bool:
    parts = PurePosixPath(name).parts
    return any(
        fnmatch.fnmatch(name, pattern) or any(fnmatch.fnmatch(part, pattern) for part in parts)
        for pattern in patterns
    )


def _diff(name: str, old: Path | None, new: Path | None) -> str:
    (old_text, old_why), (new_text, new_why) = _text(old), _text(new)
    if old_text is None or new_text is None:
        return f"Files a/{name} and b/{name} differ ({old_why or new_why}: not shown)\n"
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile=f"a/{name}" if old else "/dev/null",
        tofile=f"b/{name}" if new else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _text(path: Path | None) -> tuple[str | None, str]:
    """A file's text for the diff, or None and why it is not shown."""
    if path is None or path.is_symlink():
        return ("" if path is None else f"-> {path.readlink()}\n"), ""
    found = read_regular(path, DIFF_LIMIT + 1)
    if found is None:
        return None, "not a regular file"
    data, size = found
    if size > DIFF_LIMIT:
        return None, f"{size} bytes, over the {DIFF_LIMIT >> 10} KiB a diff shows of a file"
    if b"\0" in data[:8192]:
        return None, "binary"
    return data.decode("utf-8", errors="replace"), ""
