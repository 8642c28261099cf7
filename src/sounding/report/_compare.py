"""`sounding compare BASELINE CANDIDATE`: which pass-rate differences survive resampling.

Per scenario of every cell both runs planned, and per cell over those scenarios, the pass
rate of the candidate is compared with the baseline's by a seeded bootstrap of the gap
(`sounding.scoring.compare`), paired by trial when both ran the same trials. A gap is
*established* when its interval keeps 0 out, and *inconclusive* otherwise. Duration and
cost get an interval and no verdict. While either run is incomplete or holds an errored
trial, no verdict is published (`sounding.scoring.publishable`) and the reason is given.
Beside the gaps, each side's pass@k and pass^k at every k (`sounding.scoring.mean_curve`):
a scenario's own, or for a cell the mean over the shared scenarios; descriptions, not
verdicts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from sounding._exit import ExitCode
from sounding._words import counted
from sounding.report._cells import Publish, metric_gaps, state_of
from sounding.scoring import (
    Comparison,
    CurvePoint,
    Direction,
    Tally,
    mean_curve,
    measure_gap,
    publishable,
)
from sounding.store import Results, ResultsError, Trial, load_results, scenario_label

COMPARE_SCHEMA = "sounding.compare/1"
BASELINE, CANDIDATE = "baseline", "candidate"
NAMES = (BASELINE, CANDIDATE)

ScenarioKey = tuple[str, str, str]  # cell, case, scenario
Value = Callable[[Trial], float | None]


@dataclass(frozen=True)
class Gap:
    """One compared unit: a scenario of a cell, or a whole cell over the shared scenarios."""

    cell: str
    case: str | None
    scenario: str | None
    pass_rate: Comparison | None
    duration: Comparison | None = None
    cost: Comparison | None = None
    note: str = ""  # why the pass rate has no comparison
    metrics: dict[str, Comparison] = field(default_factory=dict)  # per check and metric
    curves: dict[str, list[CurvePoint]] = field(default_factory=dict)  # per side

    def metric_states(self) -> dict[str, str]:
        return {name: state_of(c) for name, c in self.metrics.items()}

    @property
    def label(self) -> str:
        if self.case is None or self.scenario is None:
            return f"cell {self.cell}: all shared scenarios"
        return scenario_label(self.cell, self.case, self.scenario)

    @property
    def state(self) -> str:
        """regression, improvement, inconclusive, withheld, or not compared."""
        return state_of(self.pass_rate)

    def as_dict(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "case": self.case,
            "scenario": self.scenario,
            "state": self.state,
            "pass_rate": _dump(self.pass_rate),
            "duration_s": _dump(self.duration),
            "cost_usd": _dump(self.cost),
            "note": self.note,
            "metrics": {
                name: {"state": state_of(c), **c.model_dump(mode="json")}
                for name, c in self.metrics.items()
            },
            "curves": {
                side: [p.model_dump(mode="json") for p in points]
                for side, points in self.curves.items()
            },
        }


@dataclass(frozen=True)
class RunComparison:
    """The candidate run against the baseline run."""

    baseline: Results
    candidate: Results
    scenarios: list[Gap]
    cells: list[Gap]
    withheld: str = ""
    only_baseline: list[str] = field(default_factory=list)
    only_candidate: list[str] = field(default_factory=list)

    @property
    def gaps(self) -> list[Gap]:
        return [*self.scenarios, *self.cells]

    def count(self, state: str) -> int:
        """Pass-rate gaps in that state."""
        return sum(gap.state == state for gap in self.gaps)

    def metric_count(self, state: str) -> int:
        """Check and metric gaps (per scenario) in that state."""
        return sum(list(g.metric_states().values()).count(state) for g in self.scenarios)

    @property
    def exit_code(self) -> int:
        """1 when a regression is established; 3 when verdicts were withheld; 0 otherwise."""
        regression = Direction.REGRESSION.value
        if self.count(regression) or self.metric_count(regression):
            return ExitCode.FAIL
        return ExitCode.ERROR if self.withheld else ExitCode.PASS

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": COMPARE_SCHEMA,
            BASELINE: _side(self.baseline),
            CANDIDATE: _side(self.candidate),
            "publishable": not self.withheld,
            "withheld": self.withheld,
            "scenarios": [gap.as_dict() for gap in self.scenarios],
            "cells": [gap.as_dict() for gap in self.cells],
            "only_in_baseline": self.only_baseline,
            "only_in_candidate": self.only_candidate,
            **{f"{s}s": self.count(s) for s in ("regression", "improvement")},
            "inconclusive": self.count("inconclusive"),
            "metric_regressions": self.metric_count("regression"),
            "metric_improvements": self.metric_count("improvement"),
            "exit_code": self.exit_code,
        }


def compare_runs(baseline_dir: Path, candidate_dir: Path) -> RunComparison:
    """Compare two results folders; a ResultsError when either cannot be read or they share
    no scenario."""
    base, cand = load_results(baseline_dir), load_results(candidate_dir)
    base_keys, cand_keys = _scenario_keys(base), _scenario_keys(cand)
    shared = [key for key in base_keys if key in cand_keys]
    if not shared:
        raise ResultsError(
            f"{baseline_dir} and {candidate_dir} share no scenario (baseline: "
            f"{_labels(base_keys)}; candidate: {_labels(cand_keys)}); compare two runs "
            "of the same suite"
        )
    publish = partial(
        publishable,
        expected_trials=len(base.planned) + len(cand.planned),
        recorded_trials=len(base.trials) + len(cand.trials),
        invalid_trials={BASELINE: len(base.errored), CANDIDATE: len(cand.errored)},
    )
    cells = dict.fromkeys(key[0] for key in shared)
    return RunComparison(
        baseline=base,
        candidate=cand,
        scenarios=[_gap(base, cand, [key], publish, False) for key in shared],
        cells=[_gap(base, cand, [k for k in shared if k[0] == c], publish, True) for c in cells],
        withheld=_withheld(base, cand),
        only_baseline=_labels_list(k for k in base_keys if k not in cand_keys),
        only_candidate=_labels_list(k for k in cand_keys if k not in base_keys),
    )


def _scenario_keys(results: Results) -> list[ScenarioKey]:
    return list(dict.fromkeys((k.cell, k.case, k.scenario) for k in results.planned))


def _labels_list(keys: Iterable[ScenarioKey]) -> list[str]:
    return [f"{cell}/{case}/{scenario}" for cell, case, scenario in keys]


def _labels(keys: list[ScenarioKey]) -> str:
    shown = _labels_list(keys[:5])
    return ", ".join(shown) + (", …" if len(keys) > 5 else "") if shown else "none"


def _trials(results: Results, keys: list[ScenarioKey]) -> list[Trial]:
    wanted = set(keys)
    chosen = [t for t in results.trials if (t.cell, t.case, t.scenario) in wanted]
    return sorted(chosen, key=lambda t: (t.case, t.scenario, t.trial))


def _gap(
    base: Results, cand: Results, keys: list[ScenarioKey], publish: Publish, whole_cell: bool
) -> Gap:
    """A scenario, or a whole cell over `keys`: its pass rate, duration and cost, and for a
    scenario each check and metric, as `metric_gaps` compares them."""
    left, right = _trials(base, keys), _trials(cand, keys)
    lower = {*base.plan.lower_is_better, *cand.plan.lower_is_better}
    only = ["passed"] if whole_cell else None
    compared, failed = metric_gaps(left, right, NAMES, only, lower_is_better=lower)
    metrics = {name: publish(gap) for name, gap in compared.items()}
    rate = metrics.get("passed")
    cell, case, scenario = (keys[0][0], None, None) if whole_cell else keys[0]
    return Gap(
        cell=cell,
        case=case,
        scenario=scenario,
        pass_rate=rate,
        duration=_measure(left, right, lambda t: t.duration_ms / 1000),
        cost=_measure(left, right, lambda t: t.cost_usd),
        note="" if rate is not None else _unjudged(left, right) or failed["passed"],
        metrics={} if whole_cell else metrics,
        curves={BASELINE: _curve(left), CANDIDATE: _curve(right)},
    )


def _curve(trials: list[Trial]) -> list[CurvePoint]:
    """pass@k and pass^k at every k over the trials' scenarios: one scenario's own curve, or
    the mean over several, counted from the trials as the run's summary counts them."""
    tallies: dict[ScenarioKey, Tally] = {}
    for trial in trials:
        tally = tallies.setdefault((trial.cell, trial.case, trial.scenario), Tally())
        tally.add(trial.verdict, None)
    return mean_curve(tally.result(k=None) for tally in tallies.values())


