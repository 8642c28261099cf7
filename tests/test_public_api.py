"""The public surface cannot drift unnoticed: each public `__all__` is pinned here."""

from __future__ import annotations

import importlib
import types

import pytest

PINNED = {
    "sounding": [
        "Case",
        "CheckContext",
        "CheckResult",
        "Evidence",
        "Params",
        "RecordError",
        "RunRecord",
        "Scenario",
        "ScenarioResult",
        "ScenarioVerdict",
        "SpecError",
        "Status",
        "Trace",
        "TrialScore",
        "TrialVerdict",
        "aggregate",
        "load_case",
        "load_cases",
        "load_record",
        "measure_trial",
        "pass_at_k",
        "pass_hat_k",
        "registry",
    ],
    "sounding.record": [
        "RECORD_FORMATS",
        "SCHEMA",
        "TRACE_ENV",
        "Approval",
        "AuditEvent",
        "HookDecision",
        "Message",
        "Passage",
        "RecordError",
        "RunRecord",
        "ToolCall",
        "Trace",
        "Usage",
        "detect_format",
        "load_record",
        "parse_otel",
        "parse_record",
    ],
    "sounding.checks": [
        "CheckContext",
        "CheckResult",
        "CheckType",
        "Evidence",
        "Judge",
        "NoParams",
        "Params",
        "Registry",
        "Role",
        "ServiceEvidence",
        "Status",
        "UnknownCheckError",
        "registry",
    ],
    "sounding.spec": [
        "Assertion",
        "Case",
        "CheckSpec",
        "Invariant",
        "Problem",
        "Scenario",
        "Scoring",
        "SpecError",
        "ValidatorSpec",
        "Workspace",
        "load_case",
        "load_cases",
        "parse_duration",
        "resolve_case",
    ],
    "sounding.scoring": [
        "Aggregation",
        "Comparison",
        "Direction",
        "GapState",
        "Interval",
        "Kind",
        "Measured",
        "ScenarioResult",
        "ScenarioVerdict",
        "Statistic",
        "Summary",
        "TrialScore",
        "TrialVerdict",
        "aggregate",
        "compare",
        "composite",
        "interval",
        "measure_gap",
        "pass_at_k",
        "pass_hat_k",
        "publishable",
        "score_trial",
        "summarize",
    ],
    "sounding.services": [
        "ServiceError",
        "ServiceSet",
        "ServiceSettings",
        "load_service_evidence",
        "missing_driver",
        "start_services",
        "validate_service_specs",
    ],
    "sounding.judge": [
        "CACHE_SCHEMA",
        "DEFAULT_GRADER_TIMEOUT",
        "ENV_BASE_URL",
        "ENV_MODEL",
        "GraderAnswer",
        "GraderError",
        "JudgeClient",
        "JudgeConfig",
        "JudgeError",
        "KEY_ENV",
        "MetricType",
        "Provenance",
        "Rubric",
        "TOOL_NAME",
        "Verdict",
        "VerdictRequest",
        "VerdictTool",
        "find_graders",
        "grader_name",
        "judge_request",
        "preflight",
        "run_grader",
        "verdict_tool",
    ],
    "sounding.validators": [
        "Answer",
        "CONTEXT_SCHEMA",
        "CannotJudge",
        "CellLike",
        "ContextDocument",
        "ContextError",
        "FORM_SCHEMA",
        "FinishedTrial",
        "FormError",
        "FormResult",
        "KEY_SCHEMA",
        "Metric",
        "Reference",
        "Run",
        "Validation",
        "ValidatorProgram",
        "blinding_note",
        "blinding_notes",
        "check_answer",
        "export_form",
        "import_form",
        "read_answer",
        "run_validators",
        "validator",
    ],
    "sounding.report": [
        "COMPARE_SCHEMA",
        "Gap",
        "REPORT_SCHEMA",
        "Results",
        "ResultsError",
        "RunComparison",
        "RunSummary",
        "ScenarioSummary",
        "ScenarioTrials",
        "StoredTrial",
        "compare_command",
        "compare_runs",
        "html_report",
        "json_report",
        "junit_report",
        "load_results",
        "markdown_report",
        "print_comparison",
        "report_command",
        "report_document",
        "trial_id",
    ],
    "sounding.store": [
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
    ],
}


@pytest.mark.parametrize("module", sorted(PINNED))
def test_public_names_are_pinned(module: str) -> None:
    exported = importlib.import_module(module).__all__
    assert sorted(exported) == sorted(PINNED[module])
    assert len(set(exported)) == len(exported)


@pytest.mark.parametrize("module", sorted(PINNED))
def test_every_public_name_resolves(module: str) -> None:
    loaded = importlib.import_module(module)
    for name in loaded.__all__:
        assert getattr(loaded, name) is not None


@pytest.mark.parametrize("module", sorted(PINNED))
def test_all_names_exactly_the_public_names(module: str) -> None:
    """Nothing public goes unlisted: every name without a leading underscore is in __all__."""
    loaded = importlib.import_module(module)
    for name in loaded.__all__:  # a package that loads its names on first use has them now
        getattr(loaded, name)
    public = {
        name
        for name, value in vars(loaded).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name not in {"annotations"}
    }
    assert public == set(loaded.__all__)
