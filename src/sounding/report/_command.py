"""`sounding report RESULTS_DIR`: render a stored run with every renderer asked for."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from sounding._exit import ExitCode
from sounding.report._renderers import Renderer, renderers
from sounding.report._terminal import scenario_line, until_decided
from sounding.store import Results, ResultsError, load_results


def report_command(run_dir: Path, **outputs: Path | None) -> int:
    """Write each renderer's report where asked (`junit=PATH`, `html=PATH`, ...); with none,
    print the verdicts. 0 when done, 2 on a bad folder or an output that cannot be written."""
    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    wanted = _wanted(outputs)
    try:
        results = load_results(run_dir)
        results.finished()
        for renderer, path in wanted:
            renderer.write(results, path)
            out.print(f"wrote {renderer.title}: {escape(str(path))}")
    except ResultsError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return ExitCode.USAGE
    if not wanted:
        _print_verdicts(out, results)
    return ExitCode.PASS


def _wanted(outputs: Mapping[str, Path | None]) -> list[tuple[Renderer[Results], Path]]:
    """The renderers asked for, in their registry's order, with where each writes. A keyword
    may end in `_` (`json_=`), the spelling of a name that would shadow a module."""
    given = {name.removesuffix("_"): path for name, path in outputs.items() if path}
    unknown = sorted({name.removesuffix("_") for name in outputs} - set(renderers.names()))
    if unknown:
        known = ", ".join(renderers.names())
        raise TypeError(f"no renderer named {', '.join(unknown)} (renderers: {known})")
    return [(r, given[r.name]) for r in renderers if r.name in given]


def _print_verdicts(console: Console, results: Results) -> None:
    for scenario in results.scenarios:
        console.print(scenario_line(scenario.summary), highlight=False, soft_wrap=True)
    summary = results.finished()
    totals = ", ".join(f"{n} {verdict}" for verdict, n in summary.totals.items())
    console.print(f"\n{summary.outcome}: {totals} — run {escape(results.run_id)}")
    if summary.until_decided is not None:
        console.print(escape(until_decided(summary)))
