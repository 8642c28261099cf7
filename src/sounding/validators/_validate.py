"""Run a trial's validators, each independent of the others, and combine their metrics.

Each validator owes the metrics it declares. One that fails its contract (crashes, times
out, prints something unreadable, omits a declared metric, or a judge that never gives a
verdict) makes the trial invalid — its state `error` — never false. A metric marked
unjudged (with a reason) leaves only that metric's denominator. Metrics a validator returns
beyond its declaration are stored but not scorable; a metric another validator declares is
that validator's alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sounding.checks import Evidence, Judge
from sounding.spec import ValidatorSpec
from sounding.spec._validators import RESERVED_METRICS, declared_metrics
from sounding.store import Trial
from sounding.validators._answer import Answer
from sounding.validators._context import FinishedTrial, write_context
from sounding.validators._judge import run_judge
from sounding.validators._script import run_script

FORM_PENDING = "filled by hand on a form (sounding form export / import); not filled yet"


@dataclass(frozen=True)
class Validation:
    """What a trial's validators found. `metrics` holds None for an unjudged metric.

    `problems` is empty for a valid trial; otherwise each says which validator broke its
    contract and how. `unjudged` also names the form metrics nobody has filled yet.
    """

    metrics: Mapping[str, Any] = field(default_factory=dict)
    reasons: Mapping[str, str] = field(default_factory=dict)
    unjudged: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def reason(self) -> str:
        """Why the trial is invalid, in one line (empty when it is valid)."""
        return "invalid: " + "; ".join(self.problems) if self.problems else ""

    @property
    def kind(self) -> str | None:
        """The error an invalid trial is: `judge` when only judge validators gave no
        verdict, else `harness` (a validator of the suite broke its contract)."""
        if not self.problems:
            return None
        return "judge" if all(p.startswith("judge validator") for p in self.problems) else "harness"

    @classmethod
    def from_trial(cls, trial: Trial) -> Validation:
        """The metrics a stored trial kept, for re-scoring without running anything.

        A metric stored as None was unjudged; its reason is its stored reason.
        """
        metrics, reasons = trial.metrics, trial.metric_reasons
        unjudged = {
            name: reasons.get(name, "not judged when the trial ran")
            for name, value in metrics.items()
            if value is None
        }
        return cls(dict(metrics), dict(reasons), unjudged)

    def applied(self, evidence: Evidence) -> Evidence:
        """The evidence with these metrics added, where the `metric` check reads them."""
        return replace(evidence, extra={**evidence.extra, **self.extra()})

    def extra(self) -> dict[str, Any]:
        """These metrics as the `metric` check reads them in `Evidence.extra`."""
        return {
            "metrics": dict(self.metrics),
            "reasons": dict(self.reasons),
            "unjudged": dict(self.unjudged),
        }


def run_validators(trial: FinishedTrial, *, judge: Judge | None = None) -> Validation:
    """Run every validator of the trial's case, in the order declared, and combine them."""
    validators = trial.case.validators
    if not validators:
        return Validation()
    folder = trial.folder / "validation"
    folder.mkdir(parents=True, exist_ok=True)
    scripts = any(spec.mode == "script" for spec in validators)
    context = write_context(trial, folder) if scripts else None
    answers = {spec.name: _run_one(spec, trial, context, judge) for spec in validators}
    return combine(validators, answers)


def _run_one(
    spec: ValidatorSpec, trial: FinishedTrial, context: Path | None, judge: Judge | None
) -> Answer | str | None:
    if spec.mode == "script" and context is not None:
        return run_script(spec, context, trial.suite_dir)
    if spec.mode == "judge":
        return run_judge(spec, trial, judge)
    return None  # a form: filled by a person, after the run


def combine(
    validators: list[ValidatorSpec], answers: Mapping[str, Answer | str | None]
) -> Validation:
    """Each validator's declared metrics from its own answer; then extras nobody declared."""
    owners = declared_metrics(validators)
    found = _Found()
    for spec in validators:
        answer = answers.get(spec.name)
        if isinstance(answer, str):
            found.problems.append(f"{spec.mode} validator '{spec.name}' {answer}")
        elif answer is None:
            found.unjudged.update(dict.fromkeys(spec.metrics, FORM_PENDING))
        else:
            found.take(answer, spec.metrics)
    for spec in validators:
        answer = answers.get(spec.name)
        if isinstance(answer, Answer):
            extras = [m for m in [*answer.metrics, *answer.unjudged] if m not in owners]
            found.take(answer, [m for m in extras if m not in found.metrics])
    return found.validation()


@dataclass
class _Found:
    metrics: dict[str, Any] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    unjudged: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def take(self, answer: Answer, names: list[str]) -> None:
        for name in names:
            if name in RESERVED_METRICS:
                continue  # `passed` and `composite` are the trial's own
            if name in answer.unjudged:
                self.metrics[name] = None
                self.unjudged[name] = self.reasons[name] = answer.unjudged[name]
            else:
                self.metrics[name] = answer.metrics[name]
                if name in answer.reasons:
                    self.reasons[name] = answer.reasons[name]

    def validation(self) -> Validation:
        return Validation(self.metrics, self.reasons, self.unjudged, tuple(self.problems))
