"""Cells against the reference cell, within one run: what survives resampling.

Per cell and metric a rate (bool) or a median (number) with its bootstrap interval; against
the reference cell the interval of the difference, paired by (case, scenario, trial) when
both cells hold the same trials, and a state: established or inconclusive. Cost and latency
get intervals and no verdict. Nothing is published while the matrix is incomplete or a cell
holds an invalid trial; the reason is given instead.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sounding.scoring import Comparison, Statistic, compare, measure_gap, publishable, summarize
from sounding.store import Results, Trial

CELLS_SCHEMA = "sounding.cells/1"
USAGE_METRICS = ("cost_usd", "duration_ms")  # an interval each, never a verdict


@dataclass(frozen=True)
class CellGap:
    """One metric of one cell against the reference cell."""

    metric: str
    cell: str
    comparison: Comparison
    verdict: bool  # False for cost and latency: an interval, never a verdict

    @property
    def state(self) -> str:
        if self.comparison.withheld:
            return "withheld"
        if not self.verdict:
            return "no verdict"
        gap = self.comparison
        return gap.direction.value if gap.direction else "inconclusive"

    def as_dict(self) -> dict[str, Any]:
        gap = self.comparison
        return {
            "metric": self.metric,
            "cell": self.cell,
            "state": self.state,
            "paired": gap.paired,
            "reference": gap.reference_summary.describe(),
            "candidate": gap.candidate_summary.describe(),
            "difference": gap.interval.model_dump(),
            "withheld": gap.withheld,
        }


@dataclass
class CellsReport:
    reference: str
    cells: list[str]
    gaps: list[CellGap] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": CELLS_SCHEMA,
            "reference": self.reference,
            "cells": self.cells,
            "notes": self.notes,
            "gaps": [gap.as_dict() for gap in self.gaps],
        }

    def lines(self) -> list[str]:
        """Plain text: the established gaps first, then a count of the rest."""
        out = [f"cells against the reference '{self.reference}':", *self.notes]
        shown = [g for g in self.gaps if g.state in ("improvement", "regression")]
        for gap in shown:
            out.append(
                f"  {gap.state.upper():<11} {gap.cell}: {gap.metric} "
                f"{gap.comparison.interval.describe(signed=True)}"
            )
        rest = len(self.gaps) - len(shown)
        if not shown:
            out.append("  no difference survives resampling")
        if rest:
            out.append(
                f"  ({rest} more: inconclusive, withheld or without verdict; "
                "see `sounding report --markdown`)"
            )
        return out

    def markdown(self) -> str:
        rows = [
            f"| {_md(g.cell)} | {_md(g.metric)} | {g.state} | "
            f"{_md(g.comparison.reference_summary.describe())} | "
            f"{_md(g.comparison.candidate_summary.describe())} | "
            f"{_md(g.comparison.interval.describe(signed=True))} |"
            for g in self.gaps
        ]
        head = [
            f"#### Cells against the reference `{_md(self.reference)}`",
            "",
            *[f"> {_md(note)}" for note in self.notes],
            "",
            "| cell | metric | state | reference | cell | difference (95 %) |",
            "|---|---|---|---|---|---|",
        ]
        return "\n".join(head + rows) + "\n"

    def html(self) -> str:
        rows = "".join(
            f"<tr class='{g.state.replace(' ', '-')}'><td>{_h(g.cell)}</td><td>{_h(g.metric)}"
            f"</td><td>{_h(g.state)}</td><td>{_h(g.comparison.reference_summary.describe())}"
            f"</td><td>{_h(g.comparison.candidate_summary.describe())}</td>"
            f"<td>{_h(g.comparison.interval.describe(signed=True))}</td></tr>"
            for g in self.gaps
        )
        notes = "".join(f"<p class='note'>{_h(note)}</p>" for note in self.notes)
        return (
            f"<p>Reference cell: <b>{_h(self.reference)}</b></p>{notes}<table><thead><tr>"
            "<th>cell</th><th>metric</th><th>state</th><th>reference</th><th>cell</th>"
            f"<th>difference (95 %)</th></tr></thead><tbody>{rows}</tbody></table>"
        )


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _h(text: str) -> str:
    return html.escape(text, quote=True)


def cells_report(results: Results, metrics: Sequence[str] | None = None) -> CellsReport | None:
    """The comparison of a run's cells (of `metrics`, or all); None for a run of one cell."""
    cells = list(results.plan.cells)
    if len(cells) < 2:
        return None
    reference = results.plan.reference_cell or cells[0]
    report = CellsReport(reference, cells)
    expected, recorded = len(results.planned), len(results.trials)
    invalid = Counter(t.cell for t in results.trials if t.score is None)
    by_cell = {cell: [_Measured.of(t) for t in results.trials if t.cell == cell] for cell in cells}
    for cell in cells:
        if cell != reference:
            sides = (by_cell[reference], by_cell[cell])
            counts = (expected, recorded, invalid)
            report.gaps.extend(_gaps(*sides, (reference, cell), counts, metrics))
    if expected != recorded or any(invalid.values()):
        report.notes.append(_why_withheld(report.gaps))
    return report


