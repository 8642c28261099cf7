"""The documents of a whole run: its plan (`run.json`), its verdicts (`summary.json`) and
one record per trial (`measures.json`), each with its one writer and one reader."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field, computed_field

from sounding._exit import ExitCode
from sounding._files import temporary_path, write_text
from sounding.scoring import CurvePoint, ScenarioResult, ScenarioVerdict, Stop, mean_curve
from sounding.store._documents import ResultsError, read_document, validated
from sounding.store._layout import (
    NESTED_SCHEMA,
    RESULTS_SCHEMA,
    RESULTS_SCHEMAS,
    SUMMARY_SCHEMA,
    RunLayout,
    TrialKey,
    scenario_label,
)
from sounding.store._trial import Trial, read_trial, trial_exists

MEASURES_SCHEMA = "sounding.measures/1"
RUN_FILE, SUMMARY_FILE, MEASURES_FILE = "run.json", "summary.json", "measures.json"


class RunPlan(BaseModel):
    """`run.json`: the suite, the options and every planned trial, written before any runs."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    schema_: str = Field(default=RESULTS_SCHEMA, alias="schema")
    run_id: str
    suite: str
    options: dict[str, Any] = Field(default_factory=dict)
    reference_cell: str | None = None
    cells: dict[str, dict[str, Any]] = Field(default_factory=dict)
    lower_is_better: list[str] = Field(default_factory=list)  # metrics declared so
    rescored_from: str | None = None  # a re-scored run: the run beside it holding the evidence
    trials: list[TrialKey]

    def layout(self, root: Path) -> RunLayout:
        return RunLayout(root, nested=self.schema_ == NESTED_SCHEMA)

    def evidence_layout(self, root: Path) -> RunLayout:
        """Where the trials' evidence is: this run's own folder, or for a run written by
        `sounding score RUN --write`, the run it re-scored (in the same results folder)."""
        if self.rescored_from is None:
            return self.layout(root)
        original = root.parent / self.rescored_from
        return read_plan(original).layout(original)

    def cell_env(self, cell: str) -> dict[str, str]:
        """The environment the run's cell `cell` added for its agent."""
        return dict(self.cells.get(cell, {}).get("env", {}))


def write_plan(root: Path, plan: RunPlan) -> None:
    write_text(root / RUN_FILE, plan.model_dump_json(by_alias=True) + "\n")


def read_plan(run_dir: Path) -> RunPlan:
    """The plan of the run in `run_dir`; ResultsError saying what the folder is otherwise."""
    path = run_dir / RUN_FILE
    if not path.is_file():
        raise ResultsError(_not_a_run(run_dir))
    return validated(RunPlan, path, read_document(path, RESULTS_SCHEMAS))


def _not_a_run(run_dir: Path) -> str:
    if not run_dir.is_dir():
        return f"{run_dir}: no such folder; give the folder of one run, like results/<run-id>"
    runs = sorted(p.parent.name for p in run_dir.glob(f"*/{RUN_FILE}"))
    if runs:
        shown = ", ".join(runs[-5:])
        return f"{run_dir} holds runs, not one run ({shown}); name one, e.g. {run_dir / runs[-1]}"
    return (
        f"{run_dir}: no run.json, so this is not the folder of a run; "
        "give a folder `sounding run` wrote, like results/<run-id>"
    )


def finished_trials(run_dir: Path, plan: RunPlan) -> Iterator[tuple[Path, Trial]]:
    """Each finished trial of the run, in the plan's order, with the folder of its evidence,
    read one at a time; a planned trial that never finished is skipped."""
    layout, evidence = plan.layout(run_dir), plan.evidence_layout(run_dir)
    for key in plan.trials:
        folder = layout.trial_dir(key)
        if trial_exists(folder):
            yield evidence.trial_dir(key), read_trial(folder)


