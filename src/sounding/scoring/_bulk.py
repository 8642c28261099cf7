"""Many scored records, aggregated as they come: counts per scenario and check, and the
worst offenders, never the records themselves.

A rate is passed / (passed + failed): an errored record (a check that crashed, a judge
that gave no verdict) and an unjudged check (one that needs the workspace or services a
bare record lacks) leave its denominator and are counted apart.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from itertools import count

from sounding.checks import Status
from sounding.scoring._stats import Interval, rate_interval
from sounding.scoring._trial import Kind, TrialScore, TrialVerdict

WORST = 10  # the offenders kept per scenario


@dataclass(frozen=True)
class Offender:
    """A record that failed or errored: where it is, its composite, how many of its counted
    checks failed, and why."""

    source: str
    verdict: TrialVerdict
    composite: float | None
    failed: int
    reason: str


@dataclass
class CheckTally:
    """One check of a scenario over every record scored against it."""

    name: str
    kind: Kind
    statuses: Counter[Status] = field(default_factory=Counter)

    @property
    def judged(self) -> int:
        return self.statuses[Status.PASSED] + self.statuses[Status.FAILED]

    def rate(self) -> float | None:
        return self.statuses[Status.PASSED] / self.judged if self.judged else None

    def interval(self) -> Interval | None:
        passed = self.statuses[Status.PASSED]
        return rate_interval(passed, self.judged) if self.judged else None


@dataclass
class ScenarioTally:
    """One scenario over every record matched to it: verdicts, checks, the worst offenders."""

    scenario: str
    verdicts: Counter[TrialVerdict] = field(default_factory=Counter)
    checks: dict[str, CheckTally] = field(default_factory=dict)
    unjudged: int = 0  # errored only because a check the record cannot judge was left open
    _worst: list[tuple[float, int, int, Offender]] = field(default_factory=list)
    _order: count[int] = field(default_factory=count)

    def add(self, source: str, score: TrialScore) -> None:
        self.verdicts[score.verdict] += 1
        for measured in score.checks:
            tally = self.checks.get(measured.name)
            if tally is None:
                tally = self.checks[measured.name] = CheckTally(measured.name, measured.kind)
            tally.statuses[measured.result.status] += 1
        if _unjudged(score):
            self.unjudged += 1
        elif score.verdict is not TrialVerdict.PASS:
            self._offend(source, score)

    def _offend(self, source: str, score: TrialScore) -> None:
        """Keep the `WORST` worst: the lowest composite (an error lowest of all), then the
        most failed checks, then the first seen."""
        value = -1.0 if score.composite is None else score.composite
        failed = sum(m.counted and m.result.status is Status.FAILED for m in score.checks)
        offender = Offender(source, score.verdict, score.composite, failed, score.reason)
        heapq.heappush(self._worst, (-value, failed, -next(self._order), offender))
        if len(self._worst) > WORST:
            heapq.heappop(self._worst)  # the least bad of those kept

    @property
    def records(self) -> int:
        return sum(self.verdicts.values())

    @property
    def judged(self) -> int:
        return self.verdicts[TrialVerdict.PASS] + self.verdicts[TrialVerdict.FAIL]

    @property
    def errors(self) -> int:
        """Records a check's crash or a judge's silence left without a verdict."""
        return self.verdicts[TrialVerdict.ERROR] - self.unjudged

    def rate(self) -> float | None:
        return self.verdicts[TrialVerdict.PASS] / self.judged if self.judged else None

    def interval(self) -> Interval | None:
        passed = self.verdicts[TrialVerdict.PASS]
        return rate_interval(passed, self.judged) if self.judged else None

    def worst(self) -> list[Offender]:
        """The worst offenders, worst first."""
        ordered = sorted(self._worst, key=lambda e: (-e[0], -e[1], -e[2]))
        return [entry[3] for entry in ordered]


def _unjudged(score: TrialScore) -> bool:
    """An error whose checks did not err: a check the bare record cannot judge (files, SQL,
    HTTP mocks: no workspace, no services) left the verdict open."""
    return score.verdict is TrialVerdict.ERROR and not any(
        m.result.status is Status.ERROR for m in score.checks
    )


LISTED = 100  # the unmatched and malformed records listed by name; beyond, only counted


@dataclass
class BulkScore:
    """Records scored against the scenarios of one case: a tally per scenario, and the
    records that matched no scenario or could not be read, counted (and the first listed).

    A scenario's gate holds when its pass rate (the point estimate) reaches `min_pass_rate`.
    """

    case: str
    match_field: str
    min_pass_rate: float
    tallies: dict[str, ScenarioTally] = field(default_factory=dict)
    unmatched: int = 0
    unmatched_listed: list[tuple[str, str]] = field(default_factory=list)
    malformed: int = 0
    malformed_listed: list[str] = field(default_factory=list)

    def add(self, scenario: str, source: str, score: TrialScore) -> None:
        tally = self.tallies.get(scenario)
        if tally is None:
            tally = self.tallies[scenario] = ScenarioTally(scenario)
        tally.add(source, score)

    def unmatch(self, source: str, label: str) -> None:
        self.unmatched += 1
        if len(self.unmatched_listed) < LISTED:
            self.unmatched_listed.append((source, label))

    def malform(self, error: str) -> None:
        self.malformed += 1
        if len(self.malformed_listed) < LISTED:
            self.malformed_listed.append(error)

    @property
    def scored(self) -> int:
        return sum(tally.records for tally in self.tallies.values())

    def below(self) -> list[ScenarioTally]:
        """The scenarios whose pass rate is under `min_pass_rate`."""
        return [
            t
            for t in self.tallies.values()
            if (r := t.rate()) is not None and r < self.min_pass_rate
        ]

    def undecided(self) -> list[ScenarioTally]:
        """The scenarios no record of which reached a pass or a fail."""
        return [t for t in self.tallies.values() if t.rate() is None]
