"""Cells against the reference cell, within one run: what survives resampling.

Per cell and metric a rate (bool) or a median (number) with its bootstrap interval; against
the reference cell the interval of the difference, paired by (case, scenario, trial) when
both cells hold the same trials, and a state: established or inconclusive. Cost and latency
get intervals and no verdict. Nothing is published while the matrix is incomplete or a cell
holds an invalid trial; the reason is given instead.

`metric_gaps` is the comparison of two sets of trials that `sounding compare` uses too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from html import escape
from typing import Any

from sounding.scoring import Comparison, Statistic, compare, measure_gap, publishable, summarize
from sounding.store import SCOPE, Results, Trial

CELLS_SCHEMA = "sounding.cells/1"
_COLUMNS = ("cell", "metric", "state", "reference", "cell", "difference (95 %)")

Publish = Callable[[Comparison], Comparison]  # a comparison as it may be published


def state_of(comparison: Comparison | None) -> str:
    """regression, improvement, inconclusive, withheld, no verdict (cost and latency), or
    not compared."""
    if comparison is None:
        return "not compared"
    if comparison.withheld:
        return "withheld"
    if comparison.state is None:
        return "no verdict"
    return comparison.direction.value if comparison.direction else "inconclusive"


@dataclass(frozen=True)
class CellGap:
    """One metric of one cell against the reference cell."""

    metric: str
    cell: str
    comparison: Comparison

    @property
    def state(self) -> str:
        return state_of(self.comparison)

    def columns(self) -> list[str]:
        gap = self.comparison
        return [
            self.cell,
            self.metric,
            self.state,
            gap.reference_summary.describe(),
            gap.candidate_summary.describe(),
            gap.interval.describe(signed=True),
        ]

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
        head = [
            f"#### Cells against the reference `{_md(self.reference)}`",
            "",
            *[f"> {_md(note)}" for note in self.notes],
            "",
            _md_row(_COLUMNS),
            "|---|---|---|---|---|---|",
        ]
        return "\n".join(head + [_md_row(g.columns()) for g in self.gaps]) + "\n"

    def html(self) -> str:
        rows = "".join(
            f"<tr class='{g.state.replace(' ', '-')}'>{_html_row(g.columns(), 'td')}</tr>"
            for g in self.gaps
        )
        notes = "".join(f"<p class='note'>{escape(note)}</p>" for note in self.notes)
        return (
            f"<p>Reference cell: <b>{escape(self.reference)}</b></p>{notes}<table><thead><tr>"
            f"{_html_row(_COLUMNS, 'th')}</tr></thead><tbody>{rows}</tbody></table>"
        )


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_row(columns: Sequence[str]) -> str:
    return "| " + " | ".join(map(_md, columns)) + " |"


def _html_row(columns: Sequence[str], tag: str) -> str:
    return "".join(f"<{tag}>{escape(text)}</{tag}>" for text in columns)


def cells_report(results: Results, metrics: Sequence[str] | None = None) -> CellsReport | None:
    """The comparison of a run's cells (of `metrics`, or all of them with cost and latency);
    None for a run of one cell."""
    cells = list(results.plan.cells)
    if len(cells) < 2:
        return None
    reference = results.plan.reference_cell or cells[0]
    report = CellsReport(reference, cells)
    expected, recorded = len(results.planned), len(results.trials)
    invalid = Counter(t.cell for t in results.errored)
    publish = partial(
        publishable, expected_trials=expected, recorded_trials=recorded, invalid_trials=invalid
    )
    by_cell = {cell: [t for t in results.trials if t.cell == cell] for cell in cells}
    for cell in cells:
        if cell == reference:
            continue
        ref, cand = by_cell[reference], by_cell[cell]
        lower = results.plan.lower_is_better
        compared, _ = metric_gaps(
            ref, cand, (reference, cell), metrics, scoped=True, lower_is_better=lower
        )
        report.gaps += [CellGap(metric, cell, publish(gap)) for metric, gap in compared.items()]
        if metrics is None:
            report.gaps += _usage_gaps(ref, cand, (reference, cell))
    if expected != recorded or any(invalid.values()):
        report.notes.append(_why_withheld(report.gaps))
    return report


def _why_withheld(gaps: list[CellGap]) -> str:
    reasons = sorted({g.comparison.withheld for g in gaps if g.comparison.withheld})
    return "nothing is published as a difference: " + "; ".join(reasons or ["see below"])


def _usage_gaps(ref: list[Trial], cand: list[Trial], names: tuple[str, str]) -> list[CellGap]:
    """Cost and latency: an interval each, never a verdict."""
    gaps = []
    for metric in ("cost_usd", "duration_ms"):
        left, right = [getattr(t, metric) for t in ref], [getattr(t, metric) for t in cand]
        if _comparable(left, right):
            gap = measure_gap(left, right, names=names, **_pairing(ref, cand))
            gaps.append(CellGap(metric, names[1], gap))
    return gaps


def metric_gaps(
    left: Sequence[Trial],
    right: Sequence[Trial],
    names: tuple[str, str],
    only: Sequence[str] | None = None,
    *,
    scoped: bool = False,
    lower_is_better: Iterable[str] = (),
) -> tuple[dict[str, Comparison], dict[str, str]]:
    """Each metric (of `only`, or every one) both sides judged with one kind, rates with rates
    and medians with medians, compared by `sounding.scoring.compare`; and why a metric that
    both sides judged could still not be compared (no trial judged on both sides pairs).

    A difference of a metric in `lower_is_better` (and of a validator's `duration_ms`) is
    an improvement when it goes down; of any other, when it goes up.

    A trial the harness could not score counts in no metric. `scoped`, for trials of
    several scenarios: a check counts over the trials of its own scenario only, under its
    scenario's name (`Trial.keyed_metrics`).
    """
    values = Trial.keyed_metrics if scoped else Trial.metric_values
    before = [values(t) if t.score is not None else {} for t in left]
    after = [values(t) if t.score is not None else {} for t in right]
    lower = {"duration_ms", *lower_is_better}
    gaps: dict[str, Comparison] = {}
    failed: dict[str, str] = {}
    for name in only or dict.fromkeys(name for values in (*before, *after) for name in values):
        mine = _holding(name, left, before), _holding(name, right, after)
        ref, cand = [v.get(name) for _, v in mine[0]], [v.get(name) for _, v in mine[1]]
        if not _comparable(ref, cand):
            continue
        better = name not in lower
        pairing = _pairing([t for t, _ in mine[0]], [t for t, _ in mine[1]])
        try:
            gaps[name] = compare(ref, cand, names=names, higher_is_better=better, **pairing)
        except ValueError as exc:
            failed[name] = str(exc)
    return gaps, failed


def _holding(
    name: str, trials: Sequence[Trial], values: Sequence[dict[str, Any]]
) -> list[tuple[Trial, dict[str, Any]]]:
    """The trials a metric is weighed over: those of its scenario for a check's (a trial of
    another scenario did not leave it unjudged: it never had it), every one otherwise."""
    pairs = list(zip(trials, values, strict=True))
    return [(t, v) for t, v in pairs if name in v] if SCOPE in name else pairs


def _pairing(left: Sequence[Trial], right: Sequence[Trial]) -> dict[str, Any]:
    """Paired by (case, scenario, trial) when both sides hold the same trials."""
    keys: tuple[list[Hashable], list[Hashable]] = (
        [(t.case, t.scenario, t.trial) for t in left],
        [(t.case, t.scenario, t.trial) for t in right],
    )
    paired = set(keys[0]) == set(keys[1])
    return {"paired": paired, "keys": keys if paired else None}


def _comparable(left: Sequence[object], right: Sequence[object]) -> bool:
    """Both sides judged something, and of one kind: rates with rates, medians with medians."""
    kind = summarize(left).statistic
    return kind in (Statistic.RATE, Statistic.MEDIAN) and kind is summarize(right).statistic