class ScenarioSummary(ScenarioResult):
    """One scenario of one cell over its trials: a row of `summary.json`."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    cell: str
    case: str
    scenario: str
    first_failure: str = ""
    duration_ms: float = 0.0
    error_kinds: dict[str, int] = Field(default_factory=dict)  # errors of a known kind
    stopped: Stop | None = None  # why an adaptive run gave it no more trials (`--until-decided`)

    @property
    def label(self) -> str:
        return scenario_label(self.cell, self.case, self.scenario)


class RunSummary(BaseModel):
    """`summary.json`: the verdict of every scenario of every cell, and the exit code."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    schema_: str = Field(default=SUMMARY_SCHEMA, alias="schema")
    run_id: str
    scenarios: list[ScenarioSummary]
    until_decided: dict[str, Any] | None = None  # an adaptive run's rule: least, most, ...

    @computed_field  # type: ignore[prop-decorator]
    @property
    def totals(self) -> dict[str, int]:
        return {v.value: sum(s.verdict == v for s in self.scenarios) for v in ScenarioVerdict}

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def curves(self) -> dict[str, list[CurvePoint]]:
        """Per cell, the mean pass@k and pass^k over its scenarios at every k (`mean_curve`).
        Derived from the scenario lines, so older summaries read with it too."""
        cells = dict.fromkeys(s.cell for s in self.scenarios)
        return {cell: mean_curve(s for s in self.scenarios if s.cell == cell) for cell in cells}

    @computed_field  # type: ignore[prop-decorator]
    @property
    def exit_code(self) -> ExitCode:
        """An error anywhere leaves the run without a verdict; else it fails when any
        scenario's gate did not hold."""
        if any(s.errors or s.verdict is ScenarioVerdict.ERROR for s in self.scenarios):
            return ExitCode.ERROR
        if not all(s.gate for s in self.scenarios):
            return ExitCode.FAIL
        return ExitCode.PASS

    @property
    def outcome(self) -> str:
        """`passed`, `failed` or `errored`: the run as its exit code judged it."""
        return {ExitCode.PASS: "passed", ExitCode.FAIL: "failed"}.get(self.exit_code, "errored")


def write_summary(root: Path, summary: RunSummary) -> None:
    write_text(root / SUMMARY_FILE, summary.model_dump_json(by_alias=True) + "\n")


def read_summary(run_dir: Path) -> RunSummary | None:
    """The run's summary; None when the run has not finished."""
    path = run_dir / SUMMARY_FILE
    if not path.is_file():
        return None
    return validated(RunSummary, path, read_document(path, (SUMMARY_SCHEMA,)))


class Measures:
    """`measures.json`, written as trials finish: one record per trial and line, in the
    order they finished, put in place whole when the run ends (`close`)."""

    def __init__(self, root: Path, run_id: str) -> None:
        self.root = root
        self._path = root / MEASURES_FILE
        self._tmp = temporary_path(self._path)
        self._file: IO[str] = open(self._tmp, "w", encoding="utf-8")  # noqa: SIM115
        self._file.write(f'{{"schema": "{MEASURES_SCHEMA}", "run_id": {_json(run_id)}, "trials": [')
        self._first = True

    def add(self, trial: Trial) -> None:
        separator = "\n" if self._first else ",\n"
        self._file.write(separator + _json(trial.measures()))
        self._first = False

    def close(self) -> None:
        self._file.write("\n]}\n")
        self._file.close()
        os.replace(self._tmp, self._path)

    def discard(self) -> None:
        with contextlib.suppress(OSError):  # a full device refuses the last buffered lines
            self._file.close()
        Path(self._tmp).unlink(missing_ok=True)


def write_measures(root: Path, run_id: str, trials: Iterable[Trial]) -> None:
    """`measures.json` made anew from `trials` (after a form filled some metrics)."""
    measures = Measures(root, run_id)
    try:
        for trial in trials:
            measures.add(trial)
    except BaseException:
        measures.discard()
        raise
    measures.close()


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
