"""Score many records against one case file (`sounding score CASE --records PATH`).

Records are read one at a time, matched to a scenario, measured as a bare record is
(`score_record`: checks that need the workspace or services are unjudged), and tallied;
only counts and the worst offenders are kept, so memory stays flat however many there are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sounding.checks import Evidence, Judge
from sounding.record import RunRecord, read_records, record_label
from sounding.runner._rescore import judge_of_suite
from sounding.scoring import BulkScore, measure_trial
from sounding.spec import Case, Scenario
from sounding.spec._guards import suite_of


@dataclass(frozen=True)
class BulkOptions:
    """How records are matched and gated: one scenario for all (`scenario`), else the
    scenario each names under `match_field`; `min_pass_rate` is what each scenario's pass
    rate must reach."""

    scenario: str | None = None
    match_field: str = "scenario"
    min_pass_rate: float = 1.0
    record_format: str | None = None
    rejudge: bool = False


def score_records(case: Case, records: Path, options: BulkOptions) -> BulkScore:
    """Every record under `records` scored against the scenario it matches in `case`.

    A record that cannot be read, or that matches no scenario, is counted and listed; the
    others are still scored. The suite's judge judges, when the case file has one."""
    suite_dir = suite_of(case.path)
    scorer = _Scorer(case, options, suite_dir, judge_of_suite(suite_dir, options.rejudge))
    bulk = BulkScore(str(case.path), options.match_field, options.min_pass_rate)
    for found in read_records(records, options.record_format):
        if found.record is None:
            bulk.malform(str(found.error))
        else:
            scorer.score(bulk, found.source, found.record)
    return bulk


class _Scorer:
    def __init__(
        self, case: Case, options: BulkOptions, suite_dir: Path, judge: Judge | None
    ) -> None:
        self.by_id = {scenario.id: scenario for scenario in case.scenarios}
        self.fixed = case.scenario(options.scenario) if options.scenario is not None else None
        self.only = case.scenarios[0] if len(case.scenarios) == 1 else None
        self.field = options.match_field
        self.suite_dir = suite_dir
        self.judge = judge

    def score(self, bulk: BulkScore, source: str, record: RunRecord) -> None:
        scenario, label = self._match(record)
        if scenario is None:
            bulk.unmatch(source, label)
            return
        evidence = Evidence(record=record, scenario_id=scenario.id)
        score = measure_trial(scenario, evidence, suite_dir=self.suite_dir, judge=self.judge)
        bulk.add(scenario.id, source, score)

    def _match(self, record: RunRecord) -> tuple[Scenario | None, str]:
        """The scenario a record is scored against: `--scenario`, else the one it names,
        else the case's only scenario when it names none; and what it said."""
        if self.fixed is not None:
            return self.fixed, self.fixed.id
        label = record_label(record, self.field)
        if label is None:
            return self.only, f"no '{self.field}'"
        found = self.by_id.get(label) if isinstance(label, str) else None
        return found, f"{self.field} {label!r}"
