"""`/compare/A/B`: per scenario, each run's verdict and pass rate and whether the gap
between them is established or inconclusive (`sounding.report.compare_runs`), and for one
scenario a trial of each run, their conversations side by side."""

from __future__ import annotations

from collections.abc import Callable

from sounding.report import Gap, RunComparison
from sounding.report._trial import table, text
from sounding.store import ScenarioSummary, TrialKey, scenario_label
from sounding.view._index import RunState, ScenarioKey, scenario_of
from sounding.view._markup import document, href, link, scenario_query, verdict
from sounding.view._trial import exchange, trial_url


def compare_page(
    comparison: RunComparison,
    states: tuple[RunState, RunState],
    chosen: tuple[ScenarioKey, int, int] | None,
) -> str:
    base, cand = states
    parts = [
        f"<h1>{text(base.run_id)} → {text(cand.run_id)}</h1>",
        _withheld(comparison),
        _counts(comparison),
        _table(comparison, states),
        _side_by_side(states, chosen) if chosen else "",
    ]
    return document(f"{base.run_id} vs {cand.run_id}", "".join(parts))


def _withheld(comparison: RunComparison) -> str:
    if not comparison.withheld:
        return ""
    return f'<p class="problems">no verdict is published: {text(comparison.withheld)}</p>'


def _counts(comparison: RunComparison) -> str:
    counts = {s: comparison.count(s) for s in ("regression", "improvement", "inconclusive")}
    shown = " · ".join(f"{n} {state}" for state, n in counts.items())
    only = [
        *(f"only in the baseline: {label}" for label in comparison.only_baseline),
        *(f"only in the candidate: {label}" for label in comparison.only_candidate),
    ]
    extra = "".join(f"<li>{text(o)}</li>" for o in only)
    return f"<p class=facts>{shown}</p>" + (f"<ul>{extra}</ul>" if extra else "")


def _table(comparison: RunComparison, states: tuple[RunState, RunState]) -> str:
    lines = [_lines(state) for state in states]
    head = ["scenario", "baseline", "candidate", "baseline rate", "candidate rate", "gap", "state"]
    rows = [_row(gap, lines, states) for gap in comparison.scenarios]
    rows += [_row(gap, lines, states) for gap in comparison.cells]
    return table(head, rows, "comparison")


def _lines(state: RunState) -> dict[ScenarioKey, ScenarioSummary]:
    summary = state.summary
    return {(s.cell, s.case, s.scenario): s for s in summary.scenarios} if summary else {}


def _row(
    gap: Gap, lines: list[dict[ScenarioKey, ScenarioSummary]], states: tuple[RunState, RunState]
) -> str:
    rate = gap.pass_rate
    rates = (
        (rate.reference_summary.describe(), rate.candidate_summary.describe())
        if rate
        else (gap.note, gap.note)
    )
    spread = rate.interval.describe(signed=True) if rate else "–"
    label = text(gap.label)
    verdicts = ["", ""]
    if gap.case is not None and gap.scenario is not None:
        key = (gap.cell, gap.case, gap.scenario)
        base, cand = states
        label = link(href("compare", base.run_id, cand.run_id, **scenario_query(key)), gap.label)
        verdicts = [verdict(line[key].verdict.value) if key in line else "–" for line in lines]
    return (
        f'<tr data-state="{text(gap.state)}"><td>{label}</td><td>{verdicts[0]}</td>'
        f"<td>{verdicts[1]}</td><td>{text(rates[0])}</td><td>{text(rates[1])}</td>"
        f'<td>{text(spread)}</td><td class="state st-{text(gap.state.replace(" ", "-"))}">'
        f"{text(gap.state)}</td></tr>"
    )


def _side_by_side(states: tuple[RunState, RunState], chosen: tuple[ScenarioKey, int, int]) -> str:
    key, first, second = chosen
    base, cand = states

    def pick(side: str) -> Callable[[int], str]:
        def url(n: int) -> str:
            ta, tb = (n, second) if side == "a" else (first, n)
            return href("compare", base.run_id, cand.run_id, **scenario_query(key), ta=ta, tb=tb)

        return url

    columns = [
        _column(base, key, first, "a", pick("a")),
        _column(cand, key, second, "b", pick("b")),
    ]
    title = scenario_label(*key)
    body = f'<div class="side-by-side">{"".join(columns)}</div>'
    return f"<h2>{text(title)}: a trial of each run</h2>{body}"


def _column(
    state: RunState, key: ScenarioKey, number: int, side: str, pick: Callable[[int], str]
) -> str:
    rows = [r for r in state.rows if scenario_of(r.key) == key]
    picker = "".join(
        f'<a class="pick v-{text(r.verdict)}{" chosen" if r.key.trial == number else ""}" '
        f'href="{pick(r.key.trial)}">#{r.key.trial}</a>'
        for r in rows
    )
    picker = f'<nav class="picker">{picker}</nav>'
    if not any(r.key.trial == number for r in rows):
        body = f'<p class="dim">trial #{number} has not finished in this run</p>'
        return f'<div class="side side-{side}"><h3>{text(state.run_id)}</h3>{picker}{body}</div>'
    trial = state.trial(TrialKey(*key, number))
    head = (
        f"<h3>{text(state.run_id)}: {link(trial_url(state, trial.key), f'trial #{number}')} "
        f"{verdict(trial.verdict.value)}</h3>"
    )
    reason = f'<p class="reason">{text(trial.reason)}</p>' if trial.reason else ""
    return f'<div class="side side-{side}">{head}{picker}{reason}{exchange(trial)}</div>'
