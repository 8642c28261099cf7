"""Inline SVG charts and metric tables of one cell, for the HTML report.

A bar is a scenario's pass rate over its judged trials; its whisker is the bootstrap
interval of that rate (`sounding.scoring.interval`), so the reader sees how far the number
would move on another run. Errored trials are left out of every rate and counted apart.
The pass^k curve of a cell is its mean pass^k over scenarios at every k
(`sounding.scoring.mean_curve`), one point per k.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from math import ceil

from sounding._words import counted
from sounding.report._terminal import clipped
from sounding.scoring import CurvePoint, Interval, Statistic, interval, summarize
from sounding.store import SCOPE, SPENDING, ScenarioTrials, Trial

_LABEL = 240  # width of the label column
_BAR = 360  # width of a full bar (rate 1.0)
_ROW = 24  # height of one scenario's row
_TOP = 20  # room for the axis labels
_LABEL_CHARS = 34
_COLORS = {"pass": "#1a7f37", "flaky": "#9a6700", "fail": "#cf222e", "error": "#8250df"}


def cell_chart(scenarios: Sequence[ScenarioTrials]) -> str:
    """One horizontal bar per scenario, with the interval as a whisker."""
    return rate_chart([_counts(scenario) for scenario in scenarios])


def _counts(scenario: ScenarioTrials) -> RateBar:
    s = scenario.summary
    return (s.label, s.verdict.value, s.passed, s.failed, s.errors, scenario.pass_rate)


def _axis(height: int) -> str:
    ticks = []
    for fraction in (0.0, 0.5, 1.0):
        x = _x(fraction)
        ticks.append(
            f'<line x1="{x}" y1="{_TOP - 4}" x2="{x}" y2="{height}" stroke="#d0d7de"/>'
            f'<text x="{x}" y="{_TOP - 8}" text-anchor="middle">{fraction:.1f}</text>'
        )
    return "".join(ticks)


def _whisker(y: int, rate: Interval) -> str:
    low, high, mid = _x(rate.low), _x(rate.high), y + _ROW // 2
    return (
        f'<g stroke="#1f2328" stroke-width="1.5">'
        f'<line x1="{low}" y1="{mid}" x2="{high}" y2="{mid}"/>'
        f'<line x1="{low}" y1="{mid - 5}" x2="{low}" y2="{mid + 5}"/>'
        f'<line x1="{high}" y1="{mid - 5}" x2="{high}" y2="{mid + 5}"/></g>'
    )


def _note(y: int, text: str) -> str:
    return f'<text x="{_LABEL + _BAR + 8}" y="{y + 16}">{escape(text)}</text>'


def _x(fraction: float) -> float:
    return round(_LABEL + fraction * _BAR, 1)


RateBar = tuple[str, str, int, int, int, "Interval | None"]
"""A scenario as `rate_chart` draws it: label, verdict, passed, failed, errored, and the
interval of its pass rate (None when no trial was judged)."""


def rate_chart(bars: Sequence[RateBar]) -> str:
    """What `cell_chart` draws, from counts and intervals already computed rather than from
    the trials: one bar per scenario with its interval as a whisker."""
    width = _LABEL + _BAR + 120
    height = _TOP + _ROW * len(bars) + 4
    rows = "".join(_counted_bar(n, bar) for n, bar in enumerate(bars))
    return (
        f'<svg class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>pass rate per scenario, with its 95% bootstrap interval</title>"
        f"{_axis(height)}{rows}</svg>"
    )


def _counted_bar(row: int, bar: RateBar) -> str:
    label, verdict, passed, failed, errors, rate = bar
    y = _TOP + row * _ROW
    text = (
        f'<text x="{_LABEL - 8}" y="{y + 16}" text-anchor="end">'
        f"{escape(clipped(label, _LABEL_CHARS))}</text>"
        f'<rect x="{_LABEL}" y="{y + 4}" width="{_BAR}" height="{_ROW - 8}" fill="#f6f8fa"/>'
    )
    if rate is None:
        note = f"no judged trial ({errors} errored)"
        return f"<g><title>{escape(f'{label}: {note}')}</title>{text}{_note(y, note)}</g>"
    tip = f"{label}: {passed}/{passed + failed} passed, {rate.describe()}"
    return (
        f"<g><title>{escape(tip)}</title>{text}"
        f'<rect x="{_LABEL}" y="{y + 4}" width="{_x(rate.estimate) - _LABEL}" '
        f'height="{_ROW - 8}" fill="{_COLORS.get(verdict, "#59636e")}" opacity="0.85"/>'
        f"{_whisker(y, rate)}{_note(y, f'{passed}/{passed + failed}')}</g>"
    )


_PLOT_LEFT, _PLOT_TOP = 48, 36  # room for the y axis labels and title, and a point's label
_PLOT_WIDTH, _PLOT_HEIGHT = 420, 160
_LABELLED = 12  # up to this many points, each carries its value; beyond, its tooltip only


def cell_curve(points: Sequence[CurvePoint]) -> str:
    """A cell's pass^k drawn against k, and both estimators at every k in a table."""
    if not points:
        return '<p class="dim">no judged trial, so no pass@k or pass^k curve</p>'
    return f"<h4>pass^k at every k</h4>{curve_chart(points)}{curve_table(points)}"


