"""Measure one trial: run every check of a scenario on its evidence and score the result.

Deterministic checks run first. A check registered as costly (a judge) runs only when its
verdict can still change the outcome; otherwise it is reported as skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from sounding.checks import CheckContext, CheckResult, Evidence, Judge
from sounding.scoring._trial import Kind, Measured, TrialScore, TrialVerdict, score_trial
from sounding.spec import CheckSpec, Scenario


def run_check(spec: CheckSpec, context: CheckContext) -> CheckResult:
    """Run one check; an exception is caught here, once, and becomes an error with its trace."""
    try:
        result = spec.check_type.run(spec.params, context)
    except Exception as exc:  # the runner boundary: a broken check never stops the others
        import traceback  # only for a check that raised

        return CheckResult.error(
            f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=8)
        )
    if not isinstance(result, CheckResult):
        return CheckResult.error(f"check '{spec.type}' returned {type(result).__name__}")
    return result


class _Planned(NamedTuple):
    """A check as it stands in the case, before it runs."""

    name: str
    kind: Kind
    spec: CheckSpec
    weight: float = 1.0
    gate: bool = False
    unvalidated: str = ""  # why this judge check may not gate

    def measured(self, result: CheckResult) -> Measured:
        name, kind, spec, weight, gate, unvalidated = self
        if unvalidated:  # its verdict carries the mark wherever it goes
            details = {**result.details, "unvalidated_judge": unvalidated}
            result = result.model_copy(update={"details": details})
        return Measured(
            name=name,
            kind=kind,
            type=spec.type,
            result=result,
            weight=weight,
            gate=gate,
            unvalidated=unvalidated,
        )


def _planned(scenario: Scenario) -> Iterator[_Planned]:
    for invariant in scenario.invariants:
        check, weight, gate = invariant.check, invariant.weight, invariant.gate
        unvalidated = invariant.unvalidated_judge
        yield _Planned(invariant.name, Kind.INVARIANT, check, weight, gate, unvalidated)
    for kind, assertions in (
        (Kind.EXPECT, scenario.expect),
        (Kind.FORBIDDEN, scenario.forbidden),
        (Kind.LEAD, scenario.leads),
    ):
        for assertion in assertions:
            yield _Planned(
                assertion.name, kind, assertion.check, unvalidated=assertion.unvalidated_judge
            )


def measure_trial(
    scenario: Scenario,
    evidence: Evidence,
    *,
    suite_dir: Path | None = None,
    judge: Judge | None = None,
) -> TrialScore:
    """Score one trial of `scenario` from its evidence. An agent that exited with a status
    the scenario does not allow has failed, whatever its checks say."""
    plan = list(_planned(scenario))
    cheap = [p for p in plan if not p.spec.check_type.costly]
    costly = [p for p in plan if p.spec.check_type.costly]
    expect = [(a.check.type, a.check.params) for a in scenario.expect]  # dumped by a grader

    def measure(planned: _Planned) -> Measured:
        context = CheckContext(
            evidence=evidence,
            name=planned.name,
            timeout=scenario.check_timeout,
            suite_dir=suite_dir,
            judge=judge,
            expect=expect,
        )
        return planned.measured(run_check(planned.spec, context))

    measured = [measure(p) for p in cheap]
    measured += _exit(scenario, evidence)
    threshold = scenario.scoring.pass_threshold
    for planned in costly:
        if _settled(measured, planned, threshold):
            skipped = CheckResult.skipped("a gate already failed: this verdict cannot change it")
            measured.append(planned.measured(skipped))
        else:
            measured.append(measure(planned))
    if costly:  # back in the case's order
        order = {p.name: i for i, p in enumerate(plan)}
        measured.sort(key=lambda m: order.get(m.name, len(order)))
    return score_trial(measured, threshold)


AGENT_EXIT = "agent exit"


def _exit(scenario: Scenario, evidence: Evidence) -> list[Measured]:
    """A failed blocking item when the agent's exit status is neither 0 nor allowed."""
    status = evidence.exit_code
    if status in (None, 0) or status in scenario.allow_exit:
        return []
    reason = (
        f"the agent exited with status {status}; a scenario whose agent may exit so says "
        f"`allow_exit: [{status}]`"
    )
    failed = CheckResult.failed(reason, exit_code=status)
    return [Measured(name=AGENT_EXIT, kind=Kind.EXPECT, type="agent_exit", result=failed)]


def _settled(measured: list[Measured], planned: _Planned, threshold: float) -> bool:
    """True when the trial fails even if this costly check passed with a full score."""
    best = planned.measured(CheckResult.passed())
    return score_trial([*measured, best], threshold).verdict is TrialVerdict.FAIL
