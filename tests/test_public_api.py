"""The public surface cannot drift unnoticed: each public `__all__` is pinned here."""

from __future__ import annotations

import importlib

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
    "sounding.store": [
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
