"""A run: plan the trials, execute them (on an executor), aggregate, and keep every artifact.

A run holds no more than its plan and, per scenario, what its summary line needs: each
finished trial is on disk (trial.json), added to measures.json and counted, then let go.
"""

from __future__ import annotations

import contextlib
import shutil
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from sounding._files import sweep_tmp
from sounding._words import counted
from sounding.checks import Ref, references
from sounding.judge import JudgeConfig, JudgeError, preflight
from sounding.runner._agent import RUNNING
from sounding.runner._collected import Collected
from sounding.runner._config import Suite, SuiteConfigError
from sounding.runner._executors import (
    Executor,
    check_executor,
    executor_config,
    start_executor,
)
from sounding.runner._plan import (
    Planned,
    RunOptions,
    finished_before,
    plan_run,
    scenario_at,
    stop_rules,
    unfinished,
)
from sounding.runner._pool import Listed, Plans, Retries, Work
from sounding.runner._schedule import Schedule
from sounding.runner._trial import NO_SPACE, TrialSettings, TrialsLost
from sounding.scoring import StopRule
from sounding.spec import Case, load_cases
from sounding.store import (
    RunLayout,
    RunPlan,
    RunSummary,
    Trial,
    TrialKey,
    allocate_run,
    read_plan,
    run_lock,
    write_plan,
)
from sounding.validators import AgreementError, blinding_notes, gate_judges

STOP_GRACE = 10.0  # seconds for running trials to notice an interruption


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
    # planned, already done; an adaptive run says it again after each trial, as its plan moves
    on_plan: Callable[[int, int], None] = lambda total, done: None
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
    executor = executor_config(suite, options)
    check_executor(executor, options, settings)
    cases = load_cases(suite.case_files(options.cases), suite_dir=suite.root)
    check_judge(suite, cases, settings)
    cases, unvalidated = gated(suite.root, cases, getattr(settings.judge, "config", None))
    notes = [*(n for case in cases for n in case.notes), *blinding_notes(cases, suite.cells)]
    for note in [*notes, *unvalidated]:
        hooks.on_note(note)
    layout = resumed[0] if resumed else _new_run(suite, held)
    try:
        planned = plan_run(suite, cases, options, layout)
        keys = (p.key for p in planned)
        write_plan(layout.root, _run_plan(suite, options, layout, keys, cases))
    except BaseException:  # a run stopped before its plan was written leaves no folder
        if resumed is None:
            shutil.rmtree(layout.root, ignore_errors=True)
        raise
    rules = stop_rules(planned, options)
    collected = Collected(cases, layout, options.until_decided, rules)
    try:
        plans, count = _pending(planned, rules, collected, resumed is not None)
        total = plans.expected if isinstance(plans, Schedule) else len(planned)
        hooks.on_plan(total, collected.all)
        # trials at once: `--parallel`, else `[defaults] parallel`, else the executor's own
        parallel = options.parallel or suite.config.defaults.parallel
        retries = Retries(options.retry_errors, partial(_set_aside, layout))
        work = Work(
            plans,
            count,
            settings,
            parallel,
            hooks.interrupted,
            options.max_cost,
            retries,
            cases,
            layout.root,
        )
        pool = start_executor(executor, work, held)
        _execute(pool, collected, _progress(hooks, plans, collected))
        if retries.done:
            hooks.on_note(_retried(retries))
        if pool.over_budget and not plans.settled:
            spent = f"the run spent {pool.spent:.4f} USD, over --max-cost {options.max_cost}"
            raise RunInterrupted(collected.ran, layout.root, spent)
        if isinstance(plans, Schedule):  # run.json: the trials it took, no longer the most
            write_plan(layout.root, _run_plan(suite, options, layout, plans.taken(), cases))
    except BaseException as stop:
        collected.discard()
        if isinstance(stop, KeyboardInterrupt):
            raise RunInterrupted(collected.ran, layout.root) from None
        if isinstance(stop, OSError) and stop.errno in NO_SPACE:
            why = f"no space left on the device writing {stop.filename or layout.root}"
            raise RunStopped(why, collected.ran, layout.root) from None
        if isinstance(stop, TrialsLost):
            raise RunStopped(str(stop), collected.ran, layout.root) from None
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


