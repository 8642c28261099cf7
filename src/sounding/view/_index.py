"""The results folder as the viewer sees it: its runs, each read through `sounding.store`
and kept in memory by the signature (size, mtime) of the files it was read from.

A run in progress is read as it stands: a trial counts once its `trial.json` exists (the
store writes it whole, last, so it is there or not); one that cannot be read is left out
and named among the run's problems until it can. Nothing here opens a file for writing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sounding.report import RunComparison
from sounding.scoring import Interval, interval
from sounding.store import (
    ResultsError,
    RunLayout,
    RunPlan,
    RunSummary,
    ScenarioSummary,
    Trial,
    TrialKey,
    read_plan,
    read_summary,
    read_trial,
    run_in_progress,
    scenario_label,
)

Signature = tuple[int, int] | None  # (size, mtime_ns) of a file; None when it is absent
ScenarioKey = tuple[str, str, str]  # cell, case, scenario

_TRIAL, _PLAN, _SUMMARY = "trial.json", "run.json", "summary.json"


class ViewError(Exception):
    """What the viewer was asked for and cannot show: says which and how to get there."""


def signature(path: Path) -> Signature:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns)


def scenario_of(key: TrialKey) -> ScenarioKey:
    return (key.cell, key.case, key.scenario)


@dataclass(frozen=True)
class TrialRow:
    """What the run and scenario pages show of one trial, kept instead of the whole trial."""

    key: TrialKey
    verdict: str
    reason: str
    checks: tuple[tuple[str, str, str], ...]  # (name, status, reason), in the case's order
    duration_ms: float
    tokens: int | None
    cost_usd: float | None

    @classmethod
    def of(cls, trial: Trial) -> TrialRow:
        checks = trial.score.checks if trial.score else []
        return cls(
            key=trial.key,
            verdict=trial.verdict.value,
            reason=trial.reason,
            checks=tuple((m.name, m.result.status.value, m.result.reason) for m in checks),
            duration_ms=trial.duration_ms,
            tokens=trial.tokens,
            cost_usd=trial.spent_usd if trial.usage or trial.judge_usage else None,
        )

    @property
    def outcome(self) -> bool | None:
        return None if self.verdict == "error" else self.verdict == "pass"

    def fails(self, check: str) -> bool:
        return any(name == check and status != "passed" for name, status, _ in self.checks)


@dataclass(frozen=True)
class ScenarioRows:
    """One scenario of one cell: its line of the summary (None while the run goes on) and
    the rows of its finished trials, in trial order."""

    key: ScenarioKey
    summary: ScenarioSummary | None
    trials: list[TrialRow]

    @property
    def label(self) -> str:
        return scenario_label(*self.key)

    @property
    def verdict(self) -> str:
        return self.summary.verdict.value if self.summary else "running"

    def count(self, verdict: str) -> int:
        return sum(t.verdict == verdict for t in self.trials)


@dataclass(frozen=True)
class RunState:
    """A run as it stood when it was last read."""

    root: Path
    plan: RunPlan
    summary: RunSummary | None
    rows: list[TrialRow]
    problems: list[str]
    running: bool

    @property
    def run_id(self) -> str:
        return self.root.name

    @property
    def live(self) -> bool:
        """Not finished: no summary yet (it runs, or it was stopped)."""
        return self.summary is None

    @property
    def status(self) -> str:
        if self.summary is not None:
            return self.summary.outcome
        return "running" if self.running else "stopped"

    @property
    def stamp(self) -> str:
        """Changes whenever the run moves on: what a page of it compares to reload."""
        return f"{self.run_id}:{self.status}:{len(self.rows)}:{len(self.problems)}"

    @property
    def cost_usd(self) -> float | None:
        costs = [r.cost_usd for r in self.rows if r.cost_usd is not None]
        return sum(costs) if costs else None

    @property
    def cells(self) -> list[str]:
        return list(dict.fromkeys(key.cell for key in self.plan.trials))

    def scenarios(self) -> list[ScenarioRows]:
        """Every planned scenario, in the plan's order, with its summary line and trials."""
        by_key: dict[ScenarioKey, list[TrialRow]] = {}
        for key in self.plan.trials:
            by_key.setdefault(scenario_of(key), [])
        for row in sorted(self.rows, key=lambda r: r.key.trial):
            by_key[scenario_of(row.key)].append(row)
        lines = {(s.cell, s.case, s.scenario): s for s in (self.summary or _NONE).scenarios}
        return [ScenarioRows(key, lines.get(key), rows) for key, rows in by_key.items()]

    def scenario(self, key: ScenarioKey) -> ScenarioRows:
        for found in self.scenarios():
            if found.key == key:
                return found
        raise ViewError(
            f"run {self.run_id} has no scenario {'/'.join(key)}: pick one from the run's page"
        )

    def trial_folder(self, key: TrialKey) -> Path:
        return self.plan.layout(self.root).trial_dir(key)

    def evidence_folder(self, key: TrialKey) -> Path:
        """Where the trial's artifacts are (for a re-scored run, in the run it re-scored)."""
        return self.plan.evidence_layout(self.root).trial_dir(key)

    def trial(self, key: TrialKey) -> Trial:
        """The whole trial, read now (the rows keep only what the lists show)."""
        if key not in set(self.plan.trials):
            raise ViewError(f"run {self.run_id} planned no trial {key.label}")
        folder = self.trial_folder(key)
        if signature(folder / _TRIAL) is None:
            raise ViewError(f"trial {key.label} of run {self.run_id} has not finished yet")
        try:
            return read_trial(folder)
        except ResultsError as exc:
            raise ViewError(str(exc)) from exc


