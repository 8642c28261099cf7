"""A scenario's audit outcome, read from what its stand-ins got."""

from __future__ import annotations

import pytest

from sounding.scoring import (
    AUDIT_SCHEMA,
    Audit,
    AuditOutcome,
    Probe,
    ProbeRole,
    ScenarioAudit,
    TrialVerdict,
)

PASS, FAIL, ERROR = TrialVerdict.PASS, TrialVerdict.FAIL, TrialVerdict.ERROR


def reference(verdict: TrialVerdict, reason: str = "", kind: str | None = None) -> Probe:
    return Probe(
        name="reference",
        role=ProbeRole.REFERENCE,
        plays="command python3 solve.py",
        verdict=verdict,
        reason=reason,
        error_kind=kind,
    )


def null(verdict: TrialVerdict, kind: str | None = None) -> Probe:
    reason = "expect[0] final_answer_contains: the answer does not contain 'refunded'"
    return Probe(
        name="null",
        role=ProbeRole.NULL,
        plays="the null agent",
        verdict=verdict,
        reason="" if verdict is PASS else reason,
        error_kind=kind,
    )


def broken(index: int, verdict: TrialVerdict) -> Probe:
    return Probe(
        name=f"broken[{index}]",
        role=ProbeRole.BROKEN,
        plays="command python3 solve.py --twice",
        verdict=verdict,
        reason="" if verdict is PASS else "expect[1] once_per_arg: called 2 times",
    )


def audited(*probes: Probe) -> ScenarioAudit:
    return ScenarioAudit(case="demo", scenario="refund", probes=list(probes))


def test_a_passing_reference_and_failing_others_are_ok() -> None:
    scenario = audited(reference(PASS), null(FAIL), broken(0, FAIL), broken(1, FAIL))
    assert (scenario.outcome, scenario.findings) == (AuditOutcome.OK, [])


def test_a_null_agent_that_passes_makes_the_scenario_weak() -> None:
    scenario = audited(reference(PASS), null(PASS), broken(0, FAIL))
    assert scenario.outcome is AuditOutcome.WEAK
    assert scenario.findings == [
        "the null agent passes: the checks cannot see that nothing was done"
    ]


def test_a_broken_variant_that_passes_is_named_with_what_it_runs() -> None:
    scenario = audited(reference(PASS), null(FAIL), broken(0, FAIL), broken(1, PASS))
    assert scenario.outcome is AuditOutcome.WEAK
    assert scenario.findings == [
        "broken[1] (command python3 solve.py --twice) passes: the checks cannot see what it "
        "does wrong"
    ]


def test_a_failing_reference_is_broken_with_its_first_failure() -> None:
    why = "expect[0] tool_called: tool 'lookup' was never called"
    scenario = audited(reference(FAIL, why), null(PASS))
    assert scenario.outcome is AuditOutcome.BROKEN  # before what the null agent shows
    assert scenario.findings == [
        f"the reference (command python3 solve.py) does not pass: {why}",
        "the null agent passes: the checks cannot see that nothing was done",
    ]


@pytest.mark.parametrize(
    ("kind", "outcome"),
    [
        ("agent", AuditOutcome.BROKEN),
        ("budget", AuditOutcome.BROKEN),
        ("service", AuditOutcome.ERROR),
    ],
)
def test_a_reference_that_erred_is_broken_only_when_the_error_is_its_own(
    kind: str, outcome: AuditOutcome
) -> None:
    scenario = audited(reference(ERROR, "timed out after 5.0s", kind), null(FAIL))
    assert scenario.outcome is outcome
    assert "timed out after 5.0s" in scenario.findings[0]


def test_a_null_agent_that_erred_shows_nothing_and_is_an_error() -> None:
    scenario = audited(reference(PASS), null(ERROR, "harness"))
    assert scenario.outcome is AuditOutcome.ERROR
    assert scenario.findings[0].startswith("the null agent erred (harness), so it shows nothing")


def test_without_a_reference_the_scenario_is_unproven_unless_the_null_agent_passes() -> None:
    unproven = audited(null(FAIL), broken(0, FAIL))
    assert unproven.outcome is AuditOutcome.UNPROVEN
    assert unproven.findings == ["no reference: nothing shows that the scenario can pass"]
    weak = audited(null(PASS))
    assert weak.outcome is AuditOutcome.WEAK
    assert len(weak.findings) == 2


@pytest.mark.parametrize(
    ("scenarios", "code"),
    [
        ([audited(reference(PASS), null(FAIL))], 0),
        ([audited(reference(PASS), null(FAIL)), audited(null(FAIL))], 1),
        ([audited(reference(PASS), null(PASS))], 1),
        ([audited(reference(PASS), null(ERROR, "service"))], 3),
        ([audited(reference(PASS), null(ERROR, "service")), audited(null(PASS))], 1),
    ],
)
def test_the_exit_code_is_zero_only_when_every_scenario_is_ok(
    scenarios: list[ScenarioAudit], code: int
) -> None:
    assert Audit(suite="s", folder="f", scenarios=scenarios).exit_code == code


def test_the_document_names_every_outcome_and_what_each_stand_in_had_to_get() -> None:
    audit = Audit(
        suite="/suite",
        folder="/suite/results/audit-1",
        scenarios=[audited(reference(PASS), null(FAIL)), audited(null(PASS))],
    )
    document = audit.document()
    assert document["schema"] == AUDIT_SCHEMA == "sounding.audit/1"
    assert document["totals"] == {"ok": 1, "weak": 1, "broken": 0, "unproven": 0, "error": 0}
    first = document["scenarios"][0]
    assert (first["case"], first["scenario"], first["outcome"]) == ("demo", "refund", "ok")
    assert [(p["name"], p["expected"], p["verdict"]) for p in first["probes"]] == [
        ("reference", "pass", "pass"),
        ("null", "fail", "fail"),
    ]
    assert first["probes"][1]["role"] == "null" and first["probes"][1]["trial"] is None
