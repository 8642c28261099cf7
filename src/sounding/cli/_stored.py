"""The commands that read what a suite holds or a run stored: validate, init, report,
compare, review, agreement, view and the form."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sounding._words import counted

if TYPE_CHECKING:
    from sounding.spec import Case
from sounding.cli._common import OUT, RendererOptions, console, escaped, usage_error, warn


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
def validate(paths: tuple[Path, ...]) -> None:
    """Check case files (or every case of a suite folder, and its sounding.toml) without
    running or scoring."""
    from sounding.runner import Suite, SuiteConfigError, load_suite, suite_of
    from sounding.spec import SpecError, load_cases

    cases: list[Case] = []
    problems: list[str] = []
    suites: set[Path] = set()  # each suite's sounding.toml read once
    for path in paths:
        files = _case_files(path)
        if not files:
            usage_error(f"no case files (*.yaml, *.yml, *.toml) under {path}")
        suite = suite_of(files[0])
        if suite not in suites and Suite.exists(suite):
            suites.add(suite)
            try:
                load_suite(suite)
            except SuiteConfigError as exc:
                problems.append(str(exc))
        try:  # inside a suite, fixtures, seeds and graders are checked to exist as well
            cases.extend(load_cases(files, suite_dir=suite))
        except SpecError as exc:
            problems.append(str(exc))
    if problems:
        usage_error("\n".join(problems))
    for note in (note for case in cases for note in case.notes):
        warn(note)
    scenarios = sum(len(case.scenarios) for case in cases)
    console().print(f"ok: {counted(len(cases), 'case file')}, {counted(scenarios, 'scenario')}")


def _case_files(path: Path) -> list[Path]:
    from sounding.spec import case_files

    if path.is_file():
        return [path]
    return case_files(path / "cases" if (path / "cases").is_dir() else path)


@click.command()
@click.argument("directory", default="evals", type=click.Path(file_okay=False, path_type=Path))
def init(directory: Path) -> None:
    """Scaffold a suite in DIRECTORY (default: evals) that runs green at once."""
    from sounding.runner import ScaffoldError, scaffold

    try:
        written = scaffold(directory)
    except ScaffoldError as exc:
        usage_error(str(exc))
    shown = console()
    for path in written:
        shown.print(f"  wrote {escaped(str(path))}")
    shown.print(f"next: sounding run {escaped(str(directory))}")


class _Renderings(RendererOptions):
    """`report`: an option per registered renderer (`--junit`, `--html`, ...)."""

    def renderers(self) -> Iterable[Any]:
        from sounding.report import renderers

        return renderers


@click.command(cls=_Renderings)
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
def report(run_dir: Path, **outputs: Path | None) -> None:
    """Render a stored run (RUN_DIR is results/<run-id>); with no option, print its verdicts."""
    from sounding.report import report_command

    raise SystemExit(report_command(run_dir, **outputs))


@click.command()
@click.argument("baseline_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("candidate_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the comparison (sounding.compare/1).")
def compare(baseline_dir: Path, candidate_dir: Path, as_json: bool) -> None:
    """Which differences between two runs (pass rates, checks, metrics) survive resampling.

    Exit 1 on an established regression, 3 when a run is incomplete or errored (nothing is
    published), 2 when a folder cannot be read, 0 otherwise."""
    from sounding.report import compare_command

    raise SystemExit(compare_command(baseline_dir, candidate_dir, as_json))


@click.command()
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


@click.command()
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


@click.command()
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
        usage_error(
            f"`sounding view` needs its web server ({exc.name} is not installed): "
            "pip install 'sounding[view]'"
        )
    raise SystemExit(view_command(results_dir, host=host, port=port, browser=not no_browser))


@click.group()
def form() -> None:
    """Metrics a person fills by hand (`mode: form` validators), on a blind, shuffled form."""


@form.command("export")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=OUT, help="Where to write the form (default: RUN_DIR/form.toml).")
def form_export(run_dir: Path, out: Path | None) -> None:
    """Write the form of RUN_DIR: per trial, the form metrics nothing measured."""
    from sounding.validators import FormError, export_form

    try:
        done = export_form(run_dir, out)
    except FormError as exc:
        usage_error(str(exc))
    left = f"{counted(done.metrics, 'metric')} to fill" if done.trials else "nothing left to fill"
    console().print(f"wrote {escaped(str(done.path))}: {counted(done.trials, 'trial')}, {left}")


@form.command("import")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def form_import(run_dir: Path, file: Path) -> None:
    """Fill RUN_DIR's trials from a filled FILE; refuses (exit 2) to overwrite a measurement."""
    from sounding.validators import FormError, import_form

    try:
        done = import_form(run_dir, file)
    except FormError as exc:
        usage_error(str(exc))
    console().print(
        f"filled {counted(done.metrics, 'metric')} in {counted(done.trials, 'trial')}; "
        f"{done.left} still unfilled"
    )
