"""What a run runs: the options it was started with, and its trials in run order.

A fixed run plans every trial up front. An adaptive run (`--until-decided`) plans the most
it may take, for run.json and `--resume`; its `Schedule` decides which it takes.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from sounding.runner._cells import Cell
from sounding.runner._config import Suite, SuiteConfigError
from sounding.runner._trial import TrialPlan
from sounding.runner._workspace import Origin, keep_origin, resolve_origin
from sounding.scoring import StopRule
from sounding.spec import Aggregation, Case, Scenario
from sounding.store import RunLayout, Trial, TrialKey, read_trial, trial_exists

_NOT_KEPT = ("resume", "executor", "ray_address")


@dataclass(frozen=True)
class RunOptions:
    """What the user selected and overrode on the command line."""

    cases: list[str] = field(default_factory=list)
    scenarios: list[str] = field(default_factory=list)
    trials: int | None = None
    parallel: int | None = None
    resume: str | None = None
    keep: bool = False
    llm: str | None = None  # `--llm live | record | replay`
    max_cost: float | None = None  # `--max-cost`: US dollars the run may spend
    retry_errors: int = 0  # `--retry-errors`: trials that may run again after no error of theirs
    until_decided: StopRule | None = None  # `--until-decided`: trials while a verdict is open
    executor: str | None = None  # `--executor local | ray`: over `[executor] kind`
    ray_address: str | None = None  # `--ray-address`: over `[executor] address`

    def as_dict(self) -> dict[str, Any]:
        """As run.json keeps them: neither `--resume` nor where the trials run is a choice of
        the run (a run started on one executor may finish on another)."""
        return {key: value for key, value in asdict(self).items() if key not in _NOT_KEPT}

    @staticmethod
    def stored(options: dict[str, Any]) -> RunOptions:
        """The options run.json keeps (`as_dict`), as the run was started with them."""
        rule = options.get("until_decided")
        return RunOptions(**{**options, "until_decided": StopRule(**rule) if rule else None})


@dataclass(frozen=True)
class Planned:
    """The trials of a run, made one at a time in run order, so that a run of many trials
    keeps none of them in memory: trial n of every scenario in every cell before trial
    n + 1 of any, scenarios by case and id, cells in their order."""

    scenarios: list[tuple[Case, Scenario, Origin, int]]  # with its number of trials (the most)
    cells: list[Cell]
    layout: RunLayout

    def __iter__(self) -> Iterator[TrialPlan]:
        most = max((trials for *_, trials in self.scenarios), default=0)
        for n in range(1, most + 1):
            for case, scenario, origin, trials in self.scenarios:
                if n > trials:
                    continue
                for cell in self.cells:
                    key = TrialKey(cell.name, case.name, scenario.id, n)
                    yield TrialPlan(key, case, scenario, origin, self.layout.trial_dir(key), cell)

    def __len__(self) -> int:
        return sum(trials for *_, trials in self.scenarios) * len(self.cells)


def plan_run(suite: Suite, cases: list[Case], options: RunOptions, layout: RunLayout) -> Planned:
    """The run's trials, with each scenario's workspace found (a repository cloned) once.
    An adaptive run plans the most trials it may take (`--max-trials`), not those it will."""
    origins: dict[int, Origin] = {}
    scenarios = []
    chosen = sorted(select_scenarios(cases, options.scenarios), key=lambda c: (c[0].name, c[1].id))
    rule = options.until_decided
    for case, scenario in chosen:
        if rule is not None:
            _check_adaptive(case, scenario)
        origin = kept_origin(suite, layout.root, scenario, origins)
        trials = rule.most if rule else options.trials or scenario.trials
        scenarios.append((case, scenario, origin, trials))
    return Planned(scenarios, suite.cells, layout)


def kept_origin(suite: Suite, root: Path, scenario: Scenario, origins: dict[int, Origin]) -> Origin:
    """The start state of a scenario's workspace, found (a repository cloned) and kept in
    the run's folder `root` once for all the scenarios that share it (`origins`)."""
    key = id(scenario.workspace)  # one object for every scenario that keeps its case's
    if key not in origins:
        origin = resolve_origin(scenario.workspace, suite.root, root / ".cache")
        origins[key] = keep_origin(origin, root, len(origins) + 1)
    return origins[key]


def _check_adaptive(case: Case, scenario: Scenario) -> None:
    """The rule decides pass / flaky / fail, not a majority or a mean: a scenario gated on
    one of those could stop before its gate is known, so it is refused."""
    aggregation = scenario.scoring.replica_aggregation
    if aggregation in (Aggregation.MAJORITY, Aggregation.MEAN):
        raise SuiteConfigError(
            f"{scenario_at(case, scenario)} is gated by replica_aggregation: "
            f"{aggregation.value}, which --until-decided cannot decide (it stops a scenario at "
            "its first differing outcome); run it with a fixed --trials, or gate it by `all` "
            "or `any`"
        )


def scenario_at(case: Case, scenario: Scenario) -> str:
    """Where a scenario is written, for an error: `cases/a.yaml:12: scenario 'x'`."""
    where = f"{case.path}:{scenario.line}" if scenario.line else str(case.path)
    return f"{where}: scenario '{scenario.id}'"


def stop_rules(planned: Planned, options: RunOptions) -> dict[tuple[str, str], StopRule]:
    """Each scenario's stop rule in an adaptive run (none in a fixed one): at least its
    trials (`--trials`, else its `trials:`) and never fewer than the rule's least, at most
    `--max-trials`."""
    rule = options.until_decided
    if rule is None:
        return {}
    return {
        (case.name, scenario.id): replace(
            rule, least=min(rule.most, max(rule.least, options.trials or scenario.trials))
        )
        for case, scenario, _, _ in planned.scenarios
    }


def select_scenarios(cases: list[Case], scenario_ids: list[str]) -> list[tuple[Case, Scenario]]:
    everything = [(case, scenario) for case in cases for scenario in case.scenarios]
    if not scenario_ids:
        return everything
    chosen = [(c, s) for c, s in everything if s.id in scenario_ids]
    missing = set(scenario_ids) - {s.id for _, s in chosen}
    if missing:
        known = ", ".join(sorted({s.id for _, s in everything}))
        raise SuiteConfigError(f"no scenario {', '.join(sorted(missing))} (scenarios: {known})")
    return chosen


def unfinished(planned: Planned) -> Iterator[TrialPlan]:
    """The trials of a resumed run that left no trial.json; what one left is cleared before
    it runs again."""
    for plan in planned:
        if not trial_exists(plan.folder):
            if plan.folder.exists():
                shutil.rmtree(plan.folder)  # an unfinished trial of a killed run starts over
            yield plan


def finished_before(planned: Planned) -> Iterator[Trial]:
    """The trials a resumed run had finished before it was stopped, read back."""
    for plan in planned:
        if trial_exists(plan.folder):
            yield read_trial(plan.folder)
