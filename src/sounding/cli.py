"""The command line: parses, calls, prints. Exit codes are in `ExitCode`."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from sounding._measure import measure_trial
from sounding._words import counted
from sounding.checks import Evidence
from sounding.record import RecordError, load_record
from sounding.runner._exit import ExitCode
from sounding.scoring import TrialScore
from sounding.spec import Case, Scenario, SpecError, load_case, load_cases

if TYPE_CHECKING:
    from rich.console import Console

SCORE_SCHEMA = "sounding.score/1"
STATUS_STYLE = {
    "passed": "green",
    "failed": "red",
    "error": "magenta",
    "unjudged": "yellow",
    "skipped": "dim",
}


def _console(stderr: bool = False) -> Console:
    from rich.console import Console  # rich loads when a command prints, not at start-up

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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sounding")
def main() -> None:
    """sounding: does my agent work, reliably?

    \b
    Exit codes: 0 everything passed; 1 a scenario or trial failed (or was flaky),
    or `compare` established a regression; 2 usage error or a bad suite / case /
    record file; 3 an error prevented a verdict (or `compare` withheld it);
    130 interrupted (finish with `sounding run SUITE --resume RUN_ID`).
    """


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
def validate(paths: tuple[Path, ...]) -> None:
    """Check case files (or every case of a suite folder) without running or scoring."""
    cases: list[Case] = []
    for path in paths:
        files = _case_files(path)
        if not files:
            _usage_error(f"no case files (*.yaml, *.yml, *.toml) under {path}")
        try:  # inside a suite, fixtures, seeds and graders are checked to exist as well
            cases.extend(load_cases(files, suite_dir=_suite_dir(files[0])))
        except SpecError as exc:
            _usage_error(str(exc))
    scenarios = sum(len(case.scenarios) for case in cases)
    _console().print(f"ok: {counted(len(cases), 'case file')}, {counted(scenarios, 'scenario')}")


def _case_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    folder = path / "cases" if (path / "cases").is_dir() else path
    return sorted(p for p in folder.glob("*") if p.suffix in (".yaml", ".yml", ".toml"))


@main.command()
@click.argument("target", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--record",
    "record_path",
    type=_FilePath(exists=True, path_type=Path),
    help="The run record: a JSONL trace, OpenAI or Anthropic messages, OTLP/JSON, a record.",
)
@click.option(
    "--format",
    "record_format",
    type=click.Choice(["sounding", "jsonl", "openai", "anthropic", "otel"]),
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
def score(
    target: Path,
    record_path: Path | None,
    record_format: str | None,
    workspace: Path | None,
    scenario_id: str | None,
    as_json: bool,
    trace_id: str | None,
    rejudge: bool,
) -> None:
    """Score a record against a case file (TARGET is a case file), or re-score a stored run
    (TARGET is a results folder) by today's case files without running anything."""
    if target.is_dir():
        from sounding.rescore import rescore_command

        raise SystemExit(rescore_command(target, as_json=as_json, rejudge=rejudge))
    if record_path is None:
        _usage_error("score CASE_FILE needs --record RECORD (the run record to score)")
    try:
        case = load_case(target)
        scenario = _pick_scenario(case, scenario_id)
        record = load_record(record_path, format=record_format, trace_id=trace_id)
    except RecordError as exc:
        if exc.needs == "trace_id":
            exc = exc.with_fix("name one with --trace-id ID, or export a single trace")
        _usage_error(str(exc))
    except SpecError as exc:
        _usage_error(str(exc))
    evidence = Evidence(record=record, workspace=workspace, scenario_id=scenario.id)
    result = measure_trial(scenario, evidence, suite_dir=_suite_dir(target))
    if as_json:
        click.echo(json.dumps(score_document(case, scenario, result), indent=1))
    else:
        _print_score(case, scenario, result)
    raise SystemExit(_score_exit(result))


def _suite_dir(case_file: Path) -> Path:
    """The suite a case file belongs to: the folder above `cases/`, or its own folder."""
    parent = case_file.resolve().parent
    return parent.parent if parent.name == "cases" else parent


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


def _score_exit(result: TrialScore) -> int:
    return {"pass": ExitCode.PASS, "fail": ExitCode.FAIL}.get(result.verdict.value, ExitCode.ERROR)


def score_document(case: Case, scenario: Scenario, result: TrialScore) -> dict[str, Any]:
    """The `--json` form of a scored record (schema sounding.score/1)."""
    return {
        "schema": SCORE_SCHEMA,
        "case": str(case.path),
        "scenario": scenario.id,
        "verdict": result.verdict.value,
        "composite": result.composite,
        "threshold": result.threshold,
        "reason": result.reason,
        "checks": [{**m.summary(), "details": m.result.details} for m in result.checks],
    }


def _print_score(case: Case, scenario: Scenario, result: TrialScore) -> None:
    console = _console()
    console.print(f"{_escape(case.name)}/{_escape(scenario.id)}")
    for m in result.checks:
        status = m.result.status.value
        label = "LEAD" if m.kind.value == "lead" and status == "failed" else status.upper()
        style = "yellow" if label == "LEAD" else STATUS_STYLE[status]
        console.print(
            f"  [{style}]{label:<8}[/] {_escape(m.name):<40} {m.result.score:.2f}  "
            f"{_escape(m.result.reason)}"
        )
    shown = "—" if result.composite is None else f"{result.composite:.2f}"
    style = {"pass": "green", "fail": "red"}.get(result.verdict.value, "magenta")
    reason = f"  {_escape(result.reason)}" if result.reason else ""
    console.print(
        f"[{style}]{result.verdict.value.upper()}[/] composite {shown} "
        f"(threshold {result.threshold:.2f}){reason}"
    )


