"""The command line: parses, calls, prints. Exit codes are `sounding._exit.ExitCode`.

Each command imports what it uses when it runs: `sounding --help` loads click and the
package's core (the record formats `score --format` offers), no runner or renderer.
"""

from __future__ import annotations

import errno
import json
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from sounding._exit import ExitCode
from sounding._words import counted
from sounding.record import RECORD_FORMATS

if TYPE_CHECKING:
    from rich.console import Console

    from sounding.runner import BulkOptions
    from sounding.scoring import BulkScore, StopRule
    from sounding.spec import Case, Scenario


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _usage_error(message: str) -> NoReturn:
    _console(stderr=True).print(f"[red]error:[/] {_escape(message)}")
    raise SystemExit(ExitCode.USAGE)


class _FilePath(click.Path):
    """A path given to an option; a value that starts with `--` is the next option, taken
    as the path because the path was left out (`report RUN --markdown --json`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.startswith("--") and param is not None:
            option = param.opts[0]
            raise click.UsageError(
                f"{option} takes a file name, not the option '{value}'; write {option} FILE "
                "(a file whose name starts with -- is written ./--name)",
                ctx,
            )
        return super().convert(value, param, ctx)


class _Commands(click.Group):
    """The command group: what no command handled still ends with a documented code. A
    Ctrl-C anywhere exits 130; a full device, or a fault of sounding itself, exits 4 (never
    1, which says a scenario failed), a fault with its traceback, to report."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            _console(stderr=True).print("[yellow]interrupted[/]")
            raise SystemExit(ExitCode.INTERRUPTED) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                _internal_error()
            _console(stderr=True).print(
                f"[red]error:[/] no space left on the device writing {_escape(str(exc.filename))}"
                ": free some space and run the command again"
            )
            raise SystemExit(ExitCode.INTERNAL) from None
        except Exception:
            _internal_error()


def _internal_error() -> NoReturn:
    """A fault of sounding itself: its traceback on stderr, to report, and exit 4."""
    import traceback

    traceback.print_exc()
    _console(stderr=True).print(
        "[red]internal error of sounding[/] (the traceback above says where): please report "
        "it with the command you ran; what a run finished before it is kept"
    )
    raise SystemExit(ExitCode.INTERNAL)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sounding")
def main() -> None:
    """sounding: does my agent work, reliably?

    \b
    Exit codes: 0 everything passed; 1 a scenario or trial failed (or was flaky),
    `compare` established a regression, or `audit` found a scenario not OK;
    2 usage error or a bad suite / case / record file; 3 an error prevented a
    verdict (or `compare` withheld it); 4 sounding could not do its own work (no
    space left on the device, or an internal error: please report it);
    130 interrupted (finish a run with `sounding run SUITE --resume RUN_ID`).
    """


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
def validate(paths: tuple[Path, ...]) -> None:
    """Check case files (or every case of a suite folder) without running or scoring."""
    from sounding.runner import suite_of
    from sounding.spec import SpecError, load_cases

    cases: list[Case] = []
    for path in paths:
        files = _case_files(path)
        if not files:
            _usage_error(f"no case files (*.yaml, *.yml, *.toml) under {path}")
        try:  # inside a suite, fixtures, seeds and graders are checked to exist as well
            cases.extend(load_cases(files, suite_dir=suite_of(files[0])))
        except SpecError as exc:
            _usage_error(str(exc))
    for note in (note for case in cases for note in case.notes):
        _note(note)
    scenarios = sum(len(case.scenarios) for case in cases)
    _console().print(f"ok: {counted(len(cases), 'case file')}, {counted(scenarios, 'scenario')}")


def _case_files(path: Path) -> list[Path]:
    from sounding.spec import case_files

    if path.is_file():
        return [path]
    return case_files(path / "cases" if (path / "cases").is_dir() else path)


