"""Score without running: a stored run by today's case files, or one record against a case."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sounding._words import counted
from sounding.checks import Evidence, Judge
from sounding.judge import judged_by
from sounding.record import load_record
from sounding.runner._collected import Collected
from sounding.runner._config import Suite, load_suite
from sounding.runner._run import gated
from sounding.runner._setup import make_judge
from sounding.runner._workspace import checks_read_workspace
from sounding.scoring import (
    UNVALIDATED,
    Measured,
    TrialScore,
    TrialVerdict,
    measure_trial,
    score_error_kind,
)
from sounding.services import ServiceSettings
from sounding.spec import Case, Scenario, case_files, load_cases
from sounding.spec._guards import suite_of
from sounding.store import (
    RunPlan,
    Trial,
    allocate_run,
    finished_trials,
    read_plan,
    read_trial,
    stored_evidence,
    stored_workspace,
    write_plan,
    write_trial,
)
from sounding.validators import Validation

RESCORE_SCHEMA = "sounding.rescore/1"


@dataclass(frozen=True)
class Change:
    """A trial whose verdict differs under today's rules, and the check that decided it."""

    label: str
    before: TrialVerdict
    after: TrialVerdict
    check: str

    def as_dict(self) -> dict[str, str]:
        return {
            "trial": self.label,
            "before": self.before.value,
            "after": self.after.value,
            "check": self.check,
        }


@dataclass
class Rescored:
    """What re-scoring found: the verdicts that changed, and how many of each there are now;
    and with `--write`, the run folder the re-scored run was written to."""

    changes: list[Change] = field(default_factory=list)
    verdicts: Counter[TrialVerdict] = field(default_factory=Counter)
    written: Path | None = None
    rejudged: Counter[tuple[str, str]] = field(default_factory=Counter)  # (was, now): verdicts

    def judges_switched(self) -> list[str]:
        """Each judge now asked in place of the one that judged when the run was scored:
        a verdict that changed may be the other judge's doing, not the agent's."""
        return [
            f"{counted(n, 'judge verdict')} given by {was} when the run was scored "
            f"{'was' if n == 1 else 'were'} asked again of {now}, the suite's judge today"
            for (was, now), n in sorted(self.rejudged.items())
        ]

    @property
    def trials(self) -> int:
        return sum(self.verdicts.values())

    def document(self) -> dict[str, Any]:
        """The `--json` form (schema sounding.rescore/1)."""
        return {
            "schema": RESCORE_SCHEMA,
            "trials": self.trials,
            "verdicts": {verdict.value: n for verdict, n in self.verdicts.items()},
            "changed": [change.as_dict() for change in self.changes],
            "written": str(self.written) if self.written else None,
            "judges_switched": [
                {"was": was, "now": now, "verdicts": n}
                for (was, now), n in sorted(self.rejudged.items())
            ],
        }


def rescore_run(run_dir: Path, *, judge: Judge | None = None, write: bool = False) -> Rescored:
    """Measure every finished trial of a run again, one at a time (memory stays flat).

    Judge verdicts come from the judge's cache when the request is unchanged, so re-scoring
    never pays twice for the same verdict (unless the judge was made with `rejudge`). A
    judge check people have not validated (`[judge] min_agreement`) counts as in a run.

    With `write`, the re-scored run is stored as a new run folder beside the first: its
    trials with their new scores (an errored one as it was), its summary and measures, and
    a plan that names the run holding the evidence, which is not copied. Every report and
    `sounding compare` then read it as any run.
    """
    plan = read_plan(run_dir)
    suite = Path(plan.suite)
    cases = load_cases(case_files(suite / "cases"), suite_dir=suite)
    cases, _ = gated(suite, cases, getattr(judge, "config", None))
    scenarios = {
        (case.name, scenario.id): scenario for case in cases for scenario in case.scenarios
    }
    rewrite = _Rewrite(run_dir, plan, cases) if write else None
    try:
        found = _rescore(run_dir, plan, scenarios, judge, rewrite)
    except BaseException:
        if rewrite is not None:
            rewrite.discard()  # a run folder half written is no run
        raise
    if rewrite is not None:
        found.written = rewrite.close()
    return found


def _rescore(
    run_dir: Path,
    plan: RunPlan,
    scenarios: dict[tuple[str, str], Scenario],
    judge: Judge | None,
    rewrite: _Rewrite | None,
) -> Rescored:
    suite = Path(plan.suite)
    configured, services = _today(suite)
    evidence_root = plan.evidence_layout(run_dir).root
    found = Rescored()
    for folder, trial in finished_trials(run_dir, plan):
        scenario = scenarios.get((trial.case, trial.scenario))
        if trial.score is None or scenario is None:
            if rewrite is not None:
                rewrite.add(trial)
            continue
        env = {**configured, **scenario.env, **plan.cell_env(trial.cell)}
        extra = {"agent_env": env, **Validation.from_trial(trial).extra()}
        needed = checks_read_workspace(scenario)
        with stored_workspace(evidence_root, folder, trial, needed) as kept:
            evidence = stored_evidence(
                folder, trial, workspace=kept, settings=services, extra=extra
            )
            now = measure_trial(scenario, evidence, suite_dir=suite, judge=judge)
        found.verdicts[now.verdict] += 1
        found.rejudged.update(_switched(trial.score, now))
        if now.verdict is not trial.verdict:
            change = Change(trial.key.label, trial.verdict, now.verdict, decided(trial.score, now))
            found.changes.append(change)
        if rewrite is not None:
            rewrite.add(_rescored(trial, now))
    return found