_NONE = RunSummary(run_id="", scenarios=[])


@dataclass
class _RunCache:
    """What was read of one run, with the signature of each file it came from."""

    plan: tuple[Signature, RunPlan] | None = None
    summary: tuple[Signature, RunSummary | None] | None = None
    trials: dict[TrialKey, tuple[Signature, TrialRow | str]] = field(default_factory=dict)
    state: RunState | None = None  # as last read
    lock: threading.Lock = field(default_factory=threading.Lock)


class ResultsFolder:
    """The results folder the viewer serves: its runs by id, each read when asked for and
    read again only where a file changed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._runs: dict[str, _RunCache] = {}
        self._lock = threading.Lock()
        self._intervals: dict[tuple[bool, ...], Interval] = {}
        self._compared: dict[tuple[str, ...], RunComparison] = {}

    def run_ids(self) -> list[str]:
        """The runs in the folder, newest first (a folder holding a run.json)."""
        try:
            names = os.listdir(self.root)
        except OSError as exc:
            raise ViewError(f"{self.root}: cannot list the folder ({exc.strerror})") from exc
        found = [n for n in names if not n.startswith(".") and (self.root / n / _PLAN).is_file()]
        return sorted(found, reverse=True)

    def run(self, run_id: str, *, fresh: bool = True) -> RunState:
        """The run named `run_id` as it is now; ViewError when there is none. Not `fresh`:
        as it was last read, when it was (a trial's page reads its own trial anew, and
        needs no look at the thousands of others)."""
        if run_id.startswith(".") or "/" in run_id or run_id not in self.run_ids():
            raise ViewError(
                f"{self.root} holds no run {run_id!r}: the runs page lists those it holds"
            )
        with self._lock:
            cache = self._runs.setdefault(run_id, _RunCache())
        with cache.lock:
            if fresh or cache.state is None:
                cache.state = _refresh(self.root / run_id, cache)
            return cache.state

    def comparison(
        self,
        states: tuple[RunState, RunState],
        compare: Callable[[tuple[RunState, RunState]], RunComparison],
    ) -> RunComparison:
        """`compare(states)`, made once while neither run changes (its bootstraps are slow)."""
        key = tuple(state.stamp for state in states)
        if key not in self._compared:
            self._compared = {key: compare(states)}  # the latest pair only
        return self._compared[key]

    def pass_rate(self, outcomes: Iterable[bool | None]) -> Interval | None:
        """The bootstrap interval of a pass rate (`sounding.scoring.interval`), computed once
        per sequence of outcomes: a seeded bootstrap gives the same answer every time."""
        judged = tuple(o for o in outcomes if o is not None)
        if not judged:
            return None
        if judged not in self._intervals:
            self._intervals[judged] = interval(list(judged))
        return self._intervals[judged]


def _refresh(root: Path, cache: _RunCache) -> RunState:
    plan = _plan(root, cache)
    summary, problems = _summary(root, cache)
    layout = plan.layout(root)
    rows: list[TrialRow] = []
    for key in plan.trials:
        found = _row(layout, key, cache)
        if isinstance(found, TrialRow):
            rows.append(found)
        elif found:
            problems.append(found)
    running = summary is None and run_in_progress(root)
    return RunState(root, plan, summary, rows, problems, running)


def _plan(root: Path, cache: _RunCache) -> RunPlan:
    sig = signature(root / _PLAN)
    if cache.plan is None or cache.plan[0] != sig:
        try:
            cache.plan = (sig, read_plan(root))
        except ResultsError as exc:
            raise ViewError(str(exc)) from exc
    return cache.plan[1]


def _summary(root: Path, cache: _RunCache) -> tuple[RunSummary | None, list[str]]:
    sig = signature(root / _SUMMARY)
    if cache.summary is None or cache.summary[0] != sig:
        try:
            cache.summary = (sig, read_summary(root))
        except ResultsError as exc:  # shown as a problem; the trials still show
            return None, [str(exc)]
    return cache.summary[1], []


def _row(layout: RunLayout, key: TrialKey, cache: _RunCache) -> TrialRow | str | None:
    """The trial's row, its problem when its trial.json cannot be read, None before it
    exists."""
    folder = layout.trial_dir(key)
    sig = signature(folder / _TRIAL)
    if sig is None:
        cache.trials.pop(key, None)
        return None
    kept = cache.trials.get(key)
    if kept is None or kept[0] != sig:
        try:
            kept = (sig, TrialRow.of(read_trial(folder)))
        except ResultsError as exc:
            kept = (sig, str(exc))
        cache.trials[key] = kept
    return kept[1]
