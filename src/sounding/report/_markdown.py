"""A summary fit for a pull-request comment: a totals line, a table, failures folded away.

Markdown hosts render HTML inside Markdown, and records hold untrusted text, so every value
from the run is HTML-escaped and kept to one line inside the table.
"""

from __future__ import annotations

import html

from sounding._words import counted
from sounding.report._cells import cells_report
from sounding.report._charts import SPENT, curve_text, spent_columns, spent_text
from sounding.report._renderers import renderers
from sounding.report._terminal import clipped, passes, until_decided
from sounding.store import Results, ScenarioTrials

_CELL_WIDTH = 160


@renderers.renderer(
    "markdown", title="Markdown", help="Write a Markdown summary for a pull request."
)
def markdown_report(results: Results) -> str:
    """The run as Markdown: needs a finished run (its summary.json)."""
    results.finished()
    spent = spent_columns(results.scenarios)
    head = ["verdict", "scenario", "passes/trials", "pass@k", "pass^k", "first failure"]
    head += [f"{SPENT[name][0]} per trial" for name in spent]
    lines = [
        f"### sounding run {_text(results.run_id)}",
        "",
        _totals(results),
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *(_row(s, spent) for s in results.scenarios),
    ]
    details = [_details(s) for s in results.scenarios if s.summary.verdict.value != "pass"]
    if details:
        lines += ["", *details]
    lines += ["", *_curves(results)]
    cells = cells_report(results)
    if cells is not None:
        lines += ["", cells.markdown()]
    return "\n".join(lines).rstrip() + "\n"


def _totals(results: Results) -> str:
    summary = results.finished()
    words = ", ".join(f"{n} {verdict}" for verdict, n in summary.totals.items())
    scenarios = counted(len(summary.scenarios), "scenario")
    trials = counted(len(results.trials), "trial")
    line = f"**{summary.outcome.upper()}**: {words} ({scenarios}, {trials})"
    if summary.until_decided is not None:  # an adaptive run: its scenarios took their own n
        line += f"  \n{_text(until_decided(summary))}"
    return line


def _row(scenario: ScenarioTrials, spent: list[str]) -> str:
    s = scenario.summary
    cells = [
        s.verdict.value.upper(),
        _cell(s.label),
        passes(s),
        _rate(s.pass_at_k, s.k),
        _rate(s.pass_hat_k, s.k),
        _cell(s.first_failure),  # on a passing line: an unvalidated judge that did not count
    ]
    spans = [scenario.spending.get(name) for name in spent]
    cells += [spent_text(n, span) if span else "" for n, span in zip(spent, spans, strict=True)]
    return "| " + " | ".join(cells) + " |"


def _curves(results: Results) -> list[str]:
    """pass@k and pass^k at every k: per cell the mean over its scenarios, and folded away,
    each scenario's own."""
    points = [(cell, p) for cell, curve in results.finished().curves.items() for p in curve]
    lines = [
        "#### pass@k and pass^k at every k",
        "",
        "Per cell, the mean over the scenarios with at least k judged trials:",
        "",
        "| cell | k | scenarios | pass@k | pass^k |",
        "|---|---|---|---|---|",
        *(
            f"| {_cell(cell)} | {p.k} | {p.scenarios} | {p.pass_at:.3f} | {p.pass_hat:.3f} |"
            for cell, p in points
        ),
    ]
    rows = [
        f"| {_cell(s.label)} | {curve_text(s.pass_at)} | {curve_text(s.pass_hat)} |"
        for s in (scenario.summary for scenario in results.scenarios)
    ]
    head = ["| scenario | pass@k, k = 1 … n | pass^k, k = 1 … n |", "|---|---|---|"]
    summary = "<summary>pass@k and pass^k of each scenario</summary>"
    return [*lines, "", "<details>", summary, "", *head, *rows, "", "</details>"]


def _rate(value: float | None, k: int | None) -> str:
    return "–" if value is None else f"{value:.2f} (k={k})"


def _details(scenario: ScenarioTrials) -> str:
    s = scenario.summary
    items = [
        f"- trial {t.trial} {t.verdict.value}: {_text(t.reason) or 'no reason given'}"
        for t in scenario.trials
        if t.outcome is not True
    ]
    trials = counted(len(items), "trial")
    head = f"{s.verdict.value.upper()} {_text(s.label)}: {trials} did not pass"
    return "\n".join(["<details>", f"<summary>{head}</summary>", "", *items, "", "</details>"])


def _text(value: str) -> str:
    """HTML-escaped, on one line."""
    return html.escape(" ".join(value.split()), quote=False)


def _cell(value: str) -> str:
    """One table cell: escaped, on one line, no pipe, and not too long."""
    flat = clipped(" ".join(value.split()), _CELL_WIDTH)
    return html.escape(flat, quote=False).replace("|", "\\|")