def _switched(before: TrialScore, after: TrialScore) -> Iterator[tuple[str, str]]:
    """(the judge then, the judge now) for each judge check another model judged now."""
    now = {m.name: _judged_by(m) for m in after.checks}
    for m in before.checks:
        was, judge = _judged_by(m), now.get(m.name)
        if was and judge and was != judge:
            yield was, judge


def _judged_by(m: Measured) -> str:
    """`provider/model` of the judge that gave a check its verdict; empty for no judge's."""
    return judged_by(m.result.details.get("provenance"))


def _rescored(trial: Trial, score: TrialScore) -> Trial:
    update = {"score": score, "reason": score.reason, "error_kind": score_error_kind(score)}
    return trial.model_copy(update=update)


class _Rewrite:
    """The re-scored run, written trial by trial into a new run folder beside the first."""

    def __init__(self, run_dir: Path, plan: RunPlan, cases: list[Case]) -> None:
        self.layout = allocate_run(run_dir.parent)
        origin = plan.rescored_from or run_dir.name  # the run holding the evidence
        update = {"run_id": self.layout.run_id, "rescored_from": origin}
        write_plan(self.layout.root, plan.model_copy(update=update))
        self.collected = Collected(cases, self.layout)

    def add(self, trial: Trial) -> None:
        folder = self.layout.trial_dir(trial.key)
        folder.mkdir(parents=True)
        write_trial(folder, trial)
        self.collected.add(trial)

    def close(self) -> Path:
        self.collected.close()
        return self.layout.root

    def discard(self) -> None:
        self.collected.discard()
        shutil.rmtree(self.layout.root, ignore_errors=True)


def decided(before: TrialScore, after: TrialScore) -> str:
    """The check that decided the new verdict: for a fail or an error, the check it names;
    for a pass, the check that had decided the old verdict, as it stands now."""
    item = after.decided_by if after.verdict is not TrialVerdict.PASS else before.decided_by
    if item is None:
        return after.reason or "composite"
    now = next((m for m in after.checks if m.name == item), None)
    was = next((m for m in before.checks if m.name == item), None)
    if now is None:
        return item
    status = f"{_state(was)} → " if was is not None else ""
    reason = f" ({now.result.reason})" if now.result.reason else ""
    return f"{item}: {status}{_state(now)}{reason}"


def _state(m: Measured) -> str:
    """A check's status, and whether it was an unvalidated judge that did not count."""
    return m.result.status.value + (f" ({UNVALIDATED})" if m.unvalidated else "")


def score_record(
    case_path: Path,
    scenario: Scenario,
    record_path: Path,
    *,
    record_format: str | None = None,
    trace_id: str | None = None,
    workspace: Path | None = None,
    rejudge: bool = False,
) -> TrialScore:
    """One record measured against a scenario, with the suite's judge when the case file
    belongs to a suite. A trial.json is read with everything its trial left (its services'
    recordings, its workspace, its validators' metrics), as re-scoring reads it."""
    suite_dir = suite_of(case_path)
    judge = judge_of_suite(suite_dir, rejudge)
    if record_path.name != "trial.json":
        record = load_record(record_path, format=record_format, trace_id=trace_id)
        evidence = Evidence(record=record, workspace=workspace, scenario_id=scenario.id)
        return measure_trial(scenario, evidence, suite_dir=suite_dir, judge=judge)
    folder = record_path.parent
    trial = read_trial(folder)
    with stored_workspace(_run_of(folder), folder, trial) as kept:
        extra = Validation.from_trial(trial).extra()
        settings = _today(suite_dir)[1]
        evidence = stored_evidence(
            folder, trial, workspace=workspace or kept, settings=settings, extra=extra
        )
        return measure_trial(scenario, evidence, suite_dir=suite_dir, judge=judge)


def _run_of(folder: Path) -> Path:
    """The run a stored trial's folder belongs to: the nearest folder above with a run.json."""
    return next((p for p in folder.parents if (p / "run.json").is_file()), folder)


def _today(suite: Path) -> tuple[dict[str, str], ServiceSettings]:
    """`[agent] env` and the sql servers as the suite declares them today: neither secrets
    nor the servers' passwords (which the checks' reader login is made from) are stored."""
    if not Suite.exists(suite):
        return {}, ServiceSettings()
    loaded = load_suite(suite)
    return loaded.agent_env, ServiceSettings(servers=loaded.sql_servers())


def judge_of_suite(suite: Path, rejudge: bool) -> Judge | None:
    """The suite's judge, if it is a suite and declares one."""
    return make_judge(load_suite(suite), rejudge=rejudge) if Suite.exists(suite) else None


def judge_for_run(run_dir: Path, *, rejudge: bool = False) -> Judge | None:
    """The judge of the suite a stored run came from."""
    return judge_of_suite(Path(read_plan(run_dir).suite), rejudge)