class _BulkRenderings(click.Command):
    """`score`: a `--name FILE` option per renderer of records scored in bulk (`--junit`,
    `--html`), added when the command is first parsed or shown."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        from sounding.report import bulk_renderers

        given = {param.name for param in self.params}
        for renderer in bulk_renderers:
            if renderer.name not in given:
                help = f"With --records: {renderer.help[0].lower()}{renderer.help[1:]}"
                option = click.Option([f"--{renderer.name}"], type=_OUT, help=help)
                self.params.append(option)
        return super().get_params(ctx)


@main.command(cls=_BulkRenderings)
@click.argument("target", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--records",
    "records_path",
    type=_FilePath(exists=True, path_type=Path),
    help="Many records: a folder of them, a JSONL file of one record a line, or an OTLP "
    "export of many traces; each is matched to a scenario and scored.",
)
@click.option(
    "--match-field",
    default="scenario",
    show_default=True,
    help="With --records: the field naming a record's scenario (its metadata, or the root "
    "span's or resource's attribute of a trace).",
)
@click.option(
    "--min-pass-rate",
    type=click.FloatRange(0.0, 1.0),
    default=1.0,
    show_default=True,
    help="With --records: exit 1 when a scenario's pass rate (the point estimate) is below.",
)
@click.option(
    "--record",
    "record_path",
    type=_FilePath(exists=True, path_type=Path),
    help="The run record: a JSONL trace, OpenAI or Anthropic messages, OTLP/JSON, a trial.json.",
)
@click.option(
    "--format",
    "record_format",
    type=click.Choice(RECORD_FORMATS),
    help="The record's format; detected when omitted.",
)
@click.option(
    "--workspace",
    type=_FilePath(exists=True, file_okay=False, path_type=Path),
    help="The final workspace, for file and command checks.",
)
@click.option("--scenario", "scenario_id", help="The scenario of the case file to score against.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the versioned machine-readable result."
)
@click.option("--trace-id", help="The trace to score, when an OpenTelemetry export holds several.")
@click.option("--rejudge", is_flag=True, help="Ask the judge again instead of reading its cache.")
@click.option(
    "--write",
    is_flag=True,
    help="For a results folder: store the re-scored run as a new run folder beside it.",
)
def score(
    target: Path,
    records_path: Path | None,
    match_field: str,
    min_pass_rate: float,
    record_path: Path | None,
    record_format: str | None,
    workspace: Path | None,
    scenario_id: str | None,
    as_json: bool,
    trace_id: str | None,
    rejudge: bool,
    write: bool,
    **outputs: Path | None,
) -> None:
    """Score a record against a case file (TARGET is a case file), many records with
    --records, or re-score a stored run (TARGET is a results folder) by today's case files
    without running anything.

    The suite's judge (`[judge]` of the sounding.toml above the case file) judges."""
    if records_path is not None:
        if record_path is not None or trace_id is not None or workspace is not None or write:
            _usage_error(
                "--records scores many records: leave out --record, --trace-id, --workspace "
                "and --write (each record of an OTLP export is scored, a bare record has no "
                "workspace)"
            )
        from sounding.runner import BulkOptions

        options = BulkOptions(scenario_id, match_field, min_pass_rate, record_format, rejudge)
        raise SystemExit(_score_many(target, records_path, options, as_json, outputs))
    if any(outputs.values()):
        _usage_error("--junit and --html report records scored in bulk: give --records PATH")
    if target.is_dir():
        raise SystemExit(_rescore(target, as_json=as_json, rejudge=rejudge, write=write))
    if write:
        _usage_error("--write stores a re-scored run: give a results folder, not a case file")
    from sounding.record import RecordError
    from sounding.report._score import print_score, score_document
    from sounding.runner import RunSetupError, SuiteConfigError, score_record
    from sounding.spec import SpecError, load_case
    from sounding.store import ResultsError

    if record_path is None:
        _usage_error("score CASE_FILE needs --record RECORD (the run record to score)")
    try:
        case = load_case(target)
        scenario = _pick_scenario(case, scenario_id)
        result = score_record(
            target,
            scenario,
            record_path,
            record_format=record_format,
            trace_id=trace_id,
            workspace=workspace,
            rejudge=rejudge,
        )
    except RecordError as exc:
        if exc.needs == "trace_id":
            exc = exc.with_fix("name one with --trace-id ID, or export a single trace")
        _usage_error(str(exc))
    except (SpecError, ResultsError, SuiteConfigError, RunSetupError) as exc:
        _usage_error(str(exc))
    if as_json:
        click.echo(json.dumps(score_document(case, scenario, result), indent=1))
    else:
        print_score(_console(), case, scenario, result)
    codes = {"pass": ExitCode.PASS, "fail": ExitCode.FAIL}
    raise SystemExit(codes.get(result.verdict.value, ExitCode.ERROR))