def curve_chart(points: Sequence[CurvePoint]) -> str:
    """pass^k against k, one point per k with its value, for a cell's mean curve."""
    width, height = _PLOT_LEFT + _PLOT_WIDTH + 24, _PLOT_TOP + _PLOT_HEIGHT + 40
    last = len(points)
    dots = "".join(_curve_point(p, last) for p in points)
    line = " ".join(f"{_curve_x(p.k, last)},{_curve_y(p.pass_hat)}" for p in points)
    return (
        f'<svg class="chart curve" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
        "<title>pass^k for k = 1 … n: the mean over scenarios with at least k judged "
        f"trials</title>{_curve_axes(last)}"
        f'<polyline points="{line}" fill="none" stroke="#0969da" stroke-width="2"/>'
        f"{dots}</svg>"
    )


def _curve_axes(last: int) -> str:
    bottom = _PLOT_TOP + _PLOT_HEIGHT
    parts = []
    for value in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _curve_y(value)
        parts.append(
            f'<line x1="{_PLOT_LEFT}" y1="{y}" x2="{_PLOT_LEFT + _PLOT_WIDTH}" y2="{y}" '
            f'stroke="#d0d7de"/><text x="{_PLOT_LEFT - 6}" y="{y + 4}" '
            f'text-anchor="end">{value:.2f}</text>'
        )
    step = ceil(last / _LABELLED)
    for k in range(1, last + 1, step):
        parts.append(
            f'<text x="{_curve_x(k, last)}" y="{bottom + 16}" text-anchor="middle">{k}</text>'
        )
    parts.append(
        f'<text x="{_PLOT_LEFT + _PLOT_WIDTH / 2}" y="{bottom + 34}" text-anchor="middle">'
        f'k</text><text x="4" y="14">pass^k</text>'
    )
    return "".join(parts)


def _curve_point(point: CurvePoint, last: int) -> str:
    x, y = _curve_x(point.k, last), _curve_y(point.pass_hat)
    tip = f"k = {point.k}: pass^k {point.pass_hat:.3f}, over {counted(point.scenarios, 'scenario')}"
    label = (
        f'<text x="{x}" y="{y - 8}" text-anchor="middle">{point.pass_hat:.3f}</text>'
        if last <= _LABELLED
        else ""
    )
    dot = f'<circle cx="{x}" cy="{y}" r="4" fill="#0969da"/>'
    return f"<g><title>{escape(tip)}</title>{dot}{label}</g>"


def _curve_x(k: int, last: int) -> float:
    """k = 1 at the left end and k = last at the right; a lone point in the middle."""
    if last == 1:
        return _PLOT_LEFT + _PLOT_WIDTH / 2
    return round(_PLOT_LEFT + (k - 1) / (last - 1) * _PLOT_WIDTH, 1)


def _curve_y(value: float) -> float:
    """1 at the top of the plot, 0 at its bottom."""
    return round(_PLOT_TOP + (1 - value) * _PLOT_HEIGHT, 1)


def curve_table(points: Sequence[CurvePoint]) -> str:
    """A cell's mean pass@k and pass^k at every k, with how many scenarios each averages."""
    head = "<tr><th>k</th><th>scenarios</th><th>mean pass@k</th><th>mean pass^k</th></tr>"
    rows = "".join(
        f'<tr><td class="num">{p.k}</td><td class="num">{p.scenarios}</td>'
        f'<td class="num">{p.pass_at:.3f}</td><td class="num">{p.pass_hat:.3f}</td></tr>'
        for p in points
    )
    return f'<table class="curve">{head}{rows}</table>'


