"""A finished trial read back from its folder: the run record its trial.json holds."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sounding.record import RunRecord

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