def _pending(
    planned: Planned,
    rules: dict[tuple[str, str], StopRule],
    collected: Collected,
    resumed: bool,
) -> tuple[Plans, int]:
    """What the pool takes its trials from, and the most it may give: the plan's trials in
    order, or an adaptive run's `Schedule`. A resumed run's finished trials are counted
    first (and tell the schedule where each scenario stands)."""
    schedule = _schedule(planned, rules) if rules else None
    for trial in finished_before(planned) if resumed else ():
        collected.add(trial)
        if schedule is not None:
            schedule.restore(trial)
    if schedule is not None:
        return schedule, schedule.most - collected.all
    pending = unfinished(planned) if resumed else iter(planned)  # a new run's is empty
    return Listed(pending, len(planned) - collected.all), len(planned) - collected.all


def _schedule(planned: Planned, rules: dict[tuple[str, str], StopRule]) -> Schedule:
    scenarios = [
        (case, scenario, origin, rules[(case.name, scenario.id)])
        for case, scenario, origin, _ in planned.scenarios
    ]
    return Schedule(scenarios, planned.cells, planned.layout)


def _progress(hooks: RunHooks, plans: Plans, collected: Collected) -> Callable[[Trial], None]:
    """What each finished trial tells the caller: the trial, and an adaptive run's new size."""
    if not isinstance(plans, Schedule):
        return hooks.on_trial

    def on_trial(trial: Trial) -> None:
        hooks.on_trial(trial)
        hooks.on_plan(plans.expected, collected.all)

    return on_trial


def _execute(pool: Executor, collected: Collected, on_trial: Callable[[Trial], None]) -> None:
    """Run the pending trials, each collected as it finishes (it is on disk by then). When
    the run stops early, no new trial starts and running agents are killed, unfinished."""
    RUNNING.stopping.clear()
    try:
        for trial in pool.outcomes():
            collected.add(trial, ran=True)
            on_trial(trial)
    except BaseException:
        RUNNING.stop_all()
        pool.stop(STOP_GRACE)
        for trial in pool.finished_meanwhile():  # kept on disk: said among those finished
            collected.add(trial, ran=True)
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
                raise SuiteConfigError(
                    f"{scenario_at(case, scenario)} simulates its user, which needs a "
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
    `--parallel` and the executor may change); a new run's own otherwise."""
    if options.resume is None:
        return options
    root = _resumed_root(suite, options.resume)
    stored = RunOptions.stored(read_plan(root).options)
    if options.until_decided is not None and options.until_decided != stored.until_decided:
        raise SuiteConfigError(
            f"run {options.resume} was started {_adaptive_words(stored)}: resume it without "
            "--until-decided and its settings, or start a new run"
        )
    if options.llm is not None and options.llm != (stored.llm or suite.config.capture.mode):
        raise SuiteConfigError(
            f"run {options.resume} was started with --llm {stored.llm or 'as [capture] mode'}: "
            "resume it without --llm, or start a new run"
        )
    parallel = options.parallel or stored.parallel
    return replace(
        stored,
        parallel=parallel,
        resume=options.resume,
        executor=options.executor,
        ray_address=options.ray_address,
    )


def _adaptive_words(options: RunOptions) -> str:
    rule = options.until_decided
    if rule is None:
        return "without --until-decided"
    return (
        f"with --until-decided --max-trials {rule.most} --confidence {rule.confidence} "
        f"--min-rate {rule.rate}"
    )


def _known_runs(suite: Suite) -> str:
    runs = sorted(p.parent.name for p in suite.results_dir.glob("*/run.json"))
    return ", ".join(runs[-5:]) or "none"


def _run_plan(
    suite: Suite,
    options: RunOptions,
    layout: RunLayout,
    trials: Iterable[TrialKey],
    cases: list[Case],
) -> RunPlan:
    """run.json: the run's choices and its trials (an adaptive run's most, until it ends)."""
    lower = {m for case in cases for v in case.validators for m in v.lower_is_better}
    return RunPlan(
        run_id=layout.run_id,
        suite=str(suite.root),
        options=options.as_dict(),
        reference_cell=suite.reference_cell,
        cells={cell.name: cell.delta.model_dump(exclude_defaults=True) for cell in suite.cells},
        lower_is_better=sorted(lower),
        trials=list(trials),
    )