def _unjudged(left: list[Trial], right: list[Trial]) -> str:
    """Why the pass rate has no comparison when a side holds no judged trial; "" otherwise."""
    for name, trials in ((BASELINE, left), (CANDIDATE, right)):
        if all(t.outcome is None for t in trials):
            errored = f" ({len(trials)} errored)" if trials else ""
            return f"no judged trial in the {name} run{errored}"
    return ""


def _measure(left: list[Trial], right: list[Trial], value: Value) -> Comparison | None:
    """The interval of the gap in a measured value over judged trials; None when a side has none."""
    ref = [value(t) for t in left if t.outcome is not None]
    cand = [value(t) for t in right if t.outcome is not None]
    if not any(v is not None for v in ref) or not any(v is not None for v in cand):
        return None
    return measure_gap(ref, cand, names=NAMES)


def _withheld(base: Results, cand: Results) -> str:
    """Why no verdict is published, in the words of `publishable`; "" when all may be."""
    reasons = []
    missing = len(base.missing) + len(cand.missing)
    if missing:
        total = len(base.planned) + len(cand.planned)
        reasons.append(f"matrix incomplete: {missing} of {total} trials missing")
    for name, results in ((BASELINE, base), (CANDIDATE, cand)):
        count = len(results.errored)
        if count:
            reasons.append(f"cell {name!r} holds {counted(count, 'invalid trial')}")
    return "; ".join(reasons)


