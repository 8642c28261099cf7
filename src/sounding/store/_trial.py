"""A finished trial: the one model of what `trial.json` holds, its one writer and one reader.

The runner makes a `Trial` when a trial ends and writes it with `write_trial`; reports,
re-scoring, `sounding form` and `--resume` read it back with `read_trial`. `trial.json` is
written last in a trial's folder: its presence means the trial finished and never runs again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, computed_field

from sounding._files import write_text
from sounding._secrets import redact_json
from sounding.checks import Status
from sounding.record import SCHEMA as RECORD_SCHEMA
from sounding.record import RunRecord
from sounding.scoring import TrialScore, TrialVerdict
from sounding.store._documents import ResultsError, read_document, schema_message, validated
from sounding.store._layout import TrialKey

ERROR_KINDS = ("agent", "budget", "harness", "service", "judge", "simulator")
"""What an errored trial failed of: the agent (it crashed, timed out, wrote a broken trace),
its budget, or what measures it: the harness (sounding, a check, a validator of the suite),
a service, the judge, the simulated user."""

INFRASTRUCTURE = frozenset({"harness", "service", "judge", "simulator"})
"""The error kinds that are no doing of the agent: `--retry-errors` runs such a trial again."""

TRIAL_SCHEMA = "sounding.trial/2"
TRIAL_SCHEMAS = ("sounding.trial/1", TRIAL_SCHEMA)  # /1 kept the run record in record.json
RECORD_FILE_V1 = "record.json"
TRIAL_FILE = "trial.json"


class Trial(BaseModel):
    """One finished trial: where it stands in the run, its score, and its run record.

    A trial the harness could not score (its agent timed out, a validator broke its
    contract, the harness itself failed) has no score: its `state` is `error` and `reason`
    says why. Otherwise `reason` is the score's first failure, empty for a pass.
    """

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    cell: str
    case: str
    scenario: str
    trial: int
    reason: str = ""
    duration_ms: float = 0.0
    attempts: int = 0
    usage: dict[str, Any] = Field(default_factory=dict)  # the agent's tokens and cost
    judge_usage: dict[str, Any] = Field(default_factory=dict)  # the judge's, for this trial
    simulator_usage: dict[str, Any] = Field(default_factory=dict)  # the simulated user's
    simulated: dict[str, Any] | None = None  # a simulated user's turns, and how it ended
    error_kind: str | None = None  # for an error, one of ERROR_KINDS
    metrics: dict[str, Any] = Field(default_factory=dict)  # the validators' metrics
    metric_reasons: dict[str, str] = Field(default_factory=dict)
    touched: list[str] | None = None  # None: the workspace was not examined
    origin: str | None = None  # the run's copy of its start state: workspace/ holds `touched`
    exit_code: int | None = None  # the agent's last exit status
    byproducts: list[str] = Field(  # touched files matching the case's `byproducts` globs
        default_factory=list, validation_alias=AliasChoices("byproducts", "artefacts")
    )
    score: TrialScore | None = None
    record: RunRecord | None = None

    @computed_field(alias="schema")  # type: ignore[prop-decorator]
    @property
    def schema_(self) -> str:
        return TRIAL_SCHEMA

    @computed_field  # type: ignore[prop-decorator]
    @property
    def state(self) -> Literal["scored", "error"]:
        return "error" if self.score is None else "scored"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict(self) -> TrialVerdict:
        return TrialVerdict.ERROR if self.score is None else self.score.verdict

    @property
    def infrastructure_error(self) -> bool:
        """An error of what measures the agent, not of the agent: worth running again."""
        return self.verdict is TrialVerdict.ERROR and self.error_kind in INFRASTRUCTURE

    @property
    def key(self) -> TrialKey:
        return TrialKey(self.cell, self.case, self.scenario, self.trial)

    @property
    def outcome(self) -> bool | None:
        """True for a pass, False for a fail, None for an error (left out of every rate)."""
        if self.verdict is TrialVerdict.ERROR:
            return None
        return self.verdict is TrialVerdict.PASS

    @property
    def cost_usd(self) -> float | None:
        """What the agent's model calls cost; None when not known."""
        return _dollars(self.usage)

    @property
    def judge_cost_usd(self) -> float | None:
        """What the judge's calls for this trial cost; None when none was made or priced."""
        return _dollars(self.judge_usage)

    @property
    def simulator_cost_usd(self) -> float | None:
        """What the simulated user's calls cost; None when none was made or priced."""
        return _dollars(self.simulator_usage)

    @property
    def spent_usd(self) -> float:
        """What the trial's model calls cost in all (the agent's, the judge's, the
        simulator's), as far as they are priced: what `--max-cost` counts."""
        costs = (self.cost_usd, self.judge_cost_usd, self.simulator_cost_usd)
        return sum(cost for cost in costs if cost is not None)

    @property
    def tokens(self) -> int | None:
        """Input plus output tokens; None when the agent reported none."""
        counts = [self.usage.get(k) for k in ("input_tokens", "output_tokens")]
        total = sum(c for c in counts if isinstance(c, int) and not isinstance(c, bool))
        return total or None

    def metric_values(self) -> dict[str, Any]:
        """`passed`, `composite`, each check's outcome (True/False, None when not judged) and
        the validators' metrics; for an errored trial, only the validators' metrics."""
        values: dict[str, Any] = {"passed": self.outcome, "composite": None}
        if self.score is not None:
            values["composite"] = self.score.composite
            for m in self.score.checks:
                values[m.name] = m.result.status is Status.PASSED if m.result.judged else None
        values.update(self.metrics)
        return values

    def keyed_metrics(self) -> dict[str, Any]:
        """`metric_values()` as reports weigh them across scenarios: each check's outcome
        under its scenario's name (`refunds/over-ceiling expect[2] arg_ceiling`, see
        `scoped`), so that checks standing at the same place in two scenarios are never
        taken for one; `passed`, `composite` and the validators' metrics under their own."""
        checks = {m.name for m in self.score.checks} if self.score is not None else set()
        return {
            (scoped(self.case, self.scenario, name) if name in checks else name): value
            for name, value in self.metric_values().items()
        }

    def redacted(self, secrets: Mapping[str, str]) -> Trial:
        """The trial with every secret value replaced by its marker, wherever it stands (a
        check's reason or details, the run record): what is stored, and what the run's
        summary and measures are made from."""
        text = self.model_dump_json(by_alias=True, fallback=str)
        clean = redact_json(text, secrets)
        return self if clean == text else Trial.model_validate_json(clean)

    def measures(self) -> dict[str, Any]:
        """Its record in measures.json: the key, what happened, and `metric_values()` with
        the reasons given for them."""
        reasons: dict[str, str] = {}
        if self.score is not None:
            reasons = {m.name: m.result.reason for m in self.score.checks if m.result.reason}
        reasons.update(self.metric_reasons)
        return {
            **self.key.as_dict(),
            "state": self.state,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "usage": self.usage,
            "judge_usage": self.judge_usage,
            "simulator_usage": self.simulator_usage,
            "error_kind": self.error_kind,
            "duration_ms": round(self.duration_ms, 3),
            "attempts": self.attempts,
            "metrics": self.metric_values(),
            "reasons": reasons,
        }


