"""A scenario's line of a finished run as a test sees it: passed, passed with a warning,
failed or error, and the message that says why."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sounding.scoring import ScenarioVerdict
    from sounding.store import ScenarioSummary, Trial


class PytestOutcome(StrEnum):
    """What pytest reports for a scenario."""

    PASSED = "passed"  # PASS
    WARNED = "warned"  # its gate held without every trial passing (FLAKY, `any`): passed, warned
    FAILED = "failed"  # FAIL, or FLAKY whose gate does not hold
    ERROR = "error"  # ERROR: errored trials leave the verdict open


class FlakyScenarioWarning(UserWarning):
    """A scenario passed its gate (`replica_aggregation: any`, `majority`, `mean`) although
    some of its trials failed: the test passes, and says so."""


@dataclass(frozen=True)
class Outcome:
    """One scenario of one cell over its trials, read from the run folder that holds them:
    what `sounding run` printed on its line, and each trial when a test asks for them."""

    line: ScenarioSummary
    run_dir: Path

    @property
    def verdict(self) -> ScenarioVerdict:
        """pass, flaky, fail or error (a `str` enum: `outcome.verdict == "pass"`)."""
        return self.line.verdict

    @property
    def passed(self) -> int:
        return self.line.passed

    @property
    def failed(self) -> int:
        return self.line.failed

    @property
    def errors(self) -> int:
        return self.line.errors

    @property
    def pass_rate(self) -> float | None:
        """Passed over judged trials (errors left out); None when no trial was judged."""
        judged = self.passed + self.failed
        return self.passed / judged if judged else None

    @property
    def pass_at_k(self) -> float | None:
        return self.line.pass_at_k

    @property
    def pass_hat_k(self) -> float | None:
        return self.line.pass_hat_k

    @property
    def gate(self) -> bool:
        """Whether the scenario's gate (`replica_aggregation`) holds: what `sounding run`'s
        exit code reads."""
        return self.line.gate

    @property
    def first_failure(self) -> str:
        return self.line.first_failure

    @property
    def test_outcome(self) -> PytestOutcome:
        if self.verdict == "error":
            return PytestOutcome.ERROR
        if not self.gate:
            return PytestOutcome.FAILED
        return PytestOutcome.PASSED if self.verdict == "pass" else PytestOutcome.WARNED

    @cached_property
    def trials(self) -> list[Trial]:
        """The scenario's finished trials in this cell, in trial order (trial.json each)."""
        from sounding.store import read_plan, read_trial, trial_exists

        plan = read_plan(self.run_dir)
        layout = plan.layout(self.run_dir)
        mine = (self.line.cell, self.line.case, self.line.scenario)
        keys = sorted(k for k in plan.trials if (k.cell, k.case, k.scenario) == mine)
        folders = [layout.trial_dir(key) for key in keys]
        return [read_trial(folder) for folder in folders if trial_exists(folder)]

    def check_rates(self) -> dict[str, float | None]:
        """Each check's pass rate over the trials that judged it (None: none did), by the
        name the terminal gives it (`expect[1] first_tool`, an invariant's name, ...)."""
        outcomes: dict[str, list[bool]] = {}
        for trial in self.trials:
            values = trial.metric_values()
            for measured in trial.score.checks if trial.score else []:
                judged = outcomes.setdefault(measured.name, [])
                if values[measured.name] is not None:
                    judged.append(bool(values[measured.name]))
        return {name: sum(o) / len(o) if o else None for name, o in outcomes.items()}

    def trial_dir(self, trial: Trial) -> Path:
        from sounding.store import read_plan

        return read_plan(self.run_dir).layout(self.run_dir).trial_dir(trial.key)

    def describe(self) -> str:
        """What the test report says: the verdict with pass@k and pass^k, the first trial
        that did not pass with its reason and folder, and the run folder to report on."""
        lines = [f"{self.verdict.upper()} {self.line.label}: {self._counts()}"]
        first = self._first_trial()
        if first is not None:
            said = "first error" if first.verdict == "error" else "first failure"
            lines.append(f"{said} (trial {first.trial}): {first.reason or '(no reason given)'}")
            lines.append(f"  trial folder: {self.trial_dir(first)}")
        elif self.first_failure:
            lines.append(f"first failure: {self.first_failure}")
        lines.append(f"run folder: {self.run_dir} (sounding report {self.run_dir})")
        return "\n".join(lines)

    def _counts(self) -> str:
        judged = self.passed + self.failed
        said = f"{self.passed} of {judged} judged trials passed"
        if self.errors:
            kinds = ", ".join(f"{n} {kind}" for kind, n in self.line.error_kinds.items())
            said += f", {self.errors} erred" + (f" ({kinds})" if kinds else "")
        k = self.line.k
        if k is not None and self.pass_at_k is not None and self.pass_hat_k is not None:
            said += f"; pass@{k} = {self.pass_at_k:.2f}, pass^{k} = {self.pass_hat_k:.2f}"
        aggregation = self.line.aggregation.value
        if self.test_outcome is PytestOutcome.ERROR:
            return f"{said}; the errors leave the verdict open"
        holds = "holds" if self.gate else "does not hold"
        return f"{said}; its gate (replica_aggregation: {aggregation}) {holds}"

    def _first_trial(self) -> Trial | None:
        """The lowest-numbered trial that erred (for an ERROR line) or did not pass."""
        wanted = ("error",) if self.verdict == "error" else ("fail", "error")
        return next((t for t in self.trials if t.verdict in wanted), None)
