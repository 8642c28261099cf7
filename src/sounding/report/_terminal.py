"""The terminal: a live progress bar while trials run, then one line per scenario."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from sounding._words import counted
from sounding.store import RunSummary, ScenarioSummary, Trial

STYLES = {"pass": "green", "flaky": "yellow", "fail": "red", "error": "magenta"}
_REASON_WIDTH = 120


class TrialProgress:
    """A progress bar on stderr; silent when stderr is not a terminal."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("[bold]trials"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[last]}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        )
        self._task = self._progress.add_task("trials", total=0, last="")

    def planned(self, total: int, done: int) -> None:
        self._progress.update(self._task, total=total, completed=done)

    def finished(self, trial: Trial) -> None:
        self._progress.update(self._task, advance=1, last=escape(trial.key.label))

    @contextmanager
    def running(self) -> Iterator[TrialProgress]:
        with self._progress:
            yield self


def scenario_line(line: ScenarioSummary) -> Text:
    """`FAIL  case/scenario  1/3  1.2s  first failure`, styled. A passing line has no
    failure, but may name an unvalidated judge check that failed and did not count."""
    verdict = line.verdict.value
    body = f" {line.label}  {passes(line)}  {line.duration_ms / 1000:.2f}s"
    text = Text.assemble((f"{verdict.upper():<5}", STYLES[verdict]), body)
    reason = clipped(line.first_failure.replace("\n", " "), _REASON_WIDTH)
    if reason:
        text.append(f"  {reason}", style="dim" if verdict != "pass" else "yellow")
    return text


def clipped(text: str, width: int) -> str:
    """`text`, cut to `width` characters ending in `…` when longer."""
    return text if len(text) <= width else text[: width - 1] + "…"


def passes(line: ScenarioSummary) -> str:
    """`passed/judged`, with the errors beside it when there were any (and, of those, how
    many were the simulator's: `(2 errors: 1 simulator)`)."""
    kinds = ", ".join(f"{n} {kind}" for kind, n in line.error_kinds.items())
    errors = f" ({counted(line.errors, 'error')}{': ' + kinds if kinds else ''})"
    return f"{line.passed}/{line.passed + line.failed}{errors if line.errors else ''}"


_STOPS = {
    "bound": "by the bound",
    "differ": "at a differing outcome",
    "max-trials": "at --max-trials",
}


def until_decided(summary: RunSummary) -> str:
    """How an adaptive run stopped its scenarios, and its trials against a fixed run's:
    `until decided (95% sure of a 70% rate, at most 10 trials): 2 by the bound, 1 at a
    differing outcome; 20 trials, 30 at a fixed 10`."""
    rule = summary.until_decided or {}
    stops = Counter(str(line.stopped) for line in summary.scenarios)
    said = ", ".join(f"{stops[stop]} {words}" for stop, words in _STOPS.items() if stops[stop])
    taken = sum(line.trials for line in summary.scenarios)
    most = int(rule.get("most", 0))
    return (
        f"until decided ({rule.get('confidence', 0):.0%} sure of a {rule.get('rate', 0):.0%} "
        f"rate, at most {most} trials): {said}; {counted(taken, 'trial')}, "
        f"{len(summary.scenarios) * most} at a fixed {most}"
    )


def print_summary(console: Console, summary: RunSummary, artifacts: Path, seconds: float) -> None:
    lines = summary.scenarios
    for line in lines:
        console.print(scenario_line(line), highlight=False, soft_wrap=True)
    trials = sum(line.trials for line in lines)
    parts = ", ".join(f"[{STYLES[v]}]{n} {v}[/]" for v, n in summary.totals.items())
    console.print(
        f"\n{parts} — {counted(len(lines), 'scenario')}, {counted(trials, 'trial')} in "
        f"{seconds:.2f}s",
        highlight=False,
    )
    if summary.until_decided is not None:
        console.print(until_decided(summary), highlight=False)
    kinds = Counter[str]()
    for line in lines:
        kinds.update(line.error_kinds)
    if kinds:
        said = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        console.print(f"errored trials by kind: {said}", highlight=False)
    console.print(f"artifacts: {artifacts}", highlight=False, soft_wrap=True)
