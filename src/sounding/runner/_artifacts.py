"""`[executor] artifacts = "driver"`: a trial run on a machine that sees neither the suite
nor the results folder where this process does (docs/scale.md, "How artifacts travel").

On the worker, the trial's plan and the run's settings are moved once onto the worker's
own copy of the suite (Ray's `working_dir`) and a folder of its own (`here`); the finished
trial's folder then travels back as a tar of its regular files and folders (`pack`), which
this process lays under the run's folder with the same layout (`unpack`): into a folder of
its own beside the trial's, renamed into place whole, so a reader or a resumed run sees the
trial entire or not at all. The archive was made beside a hostile agent: a member that is
absolute, climbs out with `..`, or is a link or a device is refused, as is one past the size
a trial may bring back.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import stat
import tarfile
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from sounding.runner._agent import ImportedCallable
from sounding.runner._trial import TrialPlan, TrialSettings, failed_trial, run_trial
from sounding.runner._workspace import origin_elsewhere
from sounding.store import Trial, write_trial

ARTIFACTS_LIMIT = 256 << 20  # bytes of files one trial's folder may bring back
_INCOMING = ".incoming-"  # a trial's folder as it arrives, before it is renamed into place
_CLONES = "sounding-clones-"  # a worker process's own clones of the suite's repositories


class Unwatched:
    """A worker's watch of its trial: a command agent's own timeout stops it there."""

    def agent_started(self, timeout: float) -> None:
        """Nothing to note: the deadline of the task is kept by the run's process."""

    def agent_returned(self) -> bool:
        return True


@dataclass(frozen=True)
class Shipped:
    """A trial run with `artifacts = "driver"`: the finished trial, and its folder as a tar."""

    trial: Trial
    archive: bytes


def run_shipped(plan: TrialPlan, settings: TrialSettings) -> Shipped:
    """One trial run on a Ray worker in a folder of its own, removed afterwards: the suite is
    the worker's copy (the task's working folder, Ray's `working_dir`), the trial's folder
    comes back with its outcome (the body of each Ray task with `artifacts = "driver"`)."""
    started, here = time.monotonic(), Path.cwd()
    with tempfile.TemporaryDirectory(prefix="sounding-trial-") as temp:
        local = plan_here(plan, settings.suite_root, here, Path(temp) / "trial")
        trial = run_trial(local, settings_here(settings, here), Unwatched())
        archive = pack(local.folder)
        if archive is None:  # too much to bring back: an error of the harness, kept alone
            trial = _harness_error(local, too_large(), started)
            archive = pack(local.folder) or b""
    return Shipped(trial, archive)


def stored(plan: TrialPlan, shipped: Shipped) -> Trial:
    """A trial's folder that came back from its worker, laid in the run's folder; one that
    cannot be stored as it came is an error of the harness saying why."""
    try:
        unpack(shipped.archive, plan.folder)
    except ArtifactError as exc:
        return _harness_error(plan, str(exc), time.monotonic())
    return shipped.trial


def _harness_error(plan: TrialPlan, reason: str, started: float) -> Trial:
    """An error of the harness, stored alone in the trial's folder."""
    trial = failed_trial(plan, reason, started, kind="harness")
    shutil.rmtree(plan.folder, ignore_errors=True)
    plan.folder.mkdir(parents=True)
    write_trial(plan.folder, trial)
    return trial


class ArtifactError(ValueError):
    """A trial's folder that cannot be stored as it came back; says which member and why."""


def settings_here(settings: TrialSettings, here: Path) -> TrialSettings:
    """The run's settings with the suite at `here` (the worker's copy of it): its root, the
    agent's command and `[agent] env` where `{suite}` named the suite, a callable imported
    from there."""
    old, agent = settings.suite_root, settings.agent
    pattern = re.compile(re.escape(str(old)) + r"(?=/|$)")

    def swap(text: str) -> str:
        return pattern.sub(str(here).replace("\\", r"\\"), text)

    function = ImportedCallable(agent.target, here) if agent.target else agent.function
    moved = replace(
        agent,
        argv=[swap(arg) for arg in agent.argv],
        env={name: swap(value) for name, value in agent.env.items()},
        function=function,
    )
    return replace(settings, suite_root=here, agent=moved)


