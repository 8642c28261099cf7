"""`sounding report RESULTS_DIR`: render a stored run as JUnit, JSON, Markdown or HTML."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from sounding._exit import ExitCode
from sounding._files import write_text
from sounding.report._html import html_report
from sounding.report._json import json_report
from sounding.report._junit import junit_report
from sounding.report._markdown import markdown_report
from sounding.report._terminal import scenario_line
from sounding.store import Results, ResultsError, load_results

Render = Callable[[Results], str]


def report_command(
    run_dir: Path,
    junit: Path | None = None,
    json_: Path | None = None,
    markdown: Path | None = None,
    html: Path | None = None,
) -> int:
    """Write each asked-for format; with none, print the verdicts. 0 when done, 2 on a bad
    folder or an output that cannot be written."""
    out, err = _console(), _console(stderr=True)
    wanted: list[tuple[str, Path, Render]] = [
        (name, path, render)
        for name, path, render in (
            ("JUnit XML", junit, junit_report),
            ("JSON", json_, json_report),
            ("Markdown", markdown, markdown_report),
            ("HTML", html, html_report),
        )
        if path is not None
    ]
    try:
        results = load_results(run_dir)
        results.finished()
        for name, path, render in wanted:
            _write(path, render(results))
            out.print(f"wrote {name}: {escape(str(path))}")
    except ResultsError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return ExitCode.USAGE
    if not wanted:
        _print_verdicts(out, results)
    return ExitCode.PASS


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, text)
    except OSError as exc:
        raise ResultsError(
            f"{path}: cannot write the report ({exc.strerror or exc}); "
            "choose a path in a folder you can write to"
        ) from exc


def _print_verdicts(console: Console, results: Results) -> None:
    for scenario in results.scenarios:
        console.print(scenario_line(scenario.summary), highlight=False, soft_wrap=True)
    summary = results.finished()
    totals = ", ".join(
        f"{summary.totals.get(v, 0)} {v}" for v in ("pass", "flaky", "fail", "error")
    )
    console.print(f"\n{summary.outcome}: {totals} — run {escape(results.run_id)}")


def _console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=True)