def _score_many(
    target: Path,
    records: Path,
    options: BulkOptions,
    as_json: bool,
    outputs: dict[str, Path | None],
) -> ExitCode:
    """`score CASE --records PATH`: 2 when a record could not be read or none was scored,
    else 1 when a scenario's pass rate is under --min-pass-rate, 3 when every record of a
    scenario was left without a verdict, 0 otherwise."""
    from sounding.report import bulk_document, bulk_renderers, print_bulk
    from sounding.runner import RunSetupError, SuiteConfigError, score_records
    from sounding.spec import SpecError, load_case

    if target.is_dir():
        _usage_error("--records scores records against a case file: give one as TARGET")
    try:
        case = load_case(target)
        if options.scenario is not None:
            _pick_scenario(case, options.scenario)
        bulk = score_records(case, records, options)
    except (SpecError, SuiteConfigError, RunSetupError) as exc:
        _usage_error(str(exc))
    for renderer in bulk_renderers:
        path = outputs.get(renderer.name)
        if path is not None:
            _write_output(path, renderer.render(bulk))
            _console(stderr=as_json).print(f"wrote {renderer.title}: {_escape(str(path))}")
    if as_json:
        click.echo(json.dumps(bulk_document(bulk), indent=1))
    else:
        print_bulk(_console(), bulk)
    return _bulk_code(bulk)


def _bulk_code(bulk: BulkScore) -> ExitCode:
    if bulk.malformed or not bulk.scored:
        why = "records could not be read" if bulk.malformed else "no record matched a scenario"
        _console(stderr=True).print(f"[red]error:[/] {why} (listed above): fix them, or match them")
        return ExitCode.USAGE
    if bulk.below():
        return ExitCode.FAIL
    return ExitCode.ERROR if bulk.undecided() else ExitCode.PASS


def _write_output(path: Path, text: str) -> None:
    from sounding._files import write_text

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, text)
    except OSError as exc:
        _usage_error(
            f"{path}: cannot write it ({exc.strerror or exc}): choose a folder you can write to"
        )


def _pick_scenario(case: Case, scenario_id: str | None) -> Scenario:
    if scenario_id is not None:
        try:
            return case.scenario(scenario_id)
        except KeyError as exc:
            _usage_error(str(exc.args[0]))
    if len(case.scenarios) == 1:
        return case.scenarios[0]
    known = ", ".join(s.id for s in case.scenarios)
    _usage_error(
        f"{case.path} has {len(case.scenarios)} scenarios: name one with --scenario ({known})"
    )


def _rescore(run_dir: Path, *, as_json: bool, rejudge: bool, write: bool) -> ExitCode:
    from sounding.runner import RunSetupError, SuiteConfigError, judge_for_run, rescore_run
    from sounding.scoring import TrialVerdict
    from sounding.spec import SpecError
    from sounding.store import ResultsError

    try:
        judge = judge_for_run(run_dir, rejudge=rejudge)
        found = rescore_run(run_dir, judge=judge, write=write)
    except (ResultsError, SpecError, SuiteConfigError, RunSetupError) as exc:
        _usage_error(str(exc))
    if as_json:
        click.echo(json.dumps(found.document(), indent=1))
    else:
        for change in found.changes:
            click.echo(f"{change.label}: {change.before} → {change.after}  ({change.check})")
        changed = counted(len(found.changes), "verdict")
        click.echo(f"re-scored {counted(found.trials, 'trial')}: {changed} changed")
        if found.written is not None:
            click.echo(f"wrote the re-scored run: {found.written}")
    if found.verdicts[TrialVerdict.ERROR]:
        return ExitCode.ERROR
    return ExitCode.FAIL if found.verdicts[TrialVerdict.FAIL] else ExitCode.PASS


