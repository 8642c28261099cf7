"""A results folder, loaded into a small typed model that every report format reads.

The runner writes `run.json` (the plan), `summary.json` (verdicts per scenario) and one
`trial.json` per finished trial. Each file's `schema` is read first and an unknown one is
refused; fields are read by name, never by position.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sounding.record import SCHEMA as RECORD_SCHEMA
from sounding.record import RunRecord
from sounding.scoring import Interval, ScenarioResult, TrialScore, TrialVerdict, interval
from sounding.store import (
    RESULTS_SCHEMAS,
    SUMMARY_SCHEMA,
    TRIAL_SCHEMAS,
    RunLayout,
    TrialKey,
    read_json,
)
from sounding.store._stored import RECORD_FILE_V1

_M = TypeVar("_M", bound=BaseModel)
_RESUME_FIX = "finish it with `sounding run SUITE --resume {run_id}`"


class ResultsError(Exception):
    """A results folder (or one of its files) that cannot be read; says which and how to fix."""


class _Stored(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class StoredTrial(_Stored):
    """One finished trial as its `trial.json` holds it."""

    cell: str
    case: str
    scenario: str
    trial: int
    state: Literal["scored", "error"]
    verdict: TrialVerdict
    reason: str = ""
    duration_ms: float = 0.0
    attempts: int = 0
    usage: dict[str, Any] = Field(default_factory=dict)
    score: TrialScore | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)

    def metric_values(self) -> dict[str, Any]:
        """Each check's outcome (True/False, None when not judged) and the validators'
        metrics; nothing for an errored trial, which is left out of every statistic."""
        if self.outcome is None or self.score is None:
            return {}
        values: dict[str, Any] = {
            m.name: m.result.status.value == "passed" if m.result.judged else None
            for m in self.score.checks
        }
        values.update(self.metrics)
        return values

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
        value = self.usage.get("cost_usd")
        return float(value) if isinstance(value, int | float) else None

    @property
    def tokens(self) -> int | None:
        """Input plus output tokens; None when the agent reported none."""
        counts = [self.usage.get(k) for k in ("input_tokens", "output_tokens")]
        total = sum(c for c in counts if isinstance(c, int) and not isinstance(c, bool))
        return total or None


class ScenarioSummary(ScenarioResult):
    """One scenario of one cell over its trials, as `summary.json` holds it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    cell: str
    case: str
    scenario: str
    first_failure: str = ""
    duration_ms: float = 0.0

    @property
    def label(self) -> str:
        """`case/scenario`, with `[cell] ` in front for any cell but the default one."""
        cell = "" if self.cell == "default" else f"[{self.cell}] "
        return f"{cell}{self.case}/{self.scenario}"


class RunSummary(_Stored):
    """What `summary.json` says about the whole run."""

    run_id: str
    totals: dict[str, int]
    exit_code: int
    scenarios: list[ScenarioSummary]

    @property
    def outcome(self) -> str:
        """`passed`, `failed` or `errored`: the run as its exit code judged it."""
        return {0: "passed", 1: "failed"}.get(self.exit_code, "errored")


@dataclass(frozen=True)
class ScenarioTrials:
    """A scenario's summary beside its finished trials, in trial order."""

    summary: ScenarioSummary
    trials: list[StoredTrial]

    @cached_property
    def pass_rate(self) -> Interval | None:
        """The bootstrap interval of the pass rate over judged trials; None when none was."""
        outcomes = [t.outcome for t in self.trials]
        if not any(o is not None for o in outcomes):
            return None
        return interval(outcomes)

    @property
    def first_error(self) -> str:
        return next((t.reason for t in self.trials if t.outcome is None), "")


@dataclass(frozen=True)
class Results:
    """A run's results folder: the plan, the finished trials and (once it ended) the summary."""

    root: Path
    run_id: str
    suite: str
    options: dict[str, Any]
    planned: list[TrialKey]
    trials: list[StoredTrial]
    summary: RunSummary | None = None
    folders: dict[TrialKey, Path] = field(default_factory=dict)

    @property
    def missing(self) -> list[TrialKey]:
        """Planned trials with no trial.json: the run was stopped before they finished."""
        done = {t.key for t in self.trials}
        return [key for key in self.planned if key not in done]

    @property
    def errored(self) -> list[StoredTrial]:
        return [t for t in self.trials if t.outcome is None]

    @property
    def cells(self) -> list[str]:
        return list(dict.fromkeys(key.cell for key in self.planned))

    def folder(self, trial: StoredTrial) -> Path:
        return self.folders[trial.key]

    def finished(self) -> RunSummary:
        """The summary, or a ResultsError saying the run never finished and how to finish it."""
        if self.summary is not None:
            return self.summary
        fix = _RESUME_FIX.format(run_id=self.run_id)
        raise ResultsError(
            f"{self.root / 'summary.json'}: not found: the run did not finish "
            f"({len(self.missing)} of {len(self.planned)} trials missing); {fix}"
        )

    @cached_property
    def scenarios(self) -> list[ScenarioTrials]:
        """Every scenario of the summary with its trials; needs a finished run."""
        by_scenario: dict[tuple[str, str, str], list[StoredTrial]] = {}
        for trial in sorted(self.trials, key=lambda t: t.trial):
            by_scenario.setdefault((trial.cell, trial.case, trial.scenario), []).append(trial)
        return [
            ScenarioTrials(s, by_scenario.get((s.cell, s.case, s.scenario), []))
            for s in self.finished().scenarios
        ]

    def record(self, trial: StoredTrial) -> RunRecord | None:
        """The trial's run record; None when it left none (it failed before any record)."""
        folder = self.folder(trial)
        path = folder / "trial.json"
        document = _document(path, TRIAL_SCHEMAS)
        if "record" in document:
            found = document["record"]
            if found is not None and _schema_of(found) != RECORD_SCHEMA:
                raise ResultsError(_schema_message(path, _schema_of(found), RECORD_SCHEMA))
        else:  # sounding.trial/1: the record is a file of its own
            path = folder / RECORD_FILE_V1
            found = _document(path, (RECORD_SCHEMA,)) if path.is_file() else None
        return None if found is None else _validated(RunRecord, path, found)

    def text(self, trial: StoredTrial, name: str) -> str | None:
        """A text artifact of the trial (`diff.patch`, `stdout.txt`, ...); None when absent."""
        path = self.folder(trial) / name
        if not path.is_file():
            return None
        return path.read_text(encoding="utf-8", errors="replace")


