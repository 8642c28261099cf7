"""The evidence a finished trial left in its folder, as its checks saw it when it ran."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sounding.checks import Evidence
from sounding.record import RunRecord
from sounding.services import ServiceSettings, load_service_evidence
from sounding.store._trial import Trial


def stored_evidence(
    folder: Path,
    trial: Trial,
    *,
    workspace: Path | None = None,
    extra: Mapping[str, Any] | None = None,
    settings: ServiceSettings | None = None,
) -> Evidence:
    """What `trial` left in `folder` (its record, output, diff and the services'
    recordings), for checks measured again without running anything; `workspace` is its
    whole final workspace (`stored_workspace`), None when it is not needed or not kept."""
    present = set(os.listdir(folder))  # one look at the folder, not a stat per file

    def text(name: str) -> str | None:
        return (folder / name).read_text(encoding="utf-8") if name in present else None

    return Evidence(
        record=trial.record or RunRecord(),
        workspace=workspace,
        touched=None if trial.touched is None else frozenset(trial.touched),
        byproducts=frozenset(trial.byproducts),
        diff=text("diff.patch"),
        stdout=text("stdout.txt") or "",
        stderr=text("stderr.txt") or "",
        exit_code=trial.exit_code,
        services=load_service_evidence(folder, settings=settings) if "services" in present else {},
        scenario_id=trial.scenario,
        trial=trial.trial,
        cell=trial.cell,
        extra={
            **({"trace_path": str(folder / "trace.jsonl")} if "trace.jsonl" in present else {}),
            **(extra or {}),
        },
    )


@contextmanager
def stored_workspace(
    run_dir: Path, folder: Path, trial: Trial, needed: bool = True
) -> Iterator[Path | None]:
    """The whole final workspace of a stored trial: its `workspace/` folder as it is when
    the trial kept all of it; else, in a temporary folder while the context lasts, the
    run's copy of the trial's start state with what the agent touched laid over it (and
    what it deleted taken away). None when the trial kept no workspace, or when it is not
    `needed` (no check reads it: nothing is laid out)."""
    kept = folder / "workspace"
    if trial.origin is None:
        yield kept if kept.is_dir() else None
    elif not needed:
        yield None
    else:
        with tempfile.TemporaryDirectory(prefix="sounding-workspace-") as scratch:
            whole = Path(scratch) / "workspace"
            shutil.copytree(run_dir / trial.origin, whole, symlinks=True)
            for name in trial.touched or ():  # deleted, or changed: what is kept replaces it
                path = whole / name
                if path.is_symlink() or path.is_file():
                    path.unlink()
            if kept.is_dir() and not kept.is_symlink():
                shutil.copytree(kept, whole, symlinks=True, dirs_exist_ok=True)
            yield whole
