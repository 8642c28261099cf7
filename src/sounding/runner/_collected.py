"""A run's finished trials as they come, counted into its summary: each added to
measures.json and to its scenario's line, then let go."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from sounding.scoring import StopRule, Tally, TrialVerdict, decide
from sounding.spec import Case
from sounding.store import (
    Measures,
    RunLayout,
    RunSummary,
    ScenarioSummary,
    Trial,
    write_summary,
)


@dataclass
class _Line:
    """One cell × scenario over the trials finished so far: its tally, its first failure
    (by trial number) and the time its trials took. With no failure, the first failed
    unvalidated judge check stands in its place, so the line says what did not count."""

    tally: Tally = field(default_factory=Tally)
    failure: tuple[int, str] | None = None
    unvalidated: tuple[int, str] | None = None
    duration_ms: float = 0.0
    error_kinds: Counter[str] = field(default_factory=Counter)

    def add(self, trial: Trial) -> None:
        self.tally.add(trial.verdict, trial.score.composite if trial.score else None)
        self.duration_ms += trial.duration_ms
        if trial.error_kind is not None:
            self.error_kinds[trial.error_kind] += 1
        if trial.verdict is not TrialVerdict.PASS:
            self.failure = _first(self.failure, trial.trial, trial.reason)
        for judge in trial.score.unvalidated[:1] if trial.score else []:
            self.unvalidated = _first(self.unvalidated, trial.trial, judge.describe())

    @property
    def first_failure(self) -> str:
        found = self.failure or self.unvalidated
        return found[1] if found else ""


def _first(known: tuple[int, str] | None, trial: int, said: str) -> tuple[int, str]:
    """What the lowest-numbered trial said."""
    return known if known is not None and known[0] <= trial else (trial, said)


class Collected:
    """The run's finished trials as they come: each added to measures.json and counted on
    its scenario's line, for the summary; nothing more of them is kept.

    An adaptive run gives the rule it ran by (`until_decided`) and each scenario's own
    (`rules`, by case and scenario id): the summary says why each line stopped."""

    def __init__(
        self,
        cases: list[Case],
        layout: RunLayout,
        until_decided: StopRule | None = None,
        rules: Mapping[tuple[str, str], StopRule] | None = None,
    ) -> None:
        self._scenarios = {(c.name, s.id): s for c in cases for s in c.scenarios}
        self._until_decided, self._rules = until_decided, rules or {}
        self._order = {place: i for i, place in enumerate(self._scenarios)}
        self._lines: dict[tuple[str, str, str], _Line] = {}
        self._measures = Measures(layout.root, layout.run_id)
        self._run_id = layout.run_id
        self.ran = 0  # trials run now (not those a resumed run had finished before)
        self.all = 0  # every trial of the run finished so far, those of before included

    def add(self, trial: Trial, *, ran: bool = False) -> None:
        self._lines.setdefault((trial.cell, trial.case, trial.scenario), _Line()).add(trial)
        self._measures.add(trial)
        self.ran += ran
        self.all += 1

    def close(self) -> RunSummary:
        """measures.json in place, and summary.json: one line per cell × scenario, in
        case-file order."""
        self._measures.close()
        keys = sorted(self._lines, key=lambda k: (k[0], self._order.get(k[1:], 0)))
        summary = RunSummary(
            run_id=self._run_id,
            scenarios=[self._summary(k) for k in keys],
            until_decided=asdict(self._until_decided) if self._until_decided else None,
        )
        write_summary(self._measures.root, summary)
        return summary

    def discard(self) -> None:
        self._measures.discard()

    def _summary(self, key: tuple[str, str, str]) -> ScenarioSummary:
        cell, case, scenario_id = key
        scoring = self._scenarios[(case, scenario_id)].scoring
        line = self._lines[key]
        rule = self._rules.get((case, scenario_id))
        tally = line.tally
        result = tally.result(
            aggregation=scoring.replica_aggregation, threshold=scoring.pass_threshold, k=scoring.k
        )
        return ScenarioSummary(
            **result.model_dump(),
            cell=cell,
            case=case,
            scenario=scenario_id,
            first_failure=line.first_failure,
            duration_ms=round(line.duration_ms, 3),
            error_kinds=dict(sorted(line.error_kinds.items())),
            stopped=decide(rule, tally.passed, tally.failed, tally.errors) if rule else None,
        )
