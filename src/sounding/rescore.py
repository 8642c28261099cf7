"""Re-score a stored run by today's case files and checks, without running any agent."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from sounding._fork import can_fork, forked_parts
from sounding._heap import collector_paused, long_lived
from sounding._measure import measure_trial
from sounding._words import counted
from sounding.checks import Evidence, Judge, ServiceEvidence
from sounding.record import RunRecord
from sounding.runner._config import SuiteConfigError, load_suite
from sounding.runner._run import ExitCode
from sounding.runner._setup import RunSetupError, make_judge
from sounding.scoring import Measured, TrialScore
from sounding.spec import Scenario, SpecError, load_cases
from sounding.store import finished_trials, read_json, trial_record
from sounding.validators import Validation

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


def stored_evidence(
    folder: Path, scenario: Scenario, key: dict[str, Any], extra: dict[str, Any] | None = None
) -> Evidence:
    """The evidence a trial left in its folder, as the checks saw it when it ran."""
    present = set(os.listdir(folder))  # one look at the folder, not a stat per file

    def text(name: str) -> str | None:
        return (folder / name).read_text(encoding="utf-8") if name in present else None

    return Evidence(
        record=trial_record(folder, key) or RunRecord(),
        workspace=folder / "workspace" if "workspace" in present else None,
        touched=None if key.get("touched") is None else frozenset(key["touched"]),
        artefacts=frozenset(key.get("artefacts") or ()),
        diff=text("diff.patch"),
        stdout=text("stdout.txt") or "",
        stderr=text("stderr.txt") or "",
        services=_services(folder) if "services" in present else {},
        scenario_id=scenario.id,
        trial=int(key["trial"]),
        cell=str(key["cell"]),
        extra={
            **({"trace_path": str(folder / "trace.jsonl")} if "trace.jsonl" in present else {}),
            **(extra or {}),
        },
    )


def _services(folder: Path) -> dict[str, ServiceEvidence]:
    from sounding.services import load_service_evidence

    return dict(load_service_evidence(folder))


@dataclass
class Rescored:
    """What re-scoring found: the verdicts that changed, and how many of each there are now."""

    changes: list[Change] = field(default_factory=list)
    verdicts: Counter[str] = field(default_factory=Counter)

    @property
    def trials(self) -> int:
        return sum(self.verdicts.values())

    @classmethod
    def joined(cls, parts: Iterable[Rescored]) -> Rescored:
        """What the parts of one run found, in the parts' order."""
        whole = cls()
        for part in parts:
            whole.changes.extend(part.changes)
            whole.verdicts.update(part.verdicts)
        return whole


def rescore_run(run_dir: Path, *, judge: Judge | None = None) -> Rescored:
    """Measure every finished trial of a run again, one at a time (memory stays flat).

    Judge verdicts come from the judge's cache when the request is unchanged, so re-scoring
    never pays twice for the same verdict (unless the judge was made with `rejudge`).
    """
    with long_lived() as settle:
        return _rescore_run(run_dir, judge, settle)


_FORK_FROM = 500  # stored trials from which re-scoring shares them over forked processes


def _rescore_run(run_dir: Path, judge: Judge | None, settle: Callable[[], None]) -> Rescored:
    run = read_json(run_dir / "run.json")
    suite = Path(run["suite"])
    with collector_paused():  # until settled: see `collector_paused`
        scenarios = {
            (case.name, scenario.id): scenario
            for case in load_cases(_case_paths(suite), suite_dir=suite)
            for scenario in case.scenarios
        }
        settle()
    rescorer = _Rescorer(run_dir, run, suite, scenarios, _configured_env(suite), judge)
    keys: list[dict[str, Any]] = run["trials"]
    if _forked(keys, judge):
        return Rescored.joined(forked_parts(rescorer.part, keys))
    return rescorer.part(keys)


def _forked(keys: list[dict[str, Any]], judge: Judge | None) -> bool:
    """Whether to share the trials over forked processes: many, no judge (it keeps one
    client and one cache), and no other thread in this process (a caller's thread could
    hold a lock a child would then wait on forever)."""
    return judge is None and threading.active_count() == 1 and can_fork(len(keys), _FORK_FROM)


@dataclass(frozen=True)
class _Rescorer:
    """Re-scores trials of one run; what every trial shares is found once."""

    run_dir: Path
    run: dict[str, Any]
    suite: Path
    scenarios: dict[tuple[str, str], Scenario]
    configured: dict[str, str]
    judge: Judge | None

    def part(self, keys: Sequence[dict[str, Any]]) -> Rescored:
        """The trials of `keys` (in the plan's order) that finished, measured again."""
        cells = self.run.get("cells") or {}
        found = Rescored()
        for folder, stored in finished_trials(self.run_dir, self.run, keys):
            scenario = self.scenarios.get((stored["case"], stored["scenario"]))
            if stored["state"] != "scored" or scenario is None:
                continue
            cell_env = cells.get(stored["cell"], {}).get("env", {})
            given = {
                "agent_env": {**self.configured, **scenario.env, **cell_env},
                **Validation.from_trial(stored).extra(),
            }
            evidence = stored_evidence(folder, scenario, stored, given)
            now = measure_trial(scenario, evidence, suite_dir=self.suite, judge=self.judge)
            found.verdicts[now.verdict.value] += 1
            if now.verdict.value != stored["verdict"]:
                before = TrialScore.model_validate(stored["score"])
                flipped = _flipped(before, now)
                change = Change(_label(stored), stored["verdict"], now.verdict.value, flipped)
                found.changes.append(change)
        return found


def _case_paths(suite: Path) -> list[Path]:
    return sorted(p for p in (suite / "cases").glob("*") if p.suffix in (".yaml", ".yml", ".toml"))


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


def _configured_env(suite: Path) -> dict[str, str]:
    """`[agent] env` as the suite declares it today (secrets are never stored with a run)."""
    if not (suite / "sounding.toml").is_file():
        return {}
    env = load_suite(suite).config.agent.env
    return {key: value.replace("{suite}", str(suite)) for key, value in env.items()}


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
        found = rescore_run(run_dir, judge=judge)
    except (SpecError, SuiteConfigError, RunSetupError) as exc:
        click.echo(f"error: {exc}", err=True)
        return ExitCode.USAGE
    if as_json:
        document = {
            "schema": RESCORE_SCHEMA,
            "trials": found.trials,
            "verdicts": dict(found.verdicts),
            "changed": [c.as_dict() for c in found.changes],
        }
        click.echo(json.dumps(document, indent=1))
    else:
        for change in found.changes:
            click.echo(f"{change.label}: {change.before} → {change.after}  ({change.check})")
        changed = counted(len(found.changes), "verdict")
        click.echo(f"re-scored {counted(found.trials, 'trial')}: {changed} changed")
    verdicts = set(found.verdicts)
    if "error" in verdicts:
        return ExitCode.ERROR
    return ExitCode.FAIL if "fail" in verdicts else ExitCode.PASS
