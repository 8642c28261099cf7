"""The runs page, a run's page (its verdict table, filtered and paged, and its charts per
cell) and a scenario's page (its trials as dots, the checks of each trial)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from sounding.report._charts import curve_chart, rate_chart, scenario_curve_table
from sounding.report._terminal import until_decided
from sounding.report._trial import table, text
from sounding.view._index import (
    ResultsFolder,
    RunState,
    ScenarioKey,
    ScenarioRows,
    TrialRow,
    ViewError,
)
from sounding.view._markup import (
    VERDICTS,
    document,
    href,
    link,
    money,
    number,
    page_of,
    pager,
    scenario_query,
    select,
    verdict,
)
from sounding.view._trial import scenario_url, trial_url

_DOTS = 60  # trials drawn as dots in a row of the run's table; the rest on its page
FAILING = "failing"  # the verdict filter's choice of every scenario that did not pass


@dataclass(frozen=True)
class Filters:
    """What a run's table is narrowed to; empty strings filter nothing."""

    verdict: str = ""
    case: str = ""
    cell: str = ""
    check: str = ""
    page: int = 1

    def keeps(self, scenario: ScenarioRows) -> bool:
        cell, case, _ = scenario.key
        if self.verdict == FAILING:
            wanted = scenario.verdict != "pass"
        else:
            wanted = self.verdict in ("", scenario.verdict)
        return (
            wanted
            and self.case in ("", case)
            and self.cell in ("", cell)
            and (not self.check or any(t.fails(self.check) for t in scenario.trials))
        )

    def query(self) -> dict[str, object]:
        return {k: v for k, v in asdict(self).items() if k != "page"}


# ---- the runs ---------------------------------------------------------------------------


def runs_page(folder: ResultsFolder) -> str:
    ids = folder.run_ids()
    states = {run_id: _state(folder, run_id) for run_id in ids}
    rows = [_run_row(run_id, state) for run_id, state in states.items()]
    head = ["run", "date", "suite", "outcome", "scenarios", "trials", "cells", "cost"]
    body = (
        f"<h1>Runs in {text(folder.root)}</h1>"
        + table(head, rows, "runs")
        + (_compare_form(ids) if len(ids) > 1 else "")
    )
    return document("runs", body, live=href("api", "runs"), stamp=_stamp(states))


def _state(folder: ResultsFolder, run_id: str) -> RunState | str:
    """The run, or why it cannot be read: one unreadable run never hides the others."""
    try:
        return folder.run(run_id)
    except ViewError as exc:
        return str(exc)


def _stamp(states: Mapping[str, RunState | str]) -> str:
    return "|".join(state if isinstance(state, str) else state.stamp for state in states.values())


def runs_progress(folder: ResultsFolder) -> dict[str, object]:
    """What the runs page polls: it reloads when a run appears or moves on."""
    states = {run_id: _state(folder, run_id) for run_id in folder.run_ids()}
    return {"live": True, "stamp": _stamp(states)}


def _run_row(run_id: str, state: RunState | str) -> str:
    if isinstance(state, str):
        return f'<tr><td>{text(run_id)}</td><td colspan="7" class="s-error">{text(state)}</td></tr>'
    started = datetime.fromtimestamp(state.root.joinpath("run.json").stat().st_mtime, UTC)
    return (
        f"<tr><td>{link(href('run', run_id), run_id)}</td>"
        f"<td>{started:%Y-%m-%d %H:%M} UTC</td><td>{text(state.plan.suite)}</td>"
        f'<td><span class="status st-{state.status}">{state.status}</span></td>'
        f"<td>{_totals(state)}</td>"
        f'<td class="num">{len(state.rows):,} of {len(state.plan.trials):,}</td>'
        f"<td>{text(', '.join(state.cells))}</td><td class=num>{money(state.cost_usd)}</td></tr>"
    )


def _totals(state: RunState) -> str:
    if state.summary is None:
        return '<span class="dim">not finished</span>'
    counts = state.summary.totals
    return " ".join(f"{verdict(v)} {counts.get(v, 0)}" for v in VERDICTS)


