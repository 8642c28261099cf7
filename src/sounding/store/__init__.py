"""The results folder: its layout, and each document of a run with its one writer and reader."""

from sounding.store._documents import ResultsError
from sounding.store._evidence import stored_evidence, stored_workspace
from sounding.store._layout import (
    RESULTS_SCHEMA,
    RunLayout,
    TrialKey,
    allocate_run,
    safe_name,
    scenario_label,
)
from sounding.store._lock import run_in_progress, run_lock
from sounding.store._results import Results, ScenarioTrials, load_results
from sounding.store._run import (
    MEASURES_SCHEMA,
    Measures,
    RunPlan,
    RunSummary,
    ScenarioSummary,
    finished_trials,
    read_plan,
    read_summary,
    write_measures,
    write_plan,
    write_summary,
)
from sounding.store._trial import (
    ERROR_KINDS,
    INFRASTRUCTURE,
    SCOPE,
    SPENDING,
    TRIAL_SCHEMA,
    Trial,
    read_trial,
    scoped,
    trial_exists,
    write_trial,
)

__all__ = [
    "ERROR_KINDS",
    "INFRASTRUCTURE",
    "MEASURES_SCHEMA",
    "RESULTS_SCHEMA",
    "SCOPE",
    "SPENDING",
    "TRIAL_SCHEMA",
    "Measures",
    "Results",
    "ResultsError",
    "RunLayout",
    "RunPlan",
    "RunSummary",
    "ScenarioSummary",
    "ScenarioTrials",
    "Trial",
    "TrialKey",
    "allocate_run",
    "finished_trials",
    "load_results",
    "read_plan",
    "read_summary",
    "read_trial",
    "run_in_progress",
    "run_lock",
    "safe_name",
    "scenario_label",
    "scoped",
    "stored_evidence",
    "stored_workspace",
    "trial_exists",
    "write_measures",
    "write_plan",
    "write_summary",
    "write_trial",
]
