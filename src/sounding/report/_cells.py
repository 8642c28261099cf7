"""Cells against the reference cell, within one run: what survives resampling.

Per cell and metric a rate (bool) or a median (number) with its bootstrap interval; against
the reference cell the interval of the difference, paired by (case, scenario, trial) when
both cells hold the same trials, and a state: established or inconclusive. Cost and latency
get intervals and no verdict. Nothing is published while the matrix is incomplete or a cell
holds an invalid trial; the reason is given instead.
"""

from __future__ import annotations

import html
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sounding.scoring import Comparison, Statistic, compare, measure_gap, publishable, summarize
from sounding.store import read_json

CELLS_SCHEMA = "sounding.cells/1"
USAGE_METRICS = {"cost_usd": ("usage", "cost_usd"), "duration_ms": ("duration_ms",)}


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


def cells_report(run_dir: Path, metrics: Sequence[str] | None = None) -> CellsReport | None:
    """The comparison of a run's cells (of `metrics`, or all); None for a run of one cell."""
    run = read_json(run_dir / "run.json")
    cells = list(run.get("cells") or [])
    if len(cells) < 2:
        return None
    reference = run.get("reference_cell") or cells[0]
    trials = read_json(run_dir / "measures.json")["trials"]
    report = CellsReport(reference, cells)
    expected, recorded = len(run["trials"]), len(trials)
    invalid = _invalid(trials)
    by_cell = {cell: [t for t in trials if t["cell"] == cell] for cell in cells}
    for cell in cells:
        if cell != reference:
            report.gaps.extend(
                _gaps(
                    by_cell[reference],
                    by_cell[cell],
                    (reference, cell),
                    expected,
                    recorded,
                    invalid,
                    metrics,
                )
            )
    if expected != recorded or any(invalid.values()):
        report.notes.append(_why_withheld(report.gaps))
    return report


def _invalid(trials: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for trial in trials:
        if trial["state"] != "scored":
            counts[trial["cell"]] = counts.get(trial["cell"], 0) + 1
    return counts


def _why_withheld(gaps: list[CellGap]) -> str:
    reasons = sorted({g.comparison.withheld for g in gaps if g.comparison.withheld})
    return "nothing is published as a difference: " + "; ".join(reasons or ["see below"])


def _gaps(
    ref: list[dict[str, Any]],
    cand: list[dict[str, Any]],
    names: tuple[str, str],
    expected: int,
    recorded: int,
    invalid: dict[str, int],
    only: Sequence[str] | None,
) -> list[CellGap]:
    keys = (_keys(ref), _keys(cand))
    paired = sorted(keys[0], key=str) == sorted(keys[1], key=str)
    gaps = []
    for metric in only or _metrics(ref, cand):
        left, right = [_metric(t, metric) for t in ref], [_metric(t, metric) for t in cand]
        if not _comparable(left, right):
            continue
        gap = compare(
            left,
            right,
            paired=paired,
            keys=keys if paired else None,
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
    for metric, path in USAGE_METRICS.items() if only is None else ():
        left, right = [_dig(t, path) for t in ref], [_dig(t, path) for t in cand]
        if _comparable(left, right):
            gap = measure_gap(
                left, right, paired=paired, keys=keys if paired else None, names=names
            )
            gaps.append(CellGap(metric, names[1], gap, False))
    return gaps


def _keys(trials: list[dict[str, Any]]) -> list[Hashable]:
    return [(t["case"], t["scenario"], t["trial"]) for t in trials]


def _metrics(*sides: list[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {"passed": None, "composite": None}
    for side in sides:
        for trial in side:
            names.update(dict.fromkeys(trial.get("metrics", {})))
    return list(names)


def _metric(trial: dict[str, Any], name: str) -> Any:
    if trial["state"] != "scored":
        return None
    return trial.get("metrics", {}).get(name)


def _dig(trial: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = trial
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _comparable(left: Sequence[object], right: Sequence[object]) -> bool:
    """Both sides judged something, and of one kind: rates with rates, medians with medians."""
    a, b = summarize(left), summarize(right)
    kinds = {Statistic.RATE, Statistic.MEDIAN}
    return a.statistic in kinds and a.statistic is b.statistic