def _side(results: Results) -> dict[str, Any]:
    return {
        "run_id": results.run_id,
        "path": str(results.root),
        "planned_trials": len(results.planned),
        "finished_trials": len(results.trials),
        "errored_trials": len(results.errored),
    }


def _dump(comparison: Comparison | None) -> dict[str, Any] | None:
    return comparison.model_dump(mode="json") if comparison else None


def compare_command(baseline_dir: Path, candidate_dir: Path, as_json: bool = False) -> int:
    """Print the comparison (or its JSON); exit 1 on an established regression, 0 otherwise,
    2 when a folder cannot be read."""
    try:
        result = compare_runs(baseline_dir, candidate_dir)
    except ResultsError as exc:
        Console(stderr=True, soft_wrap=True).print(
            f"[red]error:[/] {escape(str(exc))}", highlight=False
        )
        return ExitCode.USAGE
    if as_json:
        print(json.dumps(result.as_dict(), indent=1, ensure_ascii=False))
    else:
        print_comparison(Console(highlight=False, soft_wrap=True), result)
    return result.exit_code


_STYLE = {
    "regression": "bold red",
    "improvement": "bold green",
    "inconclusive": "dim",
    "withheld": "yellow",
    "not compared": "magenta",
}


def print_comparison(console: Console, result: RunComparison) -> None:
    for name, side in ((BASELINE, result.baseline), (CANDIDATE, result.candidate)):
        console.print(
            f"{name:<9} {escape(side.run_id)}: {len(side.trials)} of "
            f"{counted(len(side.planned), 'trial')} finished, {len(side.errored)} errored "
            f"({escape(str(side.root))})"
        )
    if result.withheld:
        console.print(f"[yellow]no difference is published:[/] {escape(result.withheld)}")
    console.print("\npass rate, candidate − baseline (95% bootstrap interval of the gap):")
    for gap in result.gaps:
        console.print(_rate_line(gap))
        for name, comparison in gap.metrics.items():
            state = state_of(comparison)
            if state in ("regression", "improvement"):
                console.print(
                    f"    [{_STYLE[state]}]{state.upper():<11}[/] {escape(name)}  "
                    f"{escape(comparison.interval.describe(signed=True))}"
                )
    _print_curves(console, result.gaps)
    _print_measures(console, "duration per trial (seconds)", [(g, g.duration) for g in result.gaps])
    _print_measures(console, "cost per trial (USD)", [(g, g.cost) for g in result.gaps])
    for title, labels in (
        ("only in baseline", result.only_baseline),
        ("only in candidate", result.only_candidate),
    ):
        if labels:
            console.print(f"{title} (not compared): {escape(', '.join(labels))}")
    console.print("\n" + _closing(result))