def load_results(run_dir: Path) -> Results:
    """Read a run's folder (`results/<run-id>/`): its plan, its finished trials, its summary."""
    run_file = run_dir / "run.json"
    if not run_file.is_file():
        raise ResultsError(_not_a_run(run_dir))
    plan = _document(run_file, RESULTS_SCHEMAS)
    layout = RunLayout.of(run_dir, plan["schema"])
    planned = [_key(run_file, i, entry) for i, entry in enumerate(_list(run_file, plan, "trials"))]
    folders = {key: layout.trial_dir(key) for key in planned}
    trials = [_trial(folders[key]) for key in planned if (folders[key] / "trial.json").is_file()]
    summary_file = run_dir / "summary.json"
    summary = None
    if summary_file.is_file():
        summary = _validated(RunSummary, summary_file, _document(summary_file, (SUMMARY_SCHEMA,)))
    return Results(
        root=run_dir,
        run_id=str(plan.get("run_id", run_dir.name)),
        suite=str(plan.get("suite", "")),
        options=dict(plan.get("options") or {}),
        planned=planned,
        trials=trials,
        summary=summary,
        folders=folders,
    )


def _not_a_run(run_dir: Path) -> str:
    if not run_dir.is_dir():
        return f"{run_dir}: no such folder; give the folder of one run, like results/<run-id>"
    runs = sorted(p.parent.name for p in run_dir.glob("*/run.json"))
    if runs:
        shown = ", ".join(runs[-5:])
        return f"{run_dir} holds runs, not one run ({shown}); name one, e.g. {run_dir / runs[-1]}"
    return (
        f"{run_dir}: no run.json, so this is not the folder of a run; "
        "give a folder `sounding run` wrote, like results/<run-id>"
    )


def _trial(folder: Path) -> StoredTrial:
    path = folder / "trial.json"
    return _validated(StoredTrial, path, _document(path, TRIAL_SCHEMAS))


def _key(path: Path, index: int, entry: Any) -> TrialKey:
    try:
        return TrialKey(
            str(entry["cell"]), str(entry["case"]), str(entry["scenario"]), int(entry["trial"])
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultsError(
            f"{path}: trials[{index}] is not a trial (cell, case, scenario, trial): {exc!r}; "
            "the file was changed by hand or written by another tool; re-run the suite"
        ) from exc


def _list(path: Path, document: dict[str, Any], name: str) -> list[Any]:
    value = document.get(name)
    if not isinstance(value, list):
        raise ResultsError(
            f"{path}: `{name}` must be a list, found {type(value).__name__}; "
            "the file was changed by hand or written by another tool; re-run the suite"
        )
    return value


def _document(path: Path, schemas: tuple[str, ...]) -> dict[str, Any]:
    """The JSON object in `path`, once its `schema` field says it is one we read."""
    try:
        document = read_json(path)
    except (OSError, ValueError) as exc:
        raise ResultsError(
            f"{path}: not readable as JSON ({exc}); a run killed while writing never leaves "
            "half a file, so it was changed by hand: restore it or re-run the trial"
        ) from exc
    if not isinstance(document, dict):
        raise ResultsError(f"{path}: expected a JSON object with a `schema` field")
    found = document.get("schema")
    if found not in schemas:
        raise ResultsError(_schema_message(path, found, schemas[-1]))
    return document


def _schema_of(value: Any) -> Any:
    return value.get("schema") if isinstance(value, dict) else None


def _schema_message(path: Path, found: Any, schema: str) -> str:
    if found is None:
        return f"{path}: no `schema` field, so this is not a sounding file ({schema} expected)"
    return (
        f"{path}: schema {found!r} is not one this version of sounding reads ({schema}); "
        "read it with the sounding that wrote it, or upgrade sounding"
    )


def _validated(model: type[_M], path: Path, document: dict[str, Any]) -> _M:
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top)"
        raise ResultsError(
            f"{path}: `{where}`: {first['msg']} ({exc.error_count()} problem(s)); "
            "the file does not match its schema: it was changed by hand, re-run the trial"
        ) from exc