def _compare_form(ids: Sequence[str]) -> str:
    def choice(name: str, chosen: str) -> str:
        options = "".join(
            f'<option value="{text(i)}"{" selected" if i == chosen else ""}>{text(i)}</option>'
            for i in ids
        )
        return f'<select name="{name}">{options}</select>'

    return (
        '<h2>Compare two runs</h2><form class="compare" action="/compare" method="get">'
        f"baseline {choice('a', ids[1])} candidate {choice('b', ids[0])} "
        '<button type="submit">compare</button></form>'
    )


def progress(state: RunState) -> dict[str, object]:
    """What a page of a run in progress polls: it reloads its content when this changes."""
    return {
        "run": state.run_id,
        "stamp": state.stamp,
        "status": state.status,
        "live": state.live,
        "finished": len(state.rows),
        "planned": len(state.plan.trials),
        "problems": len(state.problems),
    }


# ---- a run ------------------------------------------------------------------------------


def run_page(folder: ResultsFolder, state: RunState, filters: Filters) -> str:
    scenarios = state.scenarios()
    kept = [s for s in scenarios if filters.keeps(s)]
    shown = page_of(kept, filters.page)
    parts = [
        _run_header(state),
        _problems(state.problems),
        _filter_form(state, scenarios, filters),
        pager(filters.page, len(kept), filters.query()),
        _verdict_table(state, shown),
        pager(filters.page, len(kept), filters.query()),
        _charts(folder, state, shown),
    ]
    crumbs = [(href("run", state.run_id), state.run_id)]
    return document(state.run_id, "".join(parts), crumbs=crumbs, **_live(state))


def _run_header(state: RunState) -> str:
    facts = [
        f'<span class="status st-{state.status}">{state.status}</span>',
        f"suite {text(state.plan.suite)}",
        f'<span id="finished">{len(state.rows):,}</span> of {len(state.plan.trials):,} trials',
        f"cells {text(', '.join(state.cells))}",
        f"cost {money(state.cost_usd)}",
    ]
    adaptive = ""
    if state.summary is not None:
        facts.insert(1, _totals(state))
        if state.summary.until_decided is not None:  # its scenarios took their own n
            adaptive = f"<p class=facts>{text(until_decided(state.summary))}</p>"
    return f"<h1>Run {text(state.run_id)}</h1><p class=facts>{' · '.join(facts)}</p>{adaptive}"


def _problems(problems: Sequence[str]) -> str:
    if not problems:
        return ""
    items = "".join(f"<li>{text(p)}</li>" for p in problems[:20])
    more = f"<li>… {len(problems) - 20} more</li>" if len(problems) > 20 else ""
    return f'<div class="problems"><h3>Not shown</h3><ul>{items}{more}</ul></div>'


def _filter_form(state: RunState, scenarios: Sequence[ScenarioRows], filters: Filters) -> str:
    verdicts = [FAILING, *VERDICTS, *(["running"] if state.live else [])]
    checks = dict.fromkeys(name for s in scenarios for t in s.trials for name, _, _ in t.checks)
    fields = [
        select("verdict", "verdict", verdicts, filters.verdict),
        select("case", "case", dict.fromkeys(s.key[1] for s in scenarios), filters.case),
        select("cell", "cell", state.cells, filters.cell),
        select("check", "check not passed", checks, filters.check),
    ]
    return (
        f'<form class="filters" method="get">{"".join(fields)}'
        '<button type="submit">filter</button></form>'
    )


def _verdict_table(state: RunState, shown: Sequence[ScenarioRows]) -> str:
    head = [
        "verdict",
        "scenario",
        "passed",
        "failed",
        "errors",
        "pass@k",
        "pass^k",
        "trials",
        "first failure",
    ]
    rows = [_verdict_row(state, s) for s in shown]
    return table(head, rows, "verdicts")


def _verdict_row(state: RunState, s: ScenarioRows) -> str:
    line = s.summary
    first = line.first_failure if line else next((t.reason for t in s.trials if t.reason), "")
    page = scenario_url(state, s.key)
    return (
        f'<tr data-verdict="{text(s.verdict)}"><td>{verdict(s.verdict)}</td>'
        f"<td>{link(page, s.label)}</td><td class=num>{s.count('pass')}</td>"
        f"<td class=num>{s.count('fail')}</td><td class=num>{s.count('error')}</td>"
        f"<td class=num>{number(line.pass_at_k if line else None)}</td>"
        f"<td class=num>{number(line.pass_hat_k if line else None)}</td>"
        f"<td>{dots(state, s.trials[:_DOTS])}{_more(s, page)}</td><td>{text(first)}</td></tr>"
    )


