"""A run: plan the trials, execute them in parallel, aggregate, and keep every artifact."""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sounding.judge import JudgeError, preflight
from sounding.runner._agent import RUNNING
from sounding.runner._cells import Cell
from sounding.runner._config import Suite, SuiteConfigError
from sounding.runner._exit import ExitCode as ExitCode  # where commands import it
from sounding.runner._measures import write_measures
from sounding.runner._pool import TrialPool
from sounding.runner._trial import (
    Agent,
    TrialOutcome,
    TrialPlan,
    TrialSettings,
    load_outcome,
)
from sounding.runner._workspace import Origin, resolve_origin
from sounding.scoring import ScenarioResult, TrialScore, TrialVerdict, aggregate
from sounding.spec import Case, Scenario, load_cases
from sounding.store import (
    RESULTS_SCHEMA,
    SUMMARY_SCHEMA,
    RunLayout,
    TrialKey,
    allocate_run,
    read_json,
    sweep_tmp,
    write_json,
)
from sounding.validators import blinding_notes

_STOP_GRACE = 10.0  # seconds for running trials to notice an interruption


class RunInterrupted(Exception):
    """Ctrl-C: the run stopped; finished trials are kept and `--resume` runs the rest."""

    def __init__(self, finished: int, root: Path | None = None) -> None:
        super().__init__(f"interrupted after {finished} trials")
        self.finished, self.root = finished, root


@dataclass(frozen=True)
class RunOptions:
    """What the user selected and overrode on the command line."""

    cases: list[str] = field(default_factory=list)
    scenarios: list[str] = field(default_factory=list)
    trials: int | None = None
    parallel: int | None = None
    resume: str | None = None
    keep: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "scenarios": self.scenarios,
            "trials": self.trials,
            "parallel": self.parallel,
            "keep": self.keep,
        }


@dataclass(frozen=True)
class ScenarioLine:
    """One scenario of one cell over its trials: what the terminal line and summary say."""

    cell: str
    case: str
    scenario: str
    result: ScenarioResult
    first_failure: str
    duration_ms: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "case": self.case,
            "scenario": self.scenario,
            **self.result.model_dump(mode="json"),
            "first_failure": self.first_failure,
            "duration_ms": round(self.duration_ms, 3),
        }


@dataclass
class RunResult:
    layout: RunLayout
    lines: list[ScenarioLine]
    outcomes: list[TrialOutcome]
    ran: int

    @property
    def exit_code(self) -> int:
        return exit_code_for(self.lines)


def exit_code_for(lines: Iterable[ScenarioLine]) -> int:
    lines = list(lines)
    if any(line.result.errors or line.result.verdict.value == "error" for line in lines):
        return ExitCode.ERROR
    if not all(line.result.gate for line in lines):
        return ExitCode.FAIL
    return ExitCode.PASS


Progress = Callable[[TrialOutcome], None]


