"""Finished trials read back from a run's folder: their trial.json and run record."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from sounding.record import RunRecord
from sounding.store._atomic import read_json
from sounding.store._layout import RunLayout, TrialKey

# before sounding.trial/2, the run record was a file of its own beside trial.json
RECORD_FILE_V1 = "record.json"


def trial_record(folder: Path, trial: Mapping[str, Any]) -> RunRecord | None:
    """The run record of the trial stored in `folder`, whose trial.json is `trial`.

    None when the trial left none (the harness failed before the agent ran).
    """
    if "record" in trial:
        found = trial["record"]
        return None if found is None else RunRecord.model_validate(found)
    path = folder / RECORD_FILE_V1
    return RunRecord.model_validate_json(path.read_bytes()) if path.is_file() else None


def finished_trials(
    run_dir: Path, run: Mapping[str, Any], keys: Iterable[Mapping[str, Any]] | None = None
) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Each finished trial of the run in `run_dir`, whose run.json is `run`, in the plan's
    order: its folder and its trial.json. A planned trial that never finished is skipped.
    `keys` (some of run.json's `trials`) limits it to those."""
    layout = RunLayout.of(run_dir, run.get("schema"))
    for key in run["trials"] if keys is None else keys:
        folder = layout.trial_dir(TrialKey(**key))
        try:
            stored = read_json(f"{folder}/trial.json")  # no second Path per trial
        except FileNotFoundError:
            continue
        yield folder, stored