def _more(s: ScenarioRows, page: str) -> str:
    left = len(s.trials) - _DOTS
    return f" {link(page, f'… {left} more')}" if left > 0 else ""


def dots(state: RunState, trials: Sequence[TrialRow]) -> str:
    """Each trial a dot of its verdict's colour, linking to the trial's page."""
    return '<span class="dots">' + "".join(_dot(state, t) for t in trials) + "</span>"


def _dot(state: RunState, t: TrialRow) -> str:
    tip = f"#{t.key.trial} {t.verdict}" + (f": {t.reason}" if t.reason else "")
    url = trial_url(state, t.key)
    return f'<a class="dot v-{text(t.verdict)}" href="{url}" title="{text(tip)}"></a>'


def _charts(folder: ResultsFolder, state: RunState, shown: Sequence[ScenarioRows]) -> str:
    parts = ["<h2>Charts per cell</h2>"]
    curves = state.summary.curves if state.summary else {}
    for cell in state.cells:
        mine = [s for s in shown if s.key[0] == cell]
        parts.append(f"<section class=cell><h3>cell {text(cell)}</h3>")
        if curves.get(cell):
            parts.append(f"<h4>pass^k at every k</h4>{curve_chart(curves[cell])}")
        else:
            parts.append('<p class="dim">the pass^k curve is drawn when the run finishes</p>')
        if mine:
            parts.append("<h4>pass rate per scenario (this page)</h4>" + _rates(folder, mine))
        parts.append("</section>")
    return "".join(parts)


def _rates(folder: ResultsFolder, scenarios: Sequence[ScenarioRows]) -> str:
    bars = [
        (
            s.label,
            s.verdict,
            s.count("pass"),
            s.count("fail"),
            s.count("error"),
            folder.pass_rate(t.outcome for t in s.trials),
        )
        for s in scenarios
    ]
    return rate_chart(bars)


# ---- a scenario -------------------------------------------------------------------------


def scenario_page(folder: ResultsFolder, state: RunState, key: ScenarioKey, page: int) -> str:
    s = state.scenario(key)
    checks = list(dict.fromkeys(name for t in s.trials for name, _, _ in t.checks))
    shown = page_of(s.trials, page)
    rate = folder.pass_rate(t.outcome for t in s.trials)
    parts = [
        f"<h1>{verdict(s.verdict)} {text(s.label)}</h1>",
        f"<p class=facts>{s.count('pass')} passed · {s.count('fail')} failed · "
        f"{s.count('error')} errored · pass rate {text(rate.describe()) if rate else '–'}</p>",
        dots(state, s.trials),
        scenario_curve_table(s.summary.pass_at, s.summary.pass_hat)
        if s.summary and s.summary.pass_at
        else "",
        "<h2>Checks per trial</h2>",
        pager(page, len(s.trials), scenario_query(key)),
        table(
            ["trial", "verdict", *checks, "reason"],
            [_check_row(state, t, checks) for t in shown],
            "checks",
        ),
    ]
    crumbs = [(href("run", state.run_id), state.run_id)]
    return document(s.label, "".join(parts), crumbs=crumbs, **_live(state))


def _check_row(state: RunState, t: TrialRow, checks: Sequence[str]) -> str:
    found = {name: (status, reason) for name, status, reason in t.checks}
    cells = "".join(_status_cell(found.get(name)) for name in checks)
    opened = link(trial_url(state, t.key), f"#{t.key.trial}")
    return (
        f'<tr data-verdict="{text(t.verdict)}"><td>{opened}</td>'
        f"<td>{verdict(t.verdict)}</td>{cells}<td>{text(t.reason)}</td></tr>"
    )


def _status_cell(found: tuple[str, str] | None) -> str:
    if found is None:
        return '<td class="dim">–</td>'
    status, reason = found
    return f'<td class="s-{text(status)}" title="{text(reason)}">{text(status)}</td>'


def _live(state: RunState) -> dict[str, str]:
    """What a page of a run in progress polls, and the stamp it compares; nothing once the
    run finished."""
    if not state.live:
        return {}
    return {"live": href("api", "run", state.run_id, "progress"), "stamp": state.stamp}
