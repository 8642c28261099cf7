"""Re-score a stored run by today's case files and checks, without running any agent."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from sounding._measure import measure_trial
from sounding.checks import Evidence, Judge, ServiceEvidence
from sounding.record import RunRecord
from sounding.runner._config import SuiteConfigError, load_suite
from sounding.runner._run import ExitCode
from sounding.runner._setup import RunSetupError, make_judge
from sounding.scoring import Measured, TrialScore
from sounding.spec import Case, Scenario, SpecError, load_cases
from sounding.store import read_json

RESCORE_SCHEMA = "sounding.rescore/1"


@dataclass(frozen=True)
class Change:
    """A trial whose verdict differs under today's rules, and the check that flipped it."""

    label: str
    before: str
    after: str
    check: str

    def as_dict(self) -> dict[str, str]:
        return {
            "trial": self.label,
            "before": self.before,
            "after": self.after,
            "check": self.check,
        }


def stored_evidence(folder: Path, scenario: Scenario, key: dict[str, Any]) -> Evidence:
    """The evidence a trial left in its folder, as the checks saw it when it ran."""
    record = RunRecord.model_validate_json((folder / "record.json").read_bytes())
    changes = read_json(folder / "changes.json") if (folder / "changes.json").is_file() else None
    workspace = folder / "workspace"
    return Evidence(
        record=record,
        workspace=workspace if workspace.is_dir() else None,
        touched=frozenset(changes["touched"]) if changes else None,
        artefacts=frozenset(changes["artefacts"]) if changes else frozenset(),
        diff=_text(folder / "diff.patch"),
        stdout=_text(folder / "stdout.txt") or "",
        stderr=_text(folder / "stderr.txt") or "",
        services=_services(folder),
        scenario_id=scenario.id,
        trial=int(key["trial"]),
        cell=str(key["cell"]),
        extra={"trace_path": str(folder / "trace.jsonl")}
        if (folder / "trace.jsonl").is_file()
        else {},
    )


def _text(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _services(folder: Path) -> dict[str, ServiceEvidence]:
    if not (folder / "services").is_dir():
        return {}
    from sounding.services import load_service_evidence

    return dict(load_service_evidence(folder))


def rescore_run(
    run_dir: Path, *, judge: Judge | None = None
) -> tuple[list[Change], list[TrialScore]]:
    """Measure every finished trial of a run again; return what changed and the new scores.

    Judge verdicts come from the judge's cache when the request is unchanged, so re-scoring
    never pays twice for the same verdict (unless the judge was made with `rejudge`).
    """
    run = read_json(run_dir / "run.json")
    suite = Path(run["suite"])
    cases = {case.name: case for case in load_cases(_case_paths(suite), suite_dir=suite)}
    changes, scores = [], []
    for trial_file in sorted(run_dir.glob("trials/*/*/*/*/trial.json")):
        stored = read_json(trial_file)
        if stored["state"] != "scored":
            continue
        scenario = _scenario(cases, stored)
        if scenario is None:
            continue
        evidence = stored_evidence(trial_file.parent, scenario, stored)
        now = measure_trial(scenario, evidence, suite_dir=suite, judge=judge)
        scores.append(now)
        if now.verdict.value != stored["verdict"]:
            before = TrialScore.model_validate(stored["score"])
            changes.append(
                Change(_label(stored), stored["verdict"], now.verdict.value, _flipped(before, now))
            )
    return changes, scores


def _case_paths(suite: Path) -> list[Path]:
    return sorted(p for p in (suite / "cases").glob("*") if p.suffix in (".yaml", ".yml", ".toml"))


def _scenario(cases: dict[str, Case], stored: dict[str, Any]) -> Scenario | None:
    case = cases.get(stored["case"])
    if case is None:
        return None
    return next((s for s in case.scenarios if s.id == stored["scenario"]), None)


def _label(stored: dict[str, Any]) -> str:
    cell = "" if stored["cell"] == "default" else f"[{stored['cell']}] "
    return f"{cell}{stored['case']}/{stored['scenario']}#{stored['trial']}"


def _flipped(before: TrialScore, after: TrialScore) -> str:
    old = {m.name: m for m in before.checks}
    for m in after.checks:
        previous: Measured | None = old.get(m.name)
        if previous is None or previous.result.status is not m.result.status:
            was = previous.result.status.value if previous else "absent"
            return f"{m.name}: {was} → {m.result.status.value} ({m.result.reason})"
    return after.reason or "composite"


def _judge(suite: Path, rejudge: bool) -> Judge | None:
    if not (suite / "sounding.toml").is_file():
        return None
    return make_judge(load_suite(suite), rejudge=rejudge)


def rescore_command(run_dir: Path, *, as_json: bool, rejudge: bool = False) -> int:
    if not (run_dir / "run.json").is_file():
        click.echo(f"error: {run_dir} is not a results folder (no run.json)", err=True)
        return ExitCode.USAGE
    try:
        judge = _judge(Path(read_json(run_dir / "run.json")["suite"]), rejudge)
        changes, scores = rescore_run(run_dir, judge=judge)
    except (SpecError, SuiteConfigError, RunSetupError) as exc:
        click.echo(f"error: {exc}", err=True)
        return ExitCode.USAGE
    if as_json:
        document = {
            "schema": RESCORE_SCHEMA,
            "trials": len(scores),
            "changed": [c.as_dict() for c in changes],
        }
        click.echo(json.dumps(document, indent=1))
    else:
        for change in changes:
            click.echo(f"{change.label}: {change.before} → {change.after}  ({change.check})")
        click.echo(f"re-scored {len(scores)} trials: {len(changes)} verdicts changed")
    verdicts = {s.verdict.value for s in scores}
    if "error" in verdicts:
        return ExitCode.ERROR
    return ExitCode.FAIL if "fail" in verdicts else ExitCode.PASS