@main.command()
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
        progress = TrialProgress(_console(stderr=True))
        with progress.running(), _ctrl_c() as interrupted, ending_orphans():
            hooks = RunHooks(progress.finished, progress.planned, _note, interrupted)
            result = run_suite(suite, options, settings, hooks)
    except (SuiteConfigError, SpecError, RunSetupError, WorkspaceError, ResultsError) as exc:
        _usage_error(str(exc))
    except RunStopped as stop:
        where = stop.root.name if stop.root else "RUN_ID"
        _console(stderr=True).print(
            f"[yellow]{_escape(stop.why)}[/]: {counted(stop.finished, 'trial')} finished and "
            f"kept in {_escape(str(stop.root))}; finish the run with: "
            f"sounding run {_escape(str(suite_dir))} --resume {_escape(where)}"
        )
        code = ExitCode.INTERRUPTED if isinstance(stop, RunInterrupted) else ExitCode.INTERNAL
        raise SystemExit(code) from None
    print_summary(_console(), result.summary, result.layout.root, time.monotonic() - started)
    if len(suite.cells) > 1:
        _print_cells(result.layout.root)
    raise SystemExit(result.exit_code)


@main.command()
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
        progress = TrialProgress(_console(stderr=True))
        with progress.running(), _ctrl_c() as interrupted, ending_orphans():
            hooks = RunHooks(progress.finished, progress.planned, _note, interrupted)
            done = audit_suite(suite, AuditOptions(list(cases), list(scenarios), parallel), hooks)
    except (SuiteConfigError, SpecError, RunSetupError, WorkspaceError, ResultsError) as exc:
        _usage_error(str(exc))
    if as_json:
        click.echo(json.dumps(done.document(), indent=1))
    else:
        print_audit(_console(), done, time.monotonic() - started)
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
            _usage_error("--max-trials, --confidence and --min-rate go with --until-decided")
        return None
    default = StopRule()
    most = max_trials or default.most
    if trials is not None and trials > most:
        _usage_error(
            f"--trials {trials} is the least trials of --until-decided, over its most "
            f"(--max-trials {most}): lower it, or raise --max-trials"
        )
    return StopRule(
        most=most,
        confidence=confidence or default.confidence,
        rate=min_rate or default.rate,
    )


def _note(note: str) -> None:
    _console(stderr=True).print(f"[yellow]![/] {_escape(note)}")


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


@main.command()
@click.argument("directory", default="evals", type=click.Path(file_okay=False, path_type=Path))
def init(directory: Path) -> None:
    """Scaffold a suite in DIRECTORY (default: evals) that runs green at once."""
    from sounding.runner import ScaffoldError, scaffold

    try:
        written = scaffold(directory)
    except ScaffoldError as exc:
        _usage_error(str(exc))
    console = _console()
    for path in written:
        console.print(f"  wrote {_escape(str(path))}")
    console.print(f"next: sounding run {_escape(str(directory))}")


_OUT = _FilePath(dir_okay=False, path_type=Path)