def run_suite(
    suite: Suite,
    options: RunOptions,
    *,
    agent: Agent,
    settings_extra: dict[str, Any] | None = None,
    on_trial: Progress | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> RunResult:
    """Plan, execute and aggregate a run. Finished trials of a resumed run never run again."""
    layout, options = _layout(suite, options)
    cases = load_cases(suite.case_files(options.cases), suite_dir=suite.root)
    settings = TrialSettings(agent=agent, suite_root=suite.root, **(settings_extra or {}))
    _require_judge(cases, settings)
    _check_judge_models(suite, cases, settings)
    if on_note is not None:
        for note in blinding_notes(cases, suite.cells):
            on_note(note)
    plans = _plan(suite, cases, options, layout)
    write_json(layout.run_file, _run_document(suite, options, layout, plans))
    pending = _unfinished(plans) if options.resume else plans  # a new run's folder is empty
    if on_plan:
        on_plan(len(plans), len(plans) - len(pending))
    try:
        parallel = options.parallel or os.cpu_count() or 1
        ran = _execute(pending, settings, parallel, on_trial)
    except RunInterrupted as stop:
        raise RunInterrupted(stop.finished, layout.root) from None
    outcomes = [ran.get(p.key) or load_outcome(p.folder, p.key) for p in plans]
    lines = summarize(cases, plans, outcomes)
    write_json(layout.summary_file, summary_document(layout, lines))
    write_measures(layout.root / "measures.json", layout.run_id, outcomes)
    return RunResult(layout, lines, outcomes, len(pending))


def _check_judge_models(suite: Suite, cases: list[Case], settings: TrialSettings) -> None:
    """A check's or validator's own judge `model:` may not be a model under test either."""
    config = getattr(settings.judge, "config", None)
    if config is None:
        return
    models = {v.model for case in cases for v in case.validators if getattr(v, "model", None)}
    for case in cases:
        for scenario in case.scenarios:
            for invariant in scenario.invariants:
                if invariant.check.type == "llm_as_judge":
                    models.add(getattr(invariant.check.params, "model", None))
    try:
        preflight(
            config, models_under_test=suite.models_under_test, judge_models={m for m in models if m}
        )
    except JudgeError as exc:
        raise SuiteConfigError(str(exc)) from None


def _require_judge(cases: list[Case], settings: TrialSettings) -> None:
    """A case that needs the judge fails before any trial when no judge is configured."""
    if settings.judge is not None:
        return
    for case in cases:
        for validator in case.validators:
            if validator.mode == "judge":
                raise SuiteConfigError(
                    f"{case.path}: a `mode: judge` validator needs a judge: add a [judge] "
                    "table to sounding.toml (see docs/judge.md)"
                )
        for scenario in case.scenarios:
            for invariant in scenario.invariants:
                if invariant.check.type == "llm_as_judge":
                    raise SuiteConfigError(
                        f"{case.path}: scenario '{scenario.id}', invariant '{invariant.name}' "
                        "needs a judge: add a [judge] table to sounding.toml (see docs/judge.md)"
                    )


def _layout(suite: Suite, options: RunOptions) -> tuple[RunLayout, RunOptions]:
    if options.resume is None:
        return allocate_run(suite.results_dir), options
    root = suite.results_dir / options.resume
    if not (root / "run.json").is_file():
        raise SuiteConfigError(
            f"nothing to resume: {root} holds no run.json (runs: {_known_runs(suite)})"
        )
    run = read_json(root / "run.json")
    stored = run["options"]
    sweep_tmp(root)
    return RunLayout.of(root, run.get("schema")), RunOptions(
        cases=stored["cases"],
        scenarios=stored["scenarios"],
        trials=stored["trials"],
        parallel=options.parallel or stored["parallel"],
        resume=options.resume,
        keep=stored["keep"],
    )


def _known_runs(suite: Suite) -> str:
    runs = sorted(p.parent.name for p in suite.results_dir.glob("*/run.json"))
    return ", ".join(runs[-5:]) or "none"


def _plan(
    suite: Suite, cases: list[Case], options: RunOptions, layout: RunLayout
) -> list[TrialPlan]:
    chosen = _select(cases, options.scenarios)
    cells = suite.cells
    cache = layout.root / ".cache"
    origins: dict[int, Origin] = {}
    plans = []
    for case, scenario in chosen:
        key = id(scenario.workspace)
        if key not in origins:
            origins[key] = resolve_origin(scenario.workspace, suite.root, cache)
        trials = options.trials or scenario.trials
        for n, cell in itertools.product(range(1, trials + 1), cells):
            trial = TrialKey(cell.name, case.name, scenario.id, n)
            folder = layout.trial_dir(trial)
            plans.append(TrialPlan(trial, case, scenario, origins[key], folder, cell))
    rank = {cell.name: i for i, cell in enumerate(cells)}
    # interleaved: trial n of every scenario in every cell before trial n + 1 of any
    return sorted(plans, key=lambda p: (p.key.trial, p.key.case, p.key.scenario, rank[p.key.cell]))


def _select(cases: list[Case], scenario_ids: list[str]) -> list[tuple[Case, Scenario]]:
    everything = [(case, scenario) for case in cases for scenario in case.scenarios]
    if not scenario_ids:
        return everything
    chosen = [(c, s) for c, s in everything if s.id in scenario_ids]
    missing = set(scenario_ids) - {s.id for _, s in chosen}
    if missing:
        known = ", ".join(sorted({s.id for _, s in everything}))
        raise SuiteConfigError(f"no scenario {', '.join(sorted(missing))} (scenarios: {known})")
    return chosen


def _unfinished(plans: list[TrialPlan]) -> list[TrialPlan]:
    """The trials of a resumed run that left no trial.json; what they left is cleared."""
    pending = [p for p in plans if not (p.folder / "trial.json").is_file()]
    for plan in pending:
        if plan.folder.exists():
            shutil.rmtree(plan.folder)  # an unfinished trial of a killed run starts over
    return pending


def _execute(
    plans: list[TrialPlan],
    settings: TrialSettings,
    parallel: int,
    on_trial: Progress | None,
) -> dict[TrialKey, TrialOutcome]:
    """Run the trials; every outcome is also on disk (trial.json) when this returns."""
    done: dict[TrialKey, TrialOutcome] = {}
    RUNNING.stopping.clear()
    pool = TrialPool(plans, settings, parallel)
    try:
        for outcome in pool.outcomes():
            done[outcome.key] = _report(outcome, on_trial)
    except KeyboardInterrupt:
        RUNNING.stop_all()  # no new trial starts; running agents are killed, left unfinished
        pool.stop(_STOP_GRACE)
        raise RunInterrupted(len(done)) from None
    return done


def _report(outcome: TrialOutcome, on_trial: Progress | None) -> TrialOutcome:
    if on_trial is not None:
        on_trial(outcome)
    return outcome


def summarize(
    cases: list[Case], plans: list[TrialPlan], outcomes: list[TrialOutcome]
) -> list[ScenarioLine]:
    """One line per cell × scenario, in case-file order."""
    groups: dict[tuple[str, str, str], list[tuple[TrialPlan, TrialOutcome]]] = {}
    for plan, outcome in zip(plans, outcomes, strict=True):
        groups.setdefault((plan.key.cell, plan.key.case, plan.key.scenario), []).append(
            (plan, outcome)
        )
    order = {(c.name, s.id): i for i, (c, s) in enumerate(_all(cases))}
    lines = [_line(key, members) for key, members in groups.items()]
    return sorted(lines, key=lambda line: (line.cell, order.get((line.case, line.scenario), 0)))


def _all(cases: list[Case]) -> list[tuple[Case, Scenario]]:
    return [(case, scenario) for case in cases for scenario in case.scenarios]


def _line(key: tuple[str, str, str], members: list[tuple[TrialPlan, TrialOutcome]]) -> ScenarioLine:
    scenario = members[0][0].scenario
    ordered = sorted(members, key=lambda m: m[0].key.trial)
    scores = [_score_of(o, scenario) for _, o in ordered]
    result = aggregate(
        scores,
        aggregation=scenario.scoring.replica_aggregation,
        threshold=scenario.scoring.pass_threshold,
        k=scenario.scoring.k,
    )
    failure = next((s.reason for s in scores if s.verdict is not TrialVerdict.PASS), "")
    duration = sum(o.duration_ms for _, o in ordered)
    return ScenarioLine(*key, result=result, first_failure=failure, duration_ms=duration)


def _score_of(outcome: TrialOutcome, scenario: Scenario) -> TrialScore:
    if outcome.score is not None:
        return outcome.score
    return TrialScore(
        verdict=TrialVerdict.ERROR,
        composite=None,
        threshold=scenario.scoring.pass_threshold,
        reason=outcome.reason,
        checks=[],
    )


def _run_document(
    suite: Suite, options: RunOptions, layout: RunLayout, plans: list[TrialPlan]
) -> dict[str, Any]:
    return {
        "schema": RESULTS_SCHEMA,
        "run_id": layout.run_id,
        "suite": str(suite.root),
        "options": options.as_dict(),
        "reference_cell": suite.reference_cell,
        "cells": {cell.name: _delta(cell) for cell in suite.cells},
        "trials": [p.key.as_dict() for p in plans],
    }


def _delta(cell: Cell) -> dict[str, Any]:
    return cell.delta.model_dump(exclude_defaults=True)


def summary_document(layout: RunLayout, lines: list[ScenarioLine]) -> dict[str, Any]:
    totals = {v: 0 for v in ("pass", "flaky", "fail", "error")}
    for line in lines:
        totals[line.result.verdict.value] += 1
    return {
        "schema": SUMMARY_SCHEMA,
        "run_id": layout.run_id,
        "totals": totals,
        "exit_code": exit_code_for(lines),
        "scenarios": [line.as_dict() for line in lines],
    }
