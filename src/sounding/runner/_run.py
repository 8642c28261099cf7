"""A run: plan the trials, execute them in parallel, aggregate, and keep every artifact.

A run holds no more than its plan and, per scenario, what its summary line needs: each
finished trial is on disk (trial.json), added to measures.json and counted, then let go.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from sounding._files import sweep_tmp
from sounding._words import counted
from sounding.checks import Ref, references
from sounding.judge import JudgeConfig, JudgeError, preflight
from sounding.runner._agent import RUNNING
from sounding.runner._cells import Cell
from sounding.runner._config import Suite, SuiteConfigError
from sounding.runner._pool import Retries, TrialPool
from sounding.runner._trial import NO_SPACE, TrialPlan, TrialSettings
from sounding.runner._workspace import Origin, keep_origin, resolve_origin
from sounding.scoring import Tally, TrialVerdict
from sounding.spec import Case, Scenario, load_cases
from sounding.store import (
    Measures,
    RunLayout,
    RunPlan,
    RunSummary,
    ScenarioSummary,
    Trial,
    TrialKey,
    allocate_run,
    read_plan,
    read_trial,
    run_lock,
    trial_exists,
    write_plan,
    write_summary,
)
from sounding.validators import AgreementError, blinding_notes, gate_judges

_STOP_GRACE = 10.0  # seconds for running trials to notice an interruption


class RunStopped(Exception):
    """The run stopped before its end; finished trials are kept and `--resume` runs the
    rest once the cause is gone (no space left on the device, say)."""

    def __init__(self, why: str, finished: int, root: Path | None = None) -> None:
        super().__init__(why)
        self.why, self.finished, self.root = why, finished, root


class RunInterrupted(RunStopped):
    """Ctrl-C, or a run that spent its `--max-cost`: the run stopped as asked."""

    def __init__(self, finished: int, root: Path | None = None, why: str = "interrupted") -> None:
        super().__init__(why, finished, root)


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

    def as_dict(self) -> dict[str, Any]:
        """As run.json keeps them: `--resume` itself is not a choice of the run."""
        return {key: value for key, value in asdict(self).items() if key != "resume"}


@dataclass(frozen=True)
class RunResult:
    layout: RunLayout
    summary: RunSummary
    ran: int  # trials run now (a resumed run's earlier trials are not counted)

    @property
    def exit_code(self) -> int:
        return self.summary.exit_code


@dataclass(frozen=True)
class RunHooks:
    """How a caller follows a run: each finished trial, the plan's size, notes to show, and
    whether the user asked it to stop (read between trials' outcomes)."""

    on_trial: Callable[[Trial], None] = lambda trial: None
    on_plan: Callable[[int, int], None] = lambda total, done: None  # planned, already done
    on_note: Callable[[str], None] = lambda note: None
    interrupted: Callable[[], bool] = lambda: False


def run_suite(
    suite: Suite, options: RunOptions, settings: TrialSettings, hooks: RunHooks | None = None
) -> RunResult:
    """Plan, execute and aggregate a run. Finished trials of a resumed run never run again.

    The run stops when `hooks.interrupted()` says so or on a KeyboardInterrupt
    (RunInterrupted), or when the device is full (RunStopped); either way `--resume`
    finishes it. The run's folder is locked while it runs (one writer)."""
    with contextlib.ExitStack() as held:
        resumed = _resumed(suite, options, held) if options.resume else None
        return _run(
            suite, resumed[1] if resumed else options, settings, hooks or RunHooks(), resumed, held
        )


def _run(
    suite: Suite,
    options: RunOptions,
    settings: TrialSettings,
    hooks: RunHooks,
    resumed: tuple[RunLayout, RunOptions] | None,
    held: contextlib.ExitStack,
) -> RunResult:
    cases = load_cases(suite.case_files(options.cases), suite_dir=suite.root)
    check_judge(suite, cases, settings)
    cases, unvalidated = gated(suite.root, cases, getattr(settings.judge, "config", None))
    notes = [*(n for case in cases for n in case.notes), *blinding_notes(cases, suite.cells)]
    for note in [*notes, *unvalidated]:
        hooks.on_note(note)
    layout = resumed[0] if resumed else _new_run(suite, held)
    try:
        planned = _plan(suite, cases, options, layout)
        write_plan(layout.root, _run_plan(suite, options, layout, planned, cases))
    except BaseException:  # a run stopped before its plan was written leaves no folder
        if resumed is None:
            shutil.rmtree(layout.root, ignore_errors=True)
        raise
    collected = Collected(cases, layout)
    try:
        done = 0
        for trial in _finished_before(planned) if resumed else ():
            collected.add(trial)
            done += 1
        hooks.on_plan(len(planned), done)
        pending = _unfinished(planned) if resumed else iter(planned)  # a new run's is empty
        # trials at once: `--parallel`, else `[defaults] parallel`, else the cores
        parallel = options.parallel or suite.config.defaults.parallel or os.cpu_count() or 1
        count = len(planned) - done
        retries = Retries(options.retry_errors, partial(_set_aside, layout))
        pool = TrialPool(
            pending, count, settings, parallel, hooks.interrupted, options.max_cost, retries
        )
        _execute(pool, collected, hooks.on_trial)
        if retries.done:
            hooks.on_note(_retried(retries))
        if pool.over_budget and pool.left > 0:
            spent = f"the run spent {pool.spent:.4f} USD, over --max-cost {options.max_cost}"
            raise RunInterrupted(collected.ran, layout.root, spent)
    except BaseException as stop:
        collected.discard()
        if isinstance(stop, KeyboardInterrupt):
            raise RunInterrupted(collected.ran, layout.root) from None
        if isinstance(stop, OSError) and stop.errno in NO_SPACE:
            why = f"no space left on the device writing {stop.filename or layout.root}"
            raise RunStopped(why, collected.ran, layout.root) from None
        raise
    return RunResult(layout, collected.close(), collected.ran)


def _set_aside(layout: RunLayout, trial: Trial, folder: Path) -> None:
    """Keep the folder of a try that erred, out of the way of the trial's next one."""
    attempt = 1
    while (aside := layout.retried_dir(trial.key, attempt)).exists():
        attempt += 1
    aside.parent.mkdir(parents=True, exist_ok=True)
    folder.rename(aside)


def _retried(retries: Retries) -> str:
    kinds = Counter(str(trial.error_kind) for trial in retries.done)
    said = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    return (
        f"{counted(len(retries.done), 'trial')} ran again after an error that was not the "
        f"agent's ({said}); the tries that erred are kept under retried/"
    )


def _execute(pool: TrialPool, collected: Collected, on_trial: Callable[[Trial], None]) -> None:
    """Run the pending trials, each collected as it finishes (it is on disk by then). When
    the run stops early, no new trial starts and running agents are killed, unfinished."""
    RUNNING.stopping.clear()
    try:
        for trial in pool.outcomes():
            collected.add(trial, ran=True)
            on_trial(trial)
    except BaseException:
        RUNNING.stop_all()
        pool.stop(_STOP_GRACE)
        raise


def check_judge(suite: Suite, cases: list[Case], settings: TrialSettings) -> None:
    """Before any trial: a case that needs the judge fails when no judge is configured, and
    a check's or validator's own judge `model:` may not be a model under test either."""
    models: set[str | None] = set()
    for case in cases:
        for validator in case.validators:
            if validator.mode == "judge" and settings.judge is None:
                raise SuiteConfigError(
                    f"{case.path}: a `mode: judge` validator needs a judge: add a [judge] "
                    "table to sounding.toml (see docs/judge.md)"
                )
            models.add(getattr(validator, "model", None))
        for scenario in case.scenarios:
            if scenario.simulate is not None and settings.simulator is None:
                where = f"{case.path}:{scenario.line}" if scenario.line else str(case.path)
                raise SuiteConfigError(
                    f"{where}: scenario '{scenario.id}' simulates its user, which needs a "
                    "[simulator] table in sounding.toml (provider, model; see docs/cases.md)"
                )
            for invariant in scenario.invariants:
                if invariant.check.check_type.needs_judge and settings.judge is None:
                    raise SuiteConfigError(
                        f"{case.path}: scenario '{scenario.id}', invariant '{invariant.name}' "
                        "needs a judge: add a [judge] table to sounding.toml (see docs/judge.md)"
                    )
                named = references(invariant.check.params)
                models.update(found.value for found in named if found.ref is Ref.JUDGE_MODEL)
    config = getattr(settings.judge, "config", None)
    judges = {model for model in models if model}
    try:
        if config is not None:
            preflight(config, models_under_test=suite.models_under_test, judge_models=judges)
    except JudgeError as exc:
        raise SuiteConfigError(str(exc)) from None


def gated(
    suite_dir: Path, cases: list[Case], config: JudgeConfig | None
) -> tuple[list[Case], list[str]]:
    """The cases with the judge checks people have not validated marked, and a note for
    each (`[judge] min_agreement`, docs/judge.md)."""
    try:
        return gate_judges(cases, suite_dir, config)
    except AgreementError as exc:
        raise SuiteConfigError(str(exc)) from None


def _new_run(suite: Suite, held: contextlib.ExitStack) -> RunLayout:
    """A fresh run folder, held by this process while it runs."""
    layout = allocate_run(suite.results_dir)
    held.enter_context(run_lock(layout.root))
    return layout


def _resumed(
    suite: Suite, options: RunOptions, held: contextlib.ExitStack
) -> tuple[RunLayout, RunOptions]:
    """The folder of the run `--resume` names, held by this process (a second one gets an
    error naming the first), and the options it was started with."""
    assert options.resume is not None
    root = _resumed_root(suite, options.resume)
    held.enter_context(run_lock(root))
    plan = read_plan(root)
    sweep_tmp(root)
    return plan.layout(root), resumed_options(suite, options)


def _resumed_root(suite: Suite, run_id: str) -> Path:
    root = suite.results_dir / run_id
    if not (root / "run.json").is_file():
        raise SuiteConfigError(
            f"nothing to resume: {root} holds no run.json (runs: {_known_runs(suite)})"
        )
    return root


def resumed_options(suite: Suite, options: RunOptions) -> RunOptions:
    """The options a run goes on with: for `--resume`, those it was started with (only
    `--parallel` may change); a new run's own otherwise."""
    if options.resume is None:
        return options
    root = _resumed_root(suite, options.resume)
    stored = RunOptions(**read_plan(root).options)
    if options.llm is not None and options.llm != (stored.llm or suite.config.capture.mode):
        raise SuiteConfigError(
            f"run {options.resume} was started with --llm {stored.llm or 'as [capture] mode'}: "
            "resume it without --llm, or start a new run"
        )
    parallel = options.parallel or stored.parallel
    return replace(stored, parallel=parallel, resume=options.resume)


def _known_runs(suite: Suite) -> str:
    runs = sorted(p.parent.name for p in suite.results_dir.glob("*/run.json"))
    return ", ".join(runs[-5:]) or "none"


@dataclass(frozen=True)
class _Planned:
    """The trials of a run, made one at a time in run order, so that a run of many trials
    keeps none of them in memory: trial n of every scenario in every cell before trial
    n + 1 of any, scenarios by case and id, cells in their order."""

    scenarios: list[tuple[Case, Scenario, Origin, int]]  # with its number of trials
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


def _plan(suite: Suite, cases: list[Case], options: RunOptions, layout: RunLayout) -> _Planned:
    """The run's trials, with each scenario's workspace found (a repository cloned) once."""
    cache = layout.root / ".cache"
    origins: dict[int, Origin] = {}
    scenarios = []
    chosen = sorted(select_scenarios(cases, options.scenarios), key=lambda c: (c[0].name, c[1].id))
    for case, scenario in chosen:
        key = id(scenario.workspace)
        if key not in origins:
            origin = resolve_origin(scenario.workspace, suite.root, cache)
            origins[key] = keep_origin(origin, layout.root, len(origins) + 1)
        scenarios.append((case, scenario, origins[key], options.trials or scenario.trials))
    return _Planned(scenarios, suite.cells, layout)


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


def _unfinished(planned: _Planned) -> Iterator[TrialPlan]:
    """The trials of a resumed run that left no trial.json; what one left is cleared before
    it runs again."""
    for plan in planned:
        if not trial_exists(plan.folder):
            if plan.folder.exists():
                shutil.rmtree(plan.folder)  # an unfinished trial of a killed run starts over
            yield plan


def _finished_before(planned: _Planned) -> Iterator[Trial]:
    """The trials a resumed run had finished before it was stopped, read back."""
    for plan in planned:
        if trial_exists(plan.folder):
            yield read_trial(plan.folder)


@dataclass
class _Line:
    """One cell × scenario over the trials finished so far: its tally, its first failure
    (by trial number) and the time its trials took. With no failure, the first failed
    unvalidated judge check stands in its place, so the line says what did not count."""

    tally: Tally = field(default_factory=Tally)
    failure: tuple[int, str] | None = None
    unvalidated: tuple[int, str] | None = None
    duration_ms: float = 0.0
    error_kinds: Counter[str] = field(default_factory=Counter)

    def add(self, trial: Trial) -> None:
        self.tally.add(trial.verdict, trial.score.composite if trial.score else None)
        self.duration_ms += trial.duration_ms
        if trial.error_kind is not None:
            self.error_kinds[trial.error_kind] += 1
        if trial.verdict is not TrialVerdict.PASS:
            self.failure = _first(self.failure, trial.trial, trial.reason)
        for judge in trial.score.unvalidated[:1] if trial.score else []:
            self.unvalidated = _first(self.unvalidated, trial.trial, judge.describe())

    @property
    def first_failure(self) -> str:
        found = self.failure or self.unvalidated
        return found[1] if found else ""


def _first(known: tuple[int, str] | None, trial: int, said: str) -> tuple[int, str]:
    """What the lowest-numbered trial said."""
    return known if known is not None and known[0] <= trial else (trial, said)


class Collected:
    """The run's finished trials as they come: each added to measures.json and counted on
    its scenario's line, for the summary; nothing more of them is kept."""

    def __init__(self, cases: list[Case], layout: RunLayout) -> None:
        self._scenarios = {(c.name, s.id): s for c in cases for s in c.scenarios}
        self._order = {place: i for i, place in enumerate(self._scenarios)}
        self._lines: dict[tuple[str, str, str], _Line] = {}
        self._measures = Measures(layout.root, layout.run_id)
        self._run_id = layout.run_id
        self.ran = 0  # trials run now (not those a resumed run had finished before)

    def add(self, trial: Trial, *, ran: bool = False) -> None:
        self._lines.setdefault((trial.cell, trial.case, trial.scenario), _Line()).add(trial)
        self._measures.add(trial)
        self.ran += ran

    def close(self) -> RunSummary:
        """measures.json in place, and summary.json: one line per cell × scenario, in
        case-file order."""
        self._measures.close()
        keys = sorted(self._lines, key=lambda k: (k[0], self._order.get(k[1:], 0)))
        summary = RunSummary(run_id=self._run_id, scenarios=[self._summary(k) for k in keys])
        write_summary(self._measures.root, summary)
        return summary

    def discard(self) -> None:
        self._measures.discard()

    def _summary(self, key: tuple[str, str, str]) -> ScenarioSummary:
        cell, case, scenario_id = key
        scoring = self._scenarios[(case, scenario_id)].scoring
        line = self._lines[key]
        result = line.tally.result(
            aggregation=scoring.replica_aggregation, threshold=scoring.pass_threshold, k=scoring.k
        )
        return ScenarioSummary(
            **result.model_dump(),
            cell=cell,
            case=case,
            scenario=scenario_id,
            first_failure=line.first_failure,
            duration_ms=round(line.duration_ms, 3),
            error_kinds=dict(sorted(line.error_kinds.items())),
        )


def _run_plan(
    suite: Suite, options: RunOptions, layout: RunLayout, planned: _Planned, cases: list[Case]
) -> RunPlan:
    lower = {m for case in cases for v in case.validators for m in v.lower_is_better}
    return RunPlan(
        run_id=layout.run_id,
        suite=str(suite.root),
        options=options.as_dict(),
        reference_cell=suite.reference_cell,
        cells={cell.name: cell.delta.model_dump(exclude_defaults=True) for cell in suite.cells},
        lower_is_better=sorted(lower),
        trials=[plan.key for plan in planned],
    )