def scenario_curve_table(pass_at: Sequence[float], pass_hat: Sequence[float]) -> str:
    """One scenario's pass@k and pass^k in a row each, a column per k."""
    numbers = "".join(f'<th class="num">{k}</th>' for k in range(1, len(pass_at) + 1))
    rows = "".join(
        f"<tr><th>{name}</th>" + "".join(f'<td class="num">{v:.3f}</td>' for v in values) + "</tr>"
        for name, values in (("pass@k", pass_at), ("pass^k", pass_hat))
    )
    return f'<table class="curve"><tr><th>k</th>{numbers}</tr>{rows}</table>'


def curve_text(values: Sequence[float]) -> str:
    """A curve as one line, k = 1 first: `0.667 · 0.333 · 0.000`; `–` when it is empty."""
    return " · ".join(f"{v:.3f}" for v in values) or "–"


SPENT: dict[str, tuple[str, Callable[[float], str]]] = {
    "tokens": ("tokens", lambda v: f"{v:,.0f}"),
    "cost_usd": ("cost", lambda v: f"${v:.4f}"),
    "judge_cost_usd": ("judge cost", lambda v: f"${v:.4f}"),
    "simulator_cost_usd": ("simulator cost", lambda v: f"${v:.4f}"),
}
"""How each of `sounding.store.SPENDING` is named and written in the reports."""


def spent_text(name: str, span: Interval) -> str:
    """A spending's median per trial with its interval: `$0.0021 [$0.0018 – $0.0030]`."""
    form = SPENT[name][1]
    return f"{form(span.estimate)} [{form(span.low)} – {form(span.high)}]"


def spent_columns(scenarios: Sequence[ScenarioTrials]) -> list[str]:
    """The spendings some scenario of a report counted: its columns, in `SPENT` order."""
    return [name for name in SPENT if any(name in s.spending for s in scenarios)]


def metrics_table(trials: Sequence[Trial]) -> str:
    """The cell's pass rate, median duration, what its trials spent (errored ones too: their
    calls were paid for) and each check's rate or median, each with its interval, folded
    under one line: a reader opens it when the verdicts above raise a question."""
    scored = [t for t in trials if t.outcome is not None]
    rows = [_rate_row(trials)]
    durations = [t.duration_ms / 1000 for t in scored]
    if durations:
        span = interval(durations)
        over = counted(len(durations), "trial")
        rows.append(_row("median duration per trial", span, lambda v: f"{v:.2f}s", over))
    for name, (label, form) in SPENT.items():
        values = [SPENDING[name](t) for t in trials]
        measured = sum(v is not None for v in values)
        if measured:
            over = counted(measured, "trial")
            rows.append(_row(f"median {label} per trial", interval(values), form, over))
    rows.extend(_check_rows(scored))
    head = "<tr><th>metric</th><th>estimate</th><th>95% interval</th><th>over</th></tr>"
    table = f'<table class="metrics">{head}{"".join(rows)}</table>'
    return f'<details class="metrics"><summary>{len(rows)} metrics</summary>{table}</details>'


def _check_rows(scored: Sequence[Trial]) -> list[str]:
    """Every check (of its scenario) and validator metric: a rate for yes/no values, a
    median for numbers, over the trials it belongs to."""
    measured = [t.keyed_metrics() for t in scored]
    names = dict.fromkeys(name for values in measured for name in values)
    rows = []
    for name in names:
        values = [m.get(name) for m in measured if name in m or SCOPE not in name]
        summary = summarize(values)
        if summary.statistic is Statistic.RATE:
            over = counted(summary.judged, "judged trial")
            rows.append(_row(f"{name}: rate", interval(values), lambda v: f"{v:.2f}", over))
        elif summary.statistic is Statistic.MEDIAN:
            over = counted(summary.judged, "trial")
            rows.append(_row(f"{name}: median", interval(values), lambda v: f"{v:.4g}", over))
    return rows


def _rate_row(trials: Sequence[Trial]) -> str:
    outcomes = [t.outcome for t in trials]
    errored = sum(o is None for o in outcomes)
    left_out = f", {errored} errored left out" if errored else ""
    if errored == len(outcomes):
        return f"<tr><td>pass rate</td><td colspan=3>no judged trial{left_out}</td></tr>"
    over = f"{counted(len(outcomes) - errored, 'judged trial')}{left_out}"
    return _row("pass rate", interval(outcomes), lambda v: f"{v:.2f}", over)


def _row(name: str, span: Interval, form: Callable[[float], str], over: str) -> str:
    return (
        f"<tr><td>{escape(name)}</td><td class=num>{escape(form(span.estimate))}</td>"
        f"<td class=num>{escape(form(span.low))} – {escape(form(span.high))}</td>"
        f"<td class=dim>{escape(over)}; {span.draws:,} draws, seed {span.seed}</td></tr>"
    )
