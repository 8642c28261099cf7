"""The results folder: layout, atomic writes, loading for re-scoring and resume."""

from sounding.store._atomic import read_json, sweep_tmp, write_bytes, write_json, write_text
from sounding.store._layout import (
    RESULTS_SCHEMA,
    SUMMARY_SCHEMA,
    TRIAL_SCHEMA,
    RunLayout,
    TrialKey,
    allocate_run,
    safe_name,
)

__all__ = [
    "RESULTS_SCHEMA",
    "SUMMARY_SCHEMA",
    "TRIAL_SCHEMA",
    "RunLayout",
    "TrialKey",
    "allocate_run",
    "read_json",
    "safe_name",
    "sweep_tmp",
    "write_bytes",
    "write_json",
    "write_text",
]
