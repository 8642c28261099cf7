"""The evidence a finished trial left in its folder, as its checks saw it when it ran."""

from __future__ import annotations

import os
from collections.abc import Mapping
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
    extra: Mapping[str, Any] | None = None,
    settings: ServiceSettings | None = None,
) -> Evidence:
    """What `trial` left in `folder` (its record, workspace, output, diff and the services'
    recordings), for checks measured again without running anything."""
    present = set(os.listdir(folder))  # one look at the folder, not a stat per file

    def text(name: str) -> str | None:
        return (folder / name).read_text(encoding="utf-8") if name in present else None

    return Evidence(
        record=trial.record or RunRecord(),
        workspace=folder / "workspace" if "workspace" in present else None,
        touched=None if trial.touched is None else frozenset(trial.touched),
        byproducts=frozenset(trial.byproducts),
        diff=text("diff.patch"),
        stdout=text("stdout.txt") or "",
        stderr=text("stderr.txt") or "",
        services=load_service_evidence(folder, settings=settings) if "services" in present else {},
        scenario_id=trial.scenario,
        trial=trial.trial,
        cell=trial.cell,
        extra={
            **({"trace_path": str(folder / "trace.jsonl")} if "trace.jsonl" in present else {}),
            **(extra or {}),
        },
    )
