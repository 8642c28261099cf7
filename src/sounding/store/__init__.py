"""The results folder: layout, atomic writes, loading for re-scoring and resume."""

from sounding.store._atomic import read_json, sweep_tmp, write_bytes, write_json, write_text
from sounding.store._layout import (
    RESULTS_SCHEMA,
    RESULTS_SCHEMAS,
    SUMMARY_SCHEMA,
    TRIAL_SCHEMA,
    TRIAL_SCHEMAS,
    RunLayout,
    TrialKey,
    allocate_run,
    safe_name,
)
from sounding.store._stored import finished_trials, trial_record

__all__ = [
    "RESULTS_SCHEMA",
    "RESULTS_SCHEMAS",
    "SUMMARY_SCHEMA",
    "TRIAL_SCHEMA",
    "TRIAL_SCHEMAS",
    "RunLayout",
    "TrialKey",
    "allocate_run",
    "finished_trials",
    "read_json",
    "safe_name",
    "sweep_tmp",
    "trial_record",
    "write_bytes",
    "write_json",
    "write_text",
]
