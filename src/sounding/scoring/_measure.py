"""Measure one trial: run every check of a scenario on its evidence and score the result.

Deterministic checks run first. A check registered as costly (a judge) runs only when its
verdict can still change the outcome; otherwise it is reported as skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from sounding.checks import CheckContext, CheckResult, Evidence, Judge
from sounding.scoring._trial import Kind, Measured, TrialScore, TrialVerdict, score_trial
from sounding.spec import Assertion, CheckSpec, Invariant, Scenario


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


def _planned(scenario: Scenario) -> Iterator[tuple[str, Kind, CheckSpec, Invariant | None]]:
    groups: list[tuple[Kind, list[Assertion]]] = [
        (Kind.EXPECT, scenario.expect),
        (Kind.FORBIDDEN, scenario.forbidden),
        (Kind.LEAD, scenario.leads),
    ]
    for invariant in scenario.invariants:
        yield invariant.name, Kind.INVARIANT, invariant.check, invariant
    for kind, assertions in groups:
        for assertion in assertions:
            yield assertion.name, kind, assertion.check, None


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
    cheap = [p for p in plan if not p[2].check_type.costly]
    costly = [p for p in plan if p[2].check_type.costly]
    measured = [_measure(p, evidence, scenario, suite_dir, judge) for p in cheap]
    measured += _exit(scenario, evidence)
    threshold = scenario.scoring.pass_threshold
    for planned in costly:
        if _settled(measured, planned, threshold):
            skipped = CheckResult.skipped("a gate already failed: this verdict cannot change it")
            measured.append(_as_measured(planned, skipped))
        else:
            measured.append(_measure(planned, evidence, scenario, suite_dir, judge))
    if costly:  # back in the case's order
        order = {name: i for i, (name, *_rest) in enumerate(plan)}
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


def _settled(
    measured: list[Measured],
    planned: tuple[str, Kind, CheckSpec, Invariant | None],
    threshold: float,
) -> bool:
    """True when the trial fails even if this costly check passed with a full score."""
    best = _as_measured(planned, CheckResult.passed())
    return score_trial([*measured, best], threshold).verdict is TrialVerdict.FAIL


def _measure(
    planned: tuple[str, Kind, CheckSpec, Invariant | None],
    evidence: Evidence,
    scenario: Scenario,
    suite_dir: Path | None,
    judge: Judge | None,
) -> Measured:
    name, _kind, spec, _invariant = planned
    context = CheckContext(
        evidence=evidence,
        name=name,
        timeout=scenario.check_timeout,
        suite_dir=suite_dir,
        judge=judge,
    )
    return _as_measured(planned, run_check(spec, context))


def _as_measured(
    planned: tuple[str, Kind, CheckSpec, Invariant | None], result: CheckResult
) -> Measured:
    name, kind, spec, invariant = planned
    weight = invariant.weight if invariant else 1.0
    gate = invariant.gate if invariant else False
    return Measured(name=name, kind=kind, type=spec.type, result=result, weight=weight, gate=gate)