@main.command()
@click.argument("suite_dir", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.argument("cases", nargs=-1)
@click.option("--scenario", "scenarios", multiple=True, help="Run only this scenario (repeatable).")
@click.option(
    "--trials", type=click.IntRange(min=1), help="Trials per scenario, for every scenario."
)
@click.option("--parallel", type=click.IntRange(min=1), help="Trials at once (default: cores).")
@click.option("--resume", "resume", metavar="RUN_ID", help="Finish an interrupted run.")
@click.option("--keep", is_flag=True, help="Keep server databases after each trial.")
def run(
    suite_dir: Path,
    cases: tuple[str, ...],
    scenarios: tuple[str, ...],
    trials: int | None,
    parallel: int | None,
    resume: str | None,
    keep: bool,
) -> None:
    """Run every scenario of SUITE_DIR (or the named CASES) several times and give verdicts."""
    from sounding.report._terminal import TrialProgress, print_summary
    from sounding.runner._config import SuiteConfigError, load_suite
    from sounding.runner._run import RunInterrupted, RunOptions, run_suite
    from sounding.runner._setup import RunSetupError, prepare_run
    from sounding.runner._workspace import WorkspaceError

    options = RunOptions(list(cases), list(scenarios), trials, parallel, resume, keep)
    started = time.monotonic()
    try:
        suite = load_suite(suite_dir)
        agent, extra = prepare_run(suite, options)
        progress = TrialProgress(_console(stderr=True))
        with progress.running():
            result = run_suite(
                suite,
                options,
                agent=agent,
                settings_extra=extra,
                on_trial=progress.finished,
                on_note=lambda note: _console(stderr=True).print(f"[yellow]![/] {_escape(note)}"),
                on_plan=progress.planned,
            )
    except (SuiteConfigError, SpecError, RunSetupError, WorkspaceError) as exc:
        _usage_error(str(exc))
    except RunInterrupted as stop:
        where = stop.root.name if stop.root else "RUN_ID"
        _console(stderr=True).print(
            f"[yellow]interrupted[/]: {counted(stop.finished, 'trial')} finished and kept in "
            f"{_escape(str(stop.root))}; finish the run with: "
            f"sounding run {_escape(str(suite_dir))} --resume {_escape(where)}"
        )
        raise SystemExit(ExitCode.INTERRUPTED) from None
    print_summary(_console(), result.lines, result.layout.root, time.monotonic() - started)
    if len(suite.cells) > 1:
        _print_cells(result.layout.root)
    raise SystemExit(result.exit_code)


def _print_cells(run_dir: Path) -> None:
    """For a run of several cells: the pass-rate gaps against the reference that hold."""
    from sounding.report._cells import cells_report

    report = cells_report(run_dir, metrics=["passed"])
    if report is not None:
        click.echo("\n".join(["", *report.lines()]))


@main.command()
@click.argument("directory", default="evals", type=click.Path(file_okay=False, path_type=Path))
def init(directory: Path) -> None:
    """Scaffold a suite in DIRECTORY (default: evals) that runs green at once."""
    from sounding.runner._scaffold import ScaffoldError, scaffold

    try:
        written = scaffold(directory)
    except ScaffoldError as exc:
        _usage_error(str(exc))
    console = _console()
    for path in written:
        console.print(f"  wrote {_escape(str(path))}")
    console.print(f"next: sounding run {_escape(str(directory))}")


_OUT = _FilePath(dir_okay=False, path_type=Path)


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--junit", type=_OUT, help="Write JUnit XML here (one testcase per scenario).")
@click.option("--json", "json_", type=_OUT, help="Write the JSON report (sounding.report/1).")
@click.option("--markdown", type=_OUT, help="Write a Markdown summary for a pull request.")
@click.option("--html", type=_OUT, help="Write one self-contained HTML page.")
def report(
    run_dir: Path,
    junit: Path | None,
    json_: Path | None,
    markdown: Path | None,
    html: Path | None,
) -> None:
    """Render a stored run (RUN_DIR is results/<run-id>); with no option, print its verdicts."""
    from sounding.report import report_command

    raise SystemExit(report_command(run_dir, junit, json_, markdown, html))


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


def entry() -> NoReturn:
    """The `sounding` command: `main`, then out without tearing down what it built.

    After a large run the interpreter would free hundreds of thousands of objects one by one
    on the way out, and walk them all in a last collection: a tenth of a second or more,
    after everything is written and printed. The command has nothing left to do by then
    (its threads are daemons, its files closed), so it flushes what it printed and leaves.
    An unexpected exception still ends the usual way, with its traceback.
    """
    try:
        main()
        code: object = 0
    except SystemExit as done:
        code = done.code
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # what `SystemExit("message")` would have printed
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


if __name__ == "__main__":  # pragma: no cover
    entry()
