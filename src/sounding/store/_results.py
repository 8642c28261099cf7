"""A run's results folder read whole: its plan, its finished trials, its summary.

Reports and comparisons read a run through `load_results`; re-scoring and `sounding form`,
which look at one trial at a time, use `finished_trials` instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from sounding.scoring import Interval, interval
from sounding.store._documents import ResultsError
from sounding.store._layout import RunLayout, TrialKey
from sounding.store._run import RunPlan, RunSummary, ScenarioSummary, read_plan, read_summary
from sounding.store._trial import SPENDING, Trial, read_trial, trial_exists


@dataclass(frozen=True)
class ScenarioTrials:
    """A scenario's summary beside its finished trials, in trial order."""

    summary: ScenarioSummary
    trials: list[Trial]

    @cached_property
    def pass_rate(self) -> Interval | None:
        """The bootstrap interval of the pass rate over judged trials; None when none was."""
        outcomes = [t.outcome for t in self.trials]
        if not any(o is not None for o in outcomes):
            return None
        return interval(outcomes)

    @cached_property
    def spending(self) -> dict[str, Interval]:
        """The median per trial of each of `SPENDING` some trial counted, with its bootstrap
        interval. An errored trial's spending counts: its calls were paid for."""
        found = {name: [spent(t) for t in self.trials] for name, spent in SPENDING.items()}
        return {
            name: interval(values)
            for name, values in found.items()
            if any(v is not None for v in values)
        }

    @property
    def first_error(self) -> str:
        return next((t.reason for t in self.trials if t.outcome is None), "")


@dataclass(frozen=True)
class Results:
    """A run's results folder: the plan, the finished trials and (once it ended) the summary."""

    root: Path
    plan: RunPlan
    trials: list[Trial]
    summary: RunSummary | None = None

    @property
    def run_id(self) -> str:
        return self.plan.run_id

    @cached_property
    def _evidence(self) -> RunLayout:
        """Where the trials' evidence is (for a re-scored run, the run it re-scored): read
        once, not once per artifact a report shows."""
        return self.plan.evidence_layout(self.root)

    @property
    def planned(self) -> list[TrialKey]:
        return self.plan.trials

    @property
    def missing(self) -> list[TrialKey]:
        """Planned trials with no trial.json: the run was stopped before they finished."""
        done = {t.key for t in self.trials}
        return [key for key in self.planned if key not in done]

    @property
    def errored(self) -> list[Trial]:
        return [t for t in self.trials if t.outcome is None]

    @property
    def cells(self) -> list[str]:
        return list(dict.fromkeys(key.cell for key in self.planned))

    def folder(self, trial: Trial) -> Path:
        return self.plan.layout(self.root).trial_dir(trial.key)

    def finished(self) -> RunSummary:
        """The summary, or a ResultsError saying the run never finished and how to finish it."""
        if self.summary is not None:
            return self.summary
        raise ResultsError(
            f"{self.root / 'summary.json'}: not found: the run did not finish "
            f"({len(self.missing)} of {len(self.planned)} trials missing); "
            f"finish it with `sounding run SUITE --resume {self.run_id}`"
        )

    @cached_property
    def scenarios(self) -> list[ScenarioTrials]:
        """Every scenario of the summary with its trials; needs a finished run."""
        by_scenario: dict[tuple[str, str, str], list[Trial]] = {}
        for trial in sorted(self.trials, key=lambda t: t.trial):
            by_scenario.setdefault((trial.cell, trial.case, trial.scenario), []).append(trial)
        return [
            ScenarioTrials(s, by_scenario.get((s.cell, s.case, s.scenario), []))
            for s in self.finished().scenarios
        ]

    def text(self, trial: Trial, name: str) -> str | None:
        """A text artifact of the trial (`diff.patch`, `stdout.txt`, ...), from the run that
        holds its evidence (for a re-scored run, the run it re-scored); None when absent."""
        path = self._evidence.trial_dir(trial.key) / name
        if not path.is_file():
            return None
        return path.read_text(encoding="utf-8", errors="replace")


def load_results(run_dir: Path) -> Results:
    """Read a run's folder (`results/<run-id>/`): its plan, its finished trials, its summary."""
    plan = read_plan(run_dir)
    layout = plan.layout(run_dir)
    folders = [layout.trial_dir(key) for key in plan.trials]
    trials = [read_trial(folder) for folder in folders if trial_exists(folder)]
    return Results(run_dir, plan, trials, read_summary(run_dir))