@dataclass(frozen=True)
class _Measured:
    """One trial as the cells report compares it: its key, metrics (None when it was not
    scored: an errored trial is left out of every statistic) and usage."""

    key: Hashable
    values: dict[str, Any] | None
    usage: dict[str, float | None]

    @classmethod
    def of(cls, trial: Trial) -> _Measured:
        values = trial.metric_values() if trial.score is not None else None
        usage = {"cost_usd": trial.cost_usd, "duration_ms": trial.duration_ms}
        return cls((trial.case, trial.scenario, trial.trial), values, usage)

    def metric(self, name: str) -> Any:
        return None if self.values is None else self.values.get(name)


def _why_withheld(gaps: list[CellGap]) -> str:
    reasons = sorted({g.comparison.withheld for g in gaps if g.comparison.withheld})
    return "nothing is published as a difference: " + "; ".join(reasons or ["see below"])


def _gaps(
    ref: list[_Measured],
    cand: list[_Measured],
    names: tuple[str, str],
    counts: tuple[int, int, Counter[str]],
    only: Sequence[str] | None,
) -> list[CellGap]:
    expected, recorded, invalid = counts
    keys = ([t.key for t in ref], [t.key for t in cand])
    paired = sorted(keys[0], key=str) == sorted(keys[1], key=str)
    pairing = keys if paired else None
    gaps = []
    for metric in only or _metrics(ref, cand):
        left, right = [t.metric(metric) for t in ref], [t.metric(metric) for t in cand]
        if not _comparable(left, right):
            continue
        gap = compare(
            left,
            right,
            paired=paired,
            keys=pairing,
            names=names,
            higher_is_better=metric != "duration_ms",
        )
        gap = publishable(
            gap,
            expected_trials=expected,
            recorded_trials=recorded,
            invalid_trials={n: invalid.get(n, 0) for n in names},
        )
        gaps.append(CellGap(metric, names[1], gap, True))
    for metric in USAGE_METRICS if only is None else ():
        left, right = [t.usage[metric] for t in ref], [t.usage[metric] for t in cand]
        if _comparable(left, right):
            gap = measure_gap(left, right, paired=paired, keys=pairing, names=names)
            gaps.append(CellGap(metric, names[1], gap, False))
    return gaps


def _metrics(*sides: list[_Measured]) -> list[str]:
    names: dict[str, None] = {"passed": None, "composite": None}
    for side in sides:
        for trial in side:
            names.update(dict.fromkeys(trial.values or {}))
    return list(names)


def _comparable(left: Sequence[object], right: Sequence[object]) -> bool:
    """Both sides judged something, and of one kind: rates with rates, medians with medians."""
    a, b = summarize(left), summarize(right)
    kinds = {Statistic.RATE, Statistic.MEDIAN}
    return a.statistic in kinds and a.statistic is b.statistic
