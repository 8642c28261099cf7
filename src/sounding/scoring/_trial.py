"""One trial's verdict: composite score, gates, forbidden rules, expect assertions."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import ConfigDict

from sounding._deferred import DeferredModel
from sounding.checks import CheckResult, Status
from sounding.checks._base import trusted

_EPSILON = 1e-9


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


class Measured(DeferredModel):
    """One check as it stood in the case, with what it found."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Kind
    type: str
    result: CheckResult
    weight: float = 1.0
    gate: bool = False

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
        }

    def describe(self) -> str:
        label = f"invariant {self.name}" if self.kind is Kind.INVARIANT else self.name
        return f"{label}: {self.result.reason or self.result.status.value}"


class TrialScore(DeferredModel):
    """The verdict of one trial and how it was reached; an errored trial has no composite."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: TrialVerdict
    composite: float | None
    threshold: float
    reason: str = ""
    checks: list[Measured]

    @property
    def leads(self) -> list[Measured]:
        return [m for m in self.checks if m.kind is Kind.LEAD and m.result.status is Status.FAILED]


def composite(items: list[Measured]) -> float | None:
    """Σ weight·score / Σ weight over the judged invariants; 0 when a gate or rule failed.

    None when nothing weighed could be judged. With no invariants at all, 1.0.
    """
    if any(m.blocking and m.kind is not Kind.EXPECT and _failed(m) for m in items):
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
    """The trial verdict: error when an error (or an unmeasured blocker) leaves it open."""
    counted = [m for m in items if m.kind is not Kind.LEAD]
    value = composite(counted)
    failures = [m for m in counted if _failed(m)]
    errors = [m for m in counted if m.result.status is Status.ERROR]
    unmeasured = [m for m in counted if m.blocking and m.result.status is Status.UNJUDGED]
    if errors:
        verdict, reason = TrialVerdict.ERROR, errors[0].describe()
    elif _fails_whatever_is_open(counted, threshold, value):
        verdict, reason = TrialVerdict.FAIL, _first_failure(failures, value, threshold)
    elif unmeasured:
        verdict, reason = TrialVerdict.ERROR, unmeasured[0].describe()
    elif value is None:
        verdict, reason = TrialVerdict.ERROR, "no invariant could be judged"
    elif not reaches(value, threshold):
        verdict, reason = TrialVerdict.FAIL, _first_failure(failures, value, threshold)
    else:
        verdict, reason = TrialVerdict.PASS, ""
    if verdict is TrialVerdict.ERROR:
        value = None  # an open trial has no composite: what is left of it is no score
    return trusted(  # every value made here, from measured items: nothing to validate
        TrialScore,
        verdict=verdict,
        composite=value,
        threshold=threshold,
        reason=reason,
        checks=list(items),
    )


def _failed(m: Measured) -> bool:
    """A gate that did not pass is its own `passed` false (for a judge: under its threshold)."""
    return m.result.status is Status.FAILED


def _fails_whatever_is_open(items: list[Measured], threshold: float, value: float | None) -> bool:
    """True when the judged items already fail the trial, however the open ones turn out."""
    if any(m.blocking and _failed(m) for m in items):
        return True
    if all(m.result.judged for m in items):
        best_value = value  # nothing is open: the composite is what it is
    else:
        best = [
            m if m.result.judged else m.model_copy(update={"result": CheckResult.passed()})
            for m in items
        ]
        best_value = composite(best)
    return best_value is not None and not reaches(best_value, threshold)


def reaches(value: float, threshold: float) -> bool:
    """`value ≥ threshold`, deaf to float noise (1.2/1.5 reaches 0.80)."""
    return value >= threshold - _EPSILON


def _first_failure(failures: list[Measured], value: float | None, threshold: float) -> str:
    blocking = [m for m in failures if m.blocking]
    if blocking:
        return blocking[0].describe()
    shown = "none" if value is None else f"{value:.2f}"
    under = f"composite {shown} is under the pass threshold {threshold:.2f}"
    return f"{under}; {failures[0].describe()}" if failures else under