def _rate_line(gap: Gap) -> str:
    state = gap.state
    word = state.upper() if state in ("regression", "improvement") else state
    head = f"  [{_STYLE[state]}]{word:<13}[/] {escape(gap.label)}"
    rate = gap.pass_rate
    if rate is None:
        return f"{head}  {escape(gap.note)}"
    before, after = rate.reference_summary, rate.candidate_summary
    pairing = "paired by trial" if rate.paired else "unpaired"
    return (
        f"{head}  {before.successes or 0}/{before.judged} → {after.successes or 0}/{after.judged}"
        f"  {escape(rate.interval.describe(signed=True))}, {pairing}"
    )


def _print_curves(console: Console, gaps: Sequence[Gap]) -> None:
    """Each side's pass@k and pass^k in a column per k; for a cell, the scenarios each k
    averages too."""
    console.print(
        "\npass@k and pass^k at every k; a cell's is the mean over the shared scenarios with at "
        "least k judged trials:"
    )
    for gap in gaps:
        console.print(f"  {escape(gap.label)}")
        for line in _curve_lines(gap):
            console.print(f"    {line}".rstrip())


_CURVE_ROWS: tuple[tuple[str, Callable[[CurvePoint], str]], ...] = (
    ("pass@k", lambda p: f"{p.pass_at:.3f}"),
    ("pass^k", lambda p: f"{p.pass_hat:.3f}"),
    ("scenarios", lambda p: str(p.scenarios)),
)


def _curve_lines(gap: Gap) -> list[str]:
    """`k` with the column numbers, then per row a line for the baseline and the candidate."""
    longest = max((len(points) for points in gap.curves.values()), default=0)
    lines = [f"{'k':<20}" + "".join(f"{k:>7}" for k in range(1, longest + 1))]
    for name, form in _CURVE_ROWS[: 3 if gap.case is None else 2]:
        for side, points in gap.curves.items():
            cells = "".join(f"{form(p):>7}" for p in points) or f"{'–':>7}"
            lines.append(f"{name if side == BASELINE else '':<10}{side:<10}{cells}")
    return lines


def _print_measures(
    console: Console, title: str, gaps: Sequence[tuple[Gap, Comparison | None]]
) -> None:
    measured = [(g, c) for g, c in gaps if c is not None]
    if not measured:
        console.print(f"\n{title}: not recorded in both runs")
        return
    console.print(f"\n{title}, medians, an interval and never a verdict:")
    for gap, comparison in measured:
        before, after = comparison.reference_summary.estimate, comparison.candidate_summary.estimate
        console.print(
            f"  {escape(gap.label)}  {before:.4g} → {after:.4g}  "
            f"{escape(comparison.interval.describe(signed=True))}"
        )


def _closing(result: RunComparison) -> str:
    counts = (
        f"{result.count('regression')} regressions, {result.count('improvement')} improvements "
        f"established; {result.count('inconclusive')} inconclusive"
    )
    worse, better = result.metric_count("regression"), result.metric_count("improvement")
    if worse or better:
        counts += f"; checks and metrics: {worse} regressed, {better} improved"
    if result.withheld:
        return f"{counts}; {result.count('withheld')} withheld (the runs are not comparable yet)"
    return counts
