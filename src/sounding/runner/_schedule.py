"""The trials of an adaptive run (`--until-decided`), planned as the outcomes come in.

A scenario runs in rounds: round n is trial n in every cell, handed out together, so the
cells stay in step and a comparison of them stays paired. A scenario gets a new round
while some cell of it is still open under `sounding.scoring.decide`, and never more rounds
than its finished trials justify: `trials_needed`, the trials it would take in all if every
trial still to come agreed with those before it. With trials still running, that is the
most it may have started; an errored trial (no outcome) justifies one more. Scenarios take
their rounds in turn, lowest round first, as a fixed run interleaves its trials.

The pool's workers ask `take` for a trial and tell `finished` its outcome; a worker that
finds nothing to start while trials are running waits for their outcomes.
"""

from __future__ import annotations

import heapq
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from sounding.runner._cells import Cell
from sounding.runner._trial import TrialPlan
from sounding.runner._workspace import Origin
from sounding.scoring import StopRule, TrialVerdict, trials_needed
from sounding.spec import Case, Scenario
from sounding.store import RunLayout, Trial, TrialKey


@dataclass
class _Outcomes:
    """One cell's finished trials of a scenario, as the rule counts them."""

    passed: int = 0
    failed: int = 0
    errors: int = 0

    def add(self, verdict: TrialVerdict) -> None:
        self.passed += verdict is TrialVerdict.PASS
        self.failed += verdict is TrialVerdict.FAIL
        self.errors += verdict is TrialVerdict.ERROR

    def needed(self, rule: StopRule) -> int:
        return trials_needed(rule, self.passed, self.failed, self.errors)


@dataclass
class _Scenario:
    """One scenario in every cell: the rounds it started, the trials of them still to start
    (`owed`: round and cell index), and each cell's outcomes."""

    index: int  # its place in the run's order
    case: Case
    scenario: Scenario
    origin: Origin
    rule: StopRule
    outcomes: list[_Outcomes]  # per cell, in the cells' order
    rounds: int = 0
    owed: set[tuple[int, int]] = field(default_factory=set)

    @property
    def target(self) -> int:
        """The rounds its finished trials justify: the most any of its cells needs."""
        return max(outcome.needed(self.rule) for outcome in self.outcomes)

    @property
    def planned(self) -> int:
        """The rounds it takes in all if every trial still to come agrees (for progress)."""
        return max(self.rounds, self.target)

    def next_round(self) -> int | None:
        """The round of the next trial it may start; None while it may start none."""
        if self.owed:
            return min(self.owed)[0]
        return self.rounds + 1 if self.rounds < self.target else None

    def start(self) -> tuple[int, int]:
        """Take its next trial (round, cell index), opening a round when none is owed."""
        if not self.owed:
            self.open_to(self.rounds + 1)
        step = min(self.owed)
        self.owed.discard(step)
        return step

    def open_to(self, last: int) -> None:
        """Every cell owes each round up to `last` that it had not started."""
        cells = range(len(self.outcomes))
        self.owed |= {(n, cell) for n in range(self.rounds + 1, last + 1) for cell in cells}
        self.rounds = max(self.rounds, last)


class Schedule:
    """The plans of an adaptive run, given to the pool's workers one at a time (`Plans`)."""

    def __init__(
        self,
        scenarios: list[tuple[Case, Scenario, Origin, StopRule]],
        cells: list[Cell],
        layout: RunLayout,
    ) -> None:
        self._cells, self._layout = cells, layout
        self._scenarios = [
            _Scenario(i, case, scenario, origin, rule, [_Outcomes() for _ in cells])
            for i, (case, scenario, origin, rule) in enumerate(scenarios)
        ]
        self._by_name = {(s.case.name, s.scenario.id): s for s in self._scenarios}
        self._ready: list[tuple[int, int]] = []  # (round, scenario index), some out of date
        self._changed = threading.Condition()
        self._running = 0
        self._closed = False
        self.expected = 0  # trials the run takes if every trial still to come agrees
        for scenario in self._scenarios:
            self._update(scenario, 0)

    @property
    def most(self) -> int:
        """The most trials the run may take."""
        return sum(s.rule.most for s in self._scenarios) * len(self._cells)

    def restore(self, trial: Trial) -> None:
        """A trial a resumed run had finished: counted, and its round started; trials of its
        rounds that no cell finished are owed first."""
        with self._changed:
            scenario = self._by_name[(trial.case, trial.scenario)]
            before = scenario.planned
            cell = self._cell_index(trial.cell)
            scenario.open_to(trial.trial)
            scenario.owed.discard((trial.trial, cell))
            scenario.outcomes[cell].add(trial.verdict)
            self._update(scenario, before)

    def take(self) -> TrialPlan | None:
        with self._changed:
            while not self._closed:
                scenario = self._next()
                if scenario is not None:
                    return self._start(scenario)
                if not self._running:
                    return None  # every scenario is decided
                self._changed.wait()
            return None

    def finished(self, trial: Trial) -> None:
        with self._changed:
            scenario = self._by_name[(trial.case, trial.scenario)]
            before = scenario.planned
            scenario.outcomes[self._cell_index(trial.cell)].add(trial.verdict)
            self._running -= 1
            self._update(scenario, before)
            self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    @property
    def settled(self) -> bool:
        with self._changed:
            return not self._running and self._next() is None

    def taken(self) -> Iterator[TrialKey]:
        """The trials the run started, in run order: round by round, scenario by scenario."""
        last = max((s.rounds for s in self._scenarios), default=0)
        for n in range(1, last + 1):
            for scenario in self._scenarios:
                for cell in range(len(self._cells)) if n <= scenario.rounds else ():
                    if (n, cell) not in scenario.owed:
                        yield self._key(scenario, n, cell)

    def _start(self, scenario: _Scenario) -> TrialPlan:
        before = scenario.planned
        n, cell = scenario.start()
        self._running += 1
        self._update(scenario, before)
        key = self._key(scenario, n, cell)
        folder = self._layout.trial_dir(key)
        if folder.exists():  # what a killed run left of this trial: it starts over
            shutil.rmtree(folder)
        case, origin = scenario.case, scenario.origin
        return TrialPlan(key, case, scenario.scenario, origin, folder, self._cells[cell])

    def _next(self) -> _Scenario | None:
        """The scenario whose next trial comes first (lowest round, then run order)."""
        while self._ready:
            n, index = self._ready[0]
            scenario = self._scenarios[index]
            if scenario.next_round() == n:
                return scenario
            heapq.heappop(self._ready)  # out of date: the scenario moved on
        return None

    def _update(self, scenario: _Scenario, planned_before: int) -> None:
        """After a change to `scenario`: its place among the ready ones, and the run's size."""
        n = scenario.next_round()
        if n is not None:
            heapq.heappush(self._ready, (n, scenario.index))
        self.expected += (scenario.planned - planned_before) * len(self._cells)

    def _cell_index(self, name: str) -> int:
        return next(i for i, cell in enumerate(self._cells) if cell.name == name)

    def _key(self, scenario: _Scenario, n: int, cell: int) -> TrialKey:
        return TrialKey(self._cells[cell].name, scenario.case.name, scenario.scenario.id, n)
