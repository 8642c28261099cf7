"""The runner: trials of a real agent in fresh workspaces, and scoring without running."""

from sounding.runner._agent import AgentContext
from sounding.runner._audit import AuditOptions, audit_suite
from sounding.runner._bulk import BulkOptions, score_records
from sounding.runner._config import Suite, SuiteConfigError, load_suite
from sounding.runner._plan import RunOptions
from sounding.runner._rescore import (
    RESCORE_SCHEMA,
    Change,
    Rescored,
    judge_for_run,
    rescore_run,
    score_record,
)
from sounding.runner._run import (
    RunHooks,
    RunInterrupted,
    RunResult,
    RunStopped,
    run_suite,
)
from sounding.runner._scaffold import ScaffoldError, scaffold
from sounding.runner._setup import RunSetupError, callable_agent, make_judge, prepare_run
from sounding.runner._workspace import WorkspaceError
from sounding.spec._guards import suite_of

__all__ = [
    "RESCORE_SCHEMA",
    "AgentContext",
    "AuditOptions",
    "BulkOptions",
    "Change",
    "Rescored",
    "RunHooks",
    "RunInterrupted",
    "RunOptions",
    "RunResult",
    "RunSetupError",
    "RunStopped",
    "ScaffoldError",
    "Suite",
    "SuiteConfigError",
    "WorkspaceError",
    "audit_suite",
    "callable_agent",
    "judge_for_run",
    "load_suite",
    "make_judge",
    "prepare_run",
    "rescore_run",
    "run_suite",
    "scaffold",
    "score_record",
    "score_records",
    "suite_of",
]