def plan_here(plan: TrialPlan, suite_root: Path, here: Path, folder: Path) -> TrialPlan:
    """The trial's plan run into `folder`, its workspace laid from the suite at `here` (for
    `suite_root`), a repository cloned on this machine at its pinned ref."""
    cache = Path(tempfile.gettempdir()) / f"{_CLONES}{os.getpid()}"  # one process clones it
    origin = origin_elsewhere(plan.origin, plan.scenario.workspace, suite_root, here, cache)
    return replace(plan, origin=origin, folder=folder)


def pack(folder: Path, limit: int = ARTIFACTS_LIMIT) -> bytes | None:
    """The regular files and folders under `folder` as an uncompressed tar, never through a
    link (links, FIFOs, sockets and devices do not travel); None when its files hold more
    than `limit` bytes."""
    buffer, size = io.BytesIO(), 0
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, info in _walk(folder):
            name = path.relative_to(folder).as_posix()
            if stat.S_ISDIR(info.st_mode):
                tar.addfile(_member(name, tarfile.DIRTYPE, 0))
                continue
            size += info.st_size
            if size > limit:
                return None
            with path.open("rb") as handle:
                tar.addfile(_member(name, tarfile.REGTYPE, info.st_size), handle)
    return buffer.getvalue()


def _walk(folder: Path) -> list[tuple[Path, os.stat_result]]:
    """Folders and regular files below `folder` (each folder before what it holds)."""
    found: list[tuple[Path, os.stat_result]] = []
    pending = [folder]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    pending.append(Path(entry.path))
                if stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode):
                    found.append((Path(entry.path), info))
    return found


def _member(name: str, kind: bytes, size: int) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.size, member.mode = kind, size, 0o755 if kind == tarfile.DIRTYPE else 0o644
    return member


def unpack(archive: bytes, folder: Path, limit: int = ARTIFACTS_LIMIT) -> None:
    """Lay a trial's folder that came back as `archive` at `folder`: written beside it, then
    renamed into place whole (what stood there is replaced). Refused, with nothing written
    at `folder` nor outside it, when a member is unsafe or the files pass `limit` bytes."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    incoming = Path(tempfile.mkdtemp(prefix=f"{_INCOMING}{folder.name}.", dir=folder.parent))
    try:
        _extract(archive, incoming, limit, folder)
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(incoming, folder)
    finally:
        shutil.rmtree(incoming, ignore_errors=True)


def _extract(archive: bytes, into: Path, limit: int, folder: Path) -> None:
    size = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:") as tar:
            for member in tar:
                target = into / _safe_name(member, folder)
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                size += member.size
                if size > limit:
                    raise ArtifactError(f"{folder}: {too_large(limit)}")
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                assert source is not None  # a regular file (`_safe_name`)
                with open(target, "xb") as handle:  # a fresh name in a folder of ours alone
                    shutil.copyfileobj(source, handle)
    except (tarfile.TarError, OSError) as exc:
        raise ArtifactError(f"{folder}: the trial's folder came back unreadable: {exc}") from None


def _safe_name(member: tarfile.TarInfo, folder: Path) -> str:
    """A member's relative path, or an error naming it when it is absolute, climbs out with
    `..`, or is not a regular file or a folder."""
    name = PurePosixPath(member.name)
    if name.is_absolute() or ".." in name.parts or not name.parts:
        why = "an absolute path" if name.is_absolute() else "a path out of the trial's folder"
    elif not (member.isfile() or member.isdir()):
        why = "a link or a special file"
    else:
        return str(name)
    raise ArtifactError(
        f"{folder}: the trial's folder came back with '{member.name}', {why}: refused "
        "(only files and folders inside it are stored)"
    )


def too_large(limit: int = ARTIFACTS_LIMIT) -> str:
    """Why a trial's folder is not brought back: its files are too large."""
    return (
        f"the trial's files are over the {limit >> 20} MiB one trial may bring back to "
        'sounding with [executor] artifacts = "driver"; keep fewer or smaller files in the '
        'workspace, or use artifacts = "shared" on a shared filesystem'
    )
