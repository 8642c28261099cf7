"""measures.json: one versioned record per trial, the input of every statistic."""

from __future__ import annotations

import json
from pathlib import Path

from sounding.runner._trial import TrialOutcome
from sounding.store import write_text

MEASURES_SCHEMA = "sounding.measures/1"


def write_measures(path: Path, run_id: str, outcomes: list[TrialOutcome]) -> None:
    """Each trial's record (`TrialOutcome.measures`), already JSON, joined in plan order."""
    head = json.dumps({"schema": MEASURES_SCHEMA, "run_id": run_id, "trials": []})
    records = ", ".join(outcome.measures_json for outcome in outcomes)
    write_text(path, f"{head[:-2]}{records}]}}\n")