class _Renderings(click.Command):
    """`report`: a `--name FILE` option per registered renderer, added when the command is
    first parsed or shown, so that no other command loads the renderers."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        from sounding.report import renderers

        given = {param.name for param in self.params}
        for renderer in renderers:
            if renderer.name not in given:
                option = click.Option([f"--{renderer.name}"], type=_OUT, help=renderer.help)
                self.params.append(option)
        return super().get_params(ctx)


@main.command(cls=_Renderings)
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
def report(run_dir: Path, **outputs: Path | None) -> None:
    """Render a stored run (RUN_DIR is results/<run-id>); with no option, print its verdicts."""
    from sounding.report import report_command

    raise SystemExit(report_command(run_dir, **outputs))


@main.command()
@click.argument("baseline_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("candidate_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the comparison (sounding.compare/1).")
def compare(baseline_dir: Path, candidate_dir: Path, as_json: bool) -> None:
    """Which differences between two runs (pass rates, checks, metrics) survive resampling.

    Exit 1 on an established regression, 3 when a run is incomplete or errored (nothing is
    published), 2 when a folder cannot be read, 0 otherwise."""
    from sounding.report import compare_command

    raise SystemExit(compare_command(baseline_dir, candidate_dir, as_json))


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--simulator",
    is_flag=True,
    help="Only trials with a simulated user, each of its turns checked for its own mistakes.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the review (sounding.review/1).")
def review(run_dir: Path, simulator: bool, as_json: bool) -> None:
    """The trials of RUN_DIR that did not pass, with why; with --simulator, those whose
    simulated user may have caused it shown apart."""
    from sounding.report._review import review_command

    raise SystemExit(review_command(run_dir, simulator=simulator, as_json=as_json))


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the agreement (sounding.agreement/1).")
@click.option(
    "--save", is_flag=True, help="Keep it as the suite's agreement.json, which later runs read."
)
def agreement(run_dir: Path, as_json: bool, save: bool) -> None:
    """How far each judge of RUN_DIR agrees with the people who filled the same trials on a
    form: Cohen's kappa for pass/fail, Spearman's correlation and the mean absolute error for
    scores, each with a bootstrap interval. Exit 0, or 2 when the run cannot be read."""
    from sounding.report import agreement_command

    raise SystemExit(agreement_command(run_dir, as_json=as_json, save=save))


@main.command()
@click.argument("results_dir", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8470,
    show_default=True,
    help="The port to serve on; 0 picks a free one (the URL is printed).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to serve on; anything but loopback lets others on the network read the runs.",
)
@click.option("--no-browser", is_flag=True, help="Do not open a browser on the viewer.")
def view(results_dir: Path, port: int, host: str, no_browser: bool) -> None:
    """Browse the runs of RESULTS_DIR in a local web app, read-only: each run's verdicts
    (filtered by verdict, case, cell, check), its pass^k curve and pass-rate intervals, a
    scenario's trials, a trial's conversation, tool calls, checks, diff and output; two runs
    side by side (/compare/A/B); a run in progress as its trials finish.

    \b
    RESULTS_DIR is a suite's results folder (default: the current folder), one run's
    folder (opened first), or a suite folder (its results/). Needs `sounding[view]`.
    Stop it with Ctrl-C (exit 130); exit 2 when the folder or the address cannot be served."""
    try:
        from sounding.view import view_command
    except ImportError as exc:
        if exc.name not in ("starlette", "uvicorn"):
            raise
        _usage_error(
            f"`sounding view` needs its web server ({exc.name} is not installed): "
            "pip install 'sounding[view]'"
        )
    raise SystemExit(view_command(results_dir, host=host, port=port, browser=not no_browser))


@main.group()
def form() -> None:
    """Metrics a person fills by hand (`mode: form` validators), on a blind, shuffled form."""


@form.command("export")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=_OUT, help="Where to write the form (default: RUN_DIR/form.toml).")
def form_export(run_dir: Path, out: Path | None) -> None:
    """Write the form of RUN_DIR: per trial, the form metrics nothing measured."""
    from sounding.validators import FormError, export_form

    try:
        done = export_form(run_dir, out)
    except FormError as exc:
        _usage_error(str(exc))
    left = f"{counted(done.metrics, 'metric')} to fill" if done.trials else "nothing left to fill"
    _console().print(f"wrote {_escape(str(done.path))}: {counted(done.trials, 'trial')}, {left}")


@form.command("import")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def form_import(run_dir: Path, file: Path) -> None:
    """Fill RUN_DIR's trials from a filled FILE; refuses (exit 2) to overwrite a measurement."""
    from sounding.validators import FormError, import_form

    try:
        done = import_form(run_dir, file)
    except FormError as exc:
        _usage_error(str(exc))
    _console().print(
        f"filled {counted(done.metrics, 'metric')} in {counted(done.trials, 'trial')}; "
        f"{done.left} still unfilled"
    )


if __name__ == "__main__":  # pragma: no cover
    main()
