"""One trial's verdict: composite score, gates, forbidden rules, expect assertions."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from sounding.checks import CheckResult, Role, Status, UnknownCheckError, registry

_EPSILON = 1e-9
UNVALIDATED = "unvalidated judge"
"""How a judge check that may not gate is named wherever its verdict is shown."""


class Kind(StrEnum):
    """What a measured item is in the case: it decides how it weighs on the verdict."""

    INVARIANT = "invariant"  # weighted into the composite; a gate forces 0 when it fails
    EXPECT = "expect"  # an assertion: the trial fails if any fails, no partial credit
    FORBIDDEN = "forbidden"  # a rule on the trajectory: a violation forces the composite to 0
    LEAD = "lead"  # a cheap text check: reported as a lead, never changes the verdict


class TrialVerdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"


class Measured(BaseModel):
    """One check as it stood in the case, with what it found.

    `unvalidated` says why a judge check may not gate (its agreement with people is too low
    or not measured): it is measured and shown, and left out of the trial's verdict.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Kind
    type: str
    result: CheckResult
    weight: float = 1.0
    gate: bool = False
    unvalidated: str = ""

    @property
    def blocking(self) -> bool:
        """Whether failing this item fails the trial whatever the others say."""
        return self.kind in (Kind.EXPECT, Kind.FORBIDDEN) or self.gate

    def summary(self) -> dict[str, Any]:
        """The item as reports show it (without the check's details)."""
        return {
            "name": self.name,
            "kind": self.kind.value,
            "type": self.type,
            "status": self.result.status.value,
            "score": self.result.score,
            "reason": self.result.reason,
            "weight": self.weight,
            "gate": self.gate,
            "unvalidated": self.unvalidated,
        }

    @property
    def counted(self) -> bool:
        """Whether it weighs on the verdict: a lead never does, nor an unvalidated judge."""
        return self.kind is not Kind.LEAD and not self.unvalidated

    def describe(self) -> str:
        label = f"invariant {self.name}" if self.kind is Kind.INVARIANT else self.name
        if self.unvalidated:
            label = f"{UNVALIDATED} {self.name}"
        return f"{label}: {self.result.reason or self.result.status.value}"


class TrialScore(BaseModel):
    """The verdict of one trial and how it was reached; an errored trial has no composite."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: TrialVerdict
    composite: float | None
    threshold: float
    reason: str = ""
    decided_by: str | None = None  # the check the verdict rests on (none for a pass)
    checks: list[Measured]

    @property
    def leads(self) -> list[Measured]:
        return [m for m in self.checks if m.kind is Kind.LEAD and m.result.status is Status.FAILED]

    @property
    def unvalidated(self) -> list[Measured]:
        """The unvalidated judge checks that failed: shown, never counted."""
        return [m for m in self.checks if m.unvalidated and m.result.status is Status.FAILED]


def composite(items: list[Measured]) -> float | None:
    """Σ weight·score / Σ weight over the judged invariants; 0 when a gate or rule failed.

    None when nothing weighed could be judged. With no invariants at all, 1.0.
    """
    if any(_failed(m) and (m.gate or m.kind is Kind.FORBIDDEN) for m in items):
        return 0.0
    weighed = [m for m in items if m.kind is Kind.INVARIANT]
    judged = [m for m in weighed if m.result.judged]
    if not weighed:
        return 1.0
    total = sum(m.weight for m in judged)
    if total == 0:
        return None if not judged else 1.0
    return sum(m.weight * m.result.score for m in judged) / total


def score_trial(items: list[Measured], threshold: float) -> TrialScore:
    """The trial verdict: error when an error (or an unmeasured blocker) leaves it open.
    Leads and unvalidated judge checks are kept in the score and left out of the verdict."""
    counted = [m for m in items if m.counted]
    value = composite(counted)
    verdict, decider = _decide(counted, threshold, value)
    if verdict is TrialVerdict.PASS:
        reason = ""
    elif verdict is TrialVerdict.FAIL and (decider is None or not decider.blocking):
        reason = _under_threshold(decider, value, threshold)
    else:
        reason = decider.describe() if decider else "no invariant could be judged"
    return TrialScore(
        verdict=verdict,
        composite=None if verdict is TrialVerdict.ERROR else value,
        threshold=threshold,
        reason=reason,
        decided_by=decider.name if decider else None,
        checks=list(items),
    )


def _decide(
    counted: list[Measured], threshold: float, value: float | None
) -> tuple[TrialVerdict, Measured | None]:
    """The verdict, and the item that decided it (None for a pass, or when none did)."""
    error = next((m for m in counted if m.result.status is Status.ERROR), None)
    if error is not None:
        return TrialVerdict.ERROR, error
    failures = [m for m in counted if _failed(m)]
    blocker = next((m for m in failures if m.blocking), None)
    first_failure = blocker or (failures[0] if failures else None)
    if blocker is not None or _fails_whatever_is_open(counted, threshold, value):
        return TrialVerdict.FAIL, first_failure
    unmeasured = [m for m in counted if m.result.status is Status.UNJUDGED and m.blocking]
    if unmeasured:
        return TrialVerdict.ERROR, unmeasured[0]
    if value is None:
        return TrialVerdict.ERROR, None
    if not reaches(value, threshold):
        return TrialVerdict.FAIL, first_failure
    return TrialVerdict.PASS, None


def _failed(m: Measured) -> bool:
    """A gate that did not pass is its own `passed` false (for a judge: under its threshold)."""
    return m.result.status is Status.FAILED


def _fails_whatever_is_open(items: list[Measured], threshold: float, value: float | None) -> bool:
    """True when the judged items (composite `value`) already fail the trial, however the
    open ones turn out: the composite with every open one passed stays under the threshold."""
    if not all(m.result.judged for m in items):
        passed = CheckResult.passed()
        value = composite(
            [m if m.result.judged else m.model_copy(update={"result": passed}) for m in items]
        )
    return value is not None and not reaches(value, threshold)


def reaches(value: float, threshold: float) -> bool:
    """`value ≥ threshold`, deaf to float noise (1.2/1.5 reaches 0.80)."""
    return value >= threshold - _EPSILON


def _under_threshold(failure: Measured | None, value: float | None, threshold: float) -> str:
    shown = "none" if value is None else f"{value:.2f}"
    under = f"composite {shown} is under the pass threshold {threshold:.2f}"
    return f"{under}; {failure.describe()}" if failure else under


def score_error_kind(score: TrialScore) -> str | None:
    """The kind of error a scored trial is (None when it is no error): `judge` when the
    check that left it open asks the judge (`llm_as_judge`, a grader), else `harness` (a
    check that could not measure)."""
    if score.verdict is not TrialVerdict.ERROR:
        return None
    decider = next((m for m in score.checks if m.name == score.decided_by), None)
    if decider is None:
        return "harness"
    role = Role.FORBIDDEN if decider.kind is Kind.FORBIDDEN else Role.CHECK
    try:
        asks_judge = registry.get(decider.type, role).needs_judge
    except UnknownCheckError:
        return "harness"
    return "judge" if asks_judge else "harness"