SPENDING: dict[str, Callable[[Trial], float | None]] = {
    "tokens": lambda t: t.tokens,
    "cost_usd": lambda t: t.cost_usd,
    "judge_cost_usd": lambda t: t.judge_cost_usd,
    "simulator_cost_usd": lambda t: t.simulator_cost_usd,
}
"""What a trial spent, by name: the agent's tokens and cost, and apart from them what the
judge and the simulated user cost."""


SCOPE = " · "
"""What joins a scenario and one of its checks into the name a report gives the check."""


def scoped(case: str, scenario: str, check: str) -> str:
    """The name of a check of one scenario, as reports weigh it: `case/scenario · check`."""
    return f"{case}/{scenario}{SCOPE}{check}"


def _dollars(usage: Mapping[str, Any]) -> float | None:
    value = usage.get("cost_usd")
    return float(value) if isinstance(value, int | float) else None


def write_trial(folder: Path, trial: Trial) -> None:
    """Write `trial.json` in `folder` (a trial the runner made is `redacted` first).

    A value a check left in its details that JSON has no type for is written as its text.
    """
    write_text(folder / TRIAL_FILE, trial.model_dump_json(by_alias=True, fallback=str) + "\n")


def trial_exists(folder: Path) -> bool:
    return (folder / TRIAL_FILE).is_file()


def read_trial(folder: Path) -> Trial:
    """The finished trial stored in `folder`; ResultsError naming the file when it cannot be
    read (not JSON, an unknown schema, a field that does not match)."""
    path = folder / TRIAL_FILE
    document = read_document(path, TRIAL_SCHEMAS)
    if document["schema"] != TRIAL_SCHEMA and "record" not in document:
        old = folder / RECORD_FILE_V1  # sounding.trial/1: the record was a file of its own
        document["record"] = read_document(old, (RECORD_SCHEMA,)) if old.is_file() else None
    record = document.get("record")
    if isinstance(record, dict) and record.get("schema") != RECORD_SCHEMA:
        raise ResultsError(schema_message(path, record.get("schema"), RECORD_SCHEMA))
    return validated(Trial, path, document)
