"""`sounding run` and `sounding audit`: the commands that run agents."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sounding._exit import ExitCode
from sounding._words import counted

if TYPE_CHECKING:
    from sounding.scoring import StopRule
from sounding.cli._common import console, escaped, usage_error, warn


@click.command()
@click.argument("suite_dir", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.argument("cases", nargs=-1)
@click.option("--scenario", "scenarios", multiple=True, help="Run only this scenario (repeatable).")
@click.option(
    "--trials", type=click.IntRange(min=1), help="Trials per scenario, for every scenario."
)
@click.option(
    "--parallel",
    type=click.IntRange(min=1),
    help="Trials at once (default: [defaults] parallel, else the cores).",
)
@click.option("--resume", "resume", metavar="RUN_ID", help="Finish an interrupted run.")
@click.option("--keep", is_flag=True, help="Keep server databases after each trial.")
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0, min_open=True),
    help="US dollars the trials may spend ([prices]); past it no new trial starts (resumable).",
)
@click.option(
    "--retry-errors",
    type=click.IntRange(min=0),
    default=0,
    metavar="N",
    help="Run again up to N trials of the run whose error was not the agent's (the harness, "
    "a service, the judge, the simulator); default 0.",
)
@click.option(
    "--until-decided",
    is_flag=True,
    help="Add trials to a scenario only while its verdict is open: flaky at its first "
    "differing outcome, else once agreeing trials clear the bound, else at --max-trials "
    "(docs/runner.md). --trials is then the least a scenario takes.",
)
@click.option(
    "--max-trials",
    type=click.IntRange(min=2),
    metavar="N",
    help="With --until-decided: the most trials a scenario takes in each cell (default 10).",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="With --until-decided: the confidence of the bound (default 0.95).",
)
@click.option(
    "--min-rate",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="With --until-decided: agreeing trials stop a scenario once they show, at "
    "--confidence, that its outcome happens at least this often (default 0.7).",
)
@click.option(
    "--llm",
    type=click.Choice(["live", "record", "replay"]),
    help="The agent's model calls: passed on (live), and kept as cassettes (record), or "
    "answered from the cassettes with no model (replay). Default: [capture] mode.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    help="Where the trials run: threads here (local) or Ray tasks (ray; docs/scale.md). "
    "Default: [executor] kind, else local.",
)
@click.option(
    "--ray-address",
    metavar="ADDRESS",
    help="With --executor ray: the Ray cluster to run on (default: [executor] address, else "
    "RAY_ADDRESS, else a Ray instance started for the run).",
)
def run(
    suite_dir: Path,
    cases: tuple[str, ...],
    scenarios: tuple[str, ...],
    trials: int | None,
    parallel: int | None,
    resume: str | None,
    keep: bool,
    llm: str | None,
    max_cost: float | None,
    retry_errors: int,
    until_decided: bool,
    max_trials: int | None,
    confidence: float | None,
    min_rate: float | None,
    executor: str | None,
    ray_address: str | None,
) -> None:
    """Run every scenario of SUITE_DIR (or the named CASES) several times and give verdicts."""
    from sounding._process import ending_orphans
    from sounding.report._terminal import TrialProgress, print_summary
    from sounding.runner import (
        RunHooks,
        RunInterrupted,
        RunOptions,
        RunSetupError,
        RunStopped,
        SuiteConfigError,
        WorkspaceError,
        load_suite,
        prepare_run,
        run_suite,
    )
    from sounding.spec import SpecError
    from sounding.store import ResultsError

    rule = _stop_rule(until_decided, trials, max_trials, confidence, min_rate)
    options = RunOptions(
        list(cases),
        list(scenarios),
        trials,
        parallel,
        resume,
        keep,
        llm,
        max_cost,
        retry_errors,
        until_decided=rule,
        executor=executor,
        ray_address=ray_address,
    )
    started = time.monotonic()
    try:
        suite = load_suite(suite_dir)
        settings = prepare_run(suite, options)
        progress = TrialProgress(console(stderr=True))
        with progress.running(), _ctrl_c() as interrupted, ending_orphans():
            hooks = RunHooks(progress.finished, progress.planned, warn, interrupted)
            result = run_suite(suite, options, settings, hooks)
    except (SuiteConfigError, SpecError, RunSetupError, WorkspaceError, ResultsError) as exc:
        usage_error(str(exc))
    except RunStopped as stop:
        where = stop.root.name if stop.root else "RUN_ID"
        console(stderr=True).print(
            f"[yellow]{escaped(stop.why)}[/]: {counted(stop.finished, 'trial')} finished and "
            f"kept in {escaped(str(stop.root))}; finish the run with: "
            f"sounding run {escaped(str(suite_dir))} --resume {escaped(where)}"
        )
        code = ExitCode.INTERRUPTED if isinstance(stop, RunInterrupted) else ExitCode.INTERNAL
        raise SystemExit(code) from None
    print_summary(console(), result.summary, result.layout.root, time.monotonic() - started)
    if len(suite.cells) > 1:
        _print_cells(result.layout.root)
    raise SystemExit(result.exit_code)


@click.command()
@click.argument("suite_dir", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.argument("cases", nargs=-1)
@click.option(
    "--scenario", "scenarios", multiple=True, help="Audit only this scenario (repeatable)."
)
@click.option(
    "--parallel",
    type=click.IntRange(min=1),
    help="Trials of one stand-in at once (default: [defaults] parallel, else the cores).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the audit (sounding.audit/1).")
def audit(
    suite_dir: Path,
    cases: tuple[str, ...],
    scenarios: tuple[str, ...],
    parallel: int | None,
    as_json: bool,
) -> None:
    """Prove that each scenario of SUITE_DIR (or the named CASES) can tell success from
    failure: its reference must pass, the null agent (which does nothing) and each broken
    variant must fail, one trial each. Exit 0 when every scenario is OK, 1 when one is
    WEAK, BROKEN or UNPROVEN, 3 when a stand-in erred and nothing else was found."""
    from sounding._process import ending_orphans
    from sounding.report._audit import print_audit
    from sounding.report._terminal import TrialProgress
    from sounding.runner import (
        AuditOptions,
        RunHooks,
        RunSetupError,
        SuiteConfigError,
        WorkspaceError,
        audit_suite,
        load_suite,
    )
    from sounding.spec import SpecError
    from sounding.store import ResultsError

    started = time.monotonic()
    try:
        suite = load_suite(suite_dir)
        progress = TrialProgress(console(stderr=True))
        with progress.running(), _ctrl_c() as interrupted, ending_orphans():
            hooks = RunHooks(progress.finished, progress.planned, warn, interrupted)
            done = audit_suite(suite, AuditOptions(list(cases), list(scenarios), parallel), hooks)
    except (SuiteConfigError, SpecError, RunSetupError, WorkspaceError, ResultsError) as exc:
        usage_error(str(exc))
    if as_json:
        click.echo(json.dumps(done.document(), indent=1))
    else:
        print_audit(console(), done, time.monotonic() - started)
    raise SystemExit(done.exit_code)


def _stop_rule(
    until_decided: bool,
    trials: int | None,
    max_trials: int | None,
    confidence: float | None,
    min_rate: float | None,
) -> StopRule | None:
    """The rule of `--until-decided`, from its settings (each refused without it)."""
    from sounding.scoring import StopRule

    given = [value is not None for value in (max_trials, confidence, min_rate)]
    if not until_decided:
        if any(given):
            usage_error("--max-trials, --confidence and --min-rate go with --until-decided")
        return None
    default = StopRule()
    most = max_trials or default.most
    if trials is not None and trials > most:
        usage_error(
            f"--trials {trials} is the least trials of --until-decided, over its most "
            f"(--max-trials {most}): lower it, or raise --max-trials"
        )
    return StopRule(
        most=most,
        confidence=confidence or default.confidence,
        rate=min_rate or default.rate,
    )


@contextmanager
def _ctrl_c() -> Iterator[Callable[[], bool]]:
    """While a run runs, a first Ctrl-C asks it to stop (it then stops at once, at a point
    of its choosing, and keeps what finished); a second one interrupts it where it is."""
    pressed: list[bool] = []

    def on_sigint(signum: int, frame: object) -> None:
        if pressed:
            raise KeyboardInterrupt
        pressed.append(True)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield lambda: bool(pressed)
    finally:
        signal.signal(signal.SIGINT, previous)


def _print_cells(run_dir: Path) -> None:
    """For a run of several cells: the pass-rate gaps against the reference that hold."""
    from sounding.report._cells import cells_report
    from sounding.store import load_results

    report = cells_report(load_results(run_dir), metrics=["passed"])
    if report is not None:
        click.echo("\n".join(["", *report.lines()]))
