"""Whether a scenario's checks tell success from failure: the outcome of its audit.

`sounding audit` plays each scenario with stand-ins for the agent, one trial each: its
reference (which must pass), the null agent (which does nothing, and must fail) and each
of its broken variants (each must fail). Their verdicts decide the scenario's outcome;
this module only reads them (the runner plays the trials).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from sounding._exit import ExitCode
from sounding.scoring._trial import TrialVerdict

AUDIT_SCHEMA = "sounding.audit/1"
OWN_ERRORS = frozenset({"agent", "budget"})  # a stand-in's own doing, not the harness's


class ProbeRole(StrEnum):
    """What a stand-in is in the audit, which decides the verdict it must get."""

    REFERENCE = "reference"  # solves the scenario: must pass
    NULL = "null"  # does nothing, answers nothing: must fail
    BROKEN = "broken"  # a known wrong solution: must fail


class AuditOutcome(StrEnum):
    """What a scenario's audit shows."""

    OK = "ok"  # the reference passes, the null agent and every broken variant fail
    WEAK = "weak"  # the null agent or a broken variant passes: the checks miss failure
    BROKEN = "broken"  # the reference does not pass: the scenario (or it) is wrong
    UNPROVEN = "unproven"  # no reference: nothing shows that the scenario can pass
    ERROR = "error"  # a stand-in's trial erred: it gave no verdict to read


_WORST_FIRST = (AuditOutcome.BROKEN, AuditOutcome.WEAK, AuditOutcome.ERROR)


class Probe(BaseModel):
    """One stand-in's trial of a scenario, and what it got."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str  # `reference`, `null`, `broken[0]`
    role: ProbeRole
    plays: str  # what played the agent: `command python3 …`, `the null agent`
    verdict: TrialVerdict
    reason: str = ""  # the trial's first failure, or why it erred
    error_kind: str | None = None
    trial: str | None = None  # its folder in the audit's (none for a stored record)

    @property
    def expected(self) -> TrialVerdict:
        return TrialVerdict.PASS if self.role is ProbeRole.REFERENCE else TrialVerdict.FAIL

    def finding(self) -> tuple[AuditOutcome, str] | None:
        """What this trial shows wrong with the scenario; None when it got what it must."""
        if self.verdict is self.expected:
            return None
        if self.role is ProbeRole.REFERENCE:
            return self._reference_finding()
        if self.verdict is TrialVerdict.PASS:
            return AuditOutcome.WEAK, self._passes()
        return AuditOutcome.ERROR, self._erred()

    def _reference_finding(self) -> tuple[AuditOutcome, str]:
        """A reference that failed, or erred of its own doing (it crashed, timed out, its
        record cannot be read), is broken; one the harness failed gives no verdict."""
        if self.verdict is TrialVerdict.FAIL or self.error_kind in OWN_ERRORS:
            return AuditOutcome.BROKEN, f"the reference ({self.plays}) does not pass: {self.reason}"
        return AuditOutcome.ERROR, self._erred()

    def _passes(self) -> str:
        if self.role is ProbeRole.NULL:
            return "the null agent passes: the checks cannot see that nothing was done"
        return f"{self.name} ({self.plays}) passes: the checks cannot see what it does wrong"

    def _erred(self) -> str:
        who = "the null agent" if self.role is ProbeRole.NULL else f"{self.name} ({self.plays})"
        kind = f" ({self.error_kind})" if self.error_kind else ""
        return f"{who} erred{kind}, so it shows nothing: {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        return {**self.model_dump(mode="json"), "expected": self.expected.value}


class ScenarioAudit(BaseModel):
    """One scenario's stand-ins and what they show."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    case: str
    scenario: str
    probes: list[Probe]

    @property
    def label(self) -> str:
        return f"{self.case}/{self.scenario}"

    @property
    def has_reference(self) -> bool:
        return any(probe.role is ProbeRole.REFERENCE for probe in self.probes)

    @property
    def outcome(self) -> AuditOutcome:
        """The worst of its findings; with none, OK, or UNPROVEN when it has no reference."""
        found = {outcome for outcome, _ in self._found()}
        worst = next((outcome for outcome in _WORST_FIRST if outcome in found), None)
        if worst is not None:
            return worst
        return AuditOutcome.OK if self.has_reference else AuditOutcome.UNPROVEN

    @property
    def findings(self) -> list[str]:
        """Each thing the audit found wrong, in the order of its stand-ins."""
        said = [text for _, text in self._found()]
        if not self.has_reference:
            said.append("no reference: nothing shows that the scenario can pass")
        return said

    def _found(self) -> list[tuple[AuditOutcome, str]]:
        return [found for probe in self.probes if (found := probe.finding()) is not None]

    def as_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "scenario": self.scenario,
            "outcome": self.outcome.value,
            "findings": self.findings,
            "probes": [probe.as_dict() for probe in self.probes],
        }


class Audit(BaseModel):
    """A suite's audit: each scenario's outcome, and where its trials are kept."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: str
    folder: str
    scenarios: list[ScenarioAudit]

    @property
    def totals(self) -> dict[str, int]:
        """How many scenarios got each outcome, every outcome named."""
        outcomes = [scenario.outcome for scenario in self.scenarios]
        return {outcome.value: outcomes.count(outcome) for outcome in AuditOutcome}

    @property
    def trials(self) -> int:
        """The stand-ins' trials it ran (a stored record was scored, not run)."""
        return sum(probe.trial is not None for s in self.scenarios for probe in s.probes)

    @property
    def records(self) -> int:
        """The stored records it scored."""
        return sum(probe.trial is None for s in self.scenarios for probe in s.probes)

    @property
    def exit_code(self) -> ExitCode:
        """0 when every scenario is OK; 1 when one is weak, broken or unproven; else 3
        (a stand-in erred, and nothing else was found)."""
        outcomes = {scenario.outcome for scenario in self.scenarios}
        if outcomes <= {AuditOutcome.OK}:
            return ExitCode.PASS
        if outcomes <= {AuditOutcome.OK, AuditOutcome.ERROR}:
            return ExitCode.ERROR
        return ExitCode.FAIL

    def document(self) -> dict[str, Any]:
        """The `--json` form, and `audit.json` (schema sounding.audit/1)."""
        return {
            "schema": AUDIT_SCHEMA,
            "suite": self.suite,
            "folder": self.folder,
            "totals": self.totals,
            "scenarios": [scenario.as_dict() for scenario in self.scenarios],
        }
