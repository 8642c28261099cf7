"""`sounding audit`: whether each scenario's checks can tell success from failure.

Each scenario is played by stand-ins for the agent, one trial each, with its services and
workspace as a run has them: its `reference:` (a command or callable run as the suite's
agent is, or a stored record scored as `sounding score --record` scores it), the null
agent (it does nothing and answers nothing), and each of its `broken:` variants.
`sounding.scoring.ScenarioAudit` reads what they got. The trials are kept in
`results/audit-<time>/trials/<case>/<scenario>/<stand-in>/`, beside `audit.json`; the
folder holds no run.json, so no command that reads runs mistakes it for one.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sounding._files import write_text
from sounding.record import RecordError
from sounding.runner._agent import RUNNING, AgentContext
from sounding.runner._cells import DEFAULT_CELL, Cell
from sounding.runner._config import Suite
from sounding.runner._plan import RunOptions, kept_origin, select_scenarios
from sounding.runner._pool import Listed, TrialPool, Work
from sounding.runner._rescore import score_record
from sounding.runner._run import STOP_GRACE, RunHooks, check_judge
from sounding.runner._setup import make_agent, prepare_run
from sounding.runner._trial import Agent, TrialPlan, TrialSettings
from sounding.runner._workspace import Origin
from sounding.scoring import (
    Audit,
    Probe,
    ProbeRole,
    ScenarioAudit,
    TrialVerdict,
    score_error_kind,
)
from sounding.spec import Case, Scenario, StandIn, load_cases
from sounding.store import ResultsError, Trial, TrialKey, allocate_run, safe_name

AUDIT_FILE = "audit.json"
NULL_PLAYS = "the null agent"


@dataclass(frozen=True)
class AuditOptions:
    """What the user selected on the command line."""

    cases: list[str] = field(default_factory=list)
    scenarios: list[str] = field(default_factory=list)
    parallel: int | None = None


@dataclass(frozen=True)
class _Part:
    """One stand-in of one scenario: the null agent when `stand_in` is None."""

    case: Case
    scenario: Scenario
    role: ProbeRole
    index: int = 0  # of a broken variant, in the scenario's `broken:`
    stand_in: StandIn | None = None

    @property
    def name(self) -> str:
        """`reference`, `null` or `broken[0]`, as the audit names it."""
        return f"broken[{self.index}]" if self.role is ProbeRole.BROKEN else self.role.value

    @property
    def plays(self) -> str:
        return NULL_PLAYS if self.stand_in is None else str(self.stand_in)

    @property
    def key(self) -> TrialKey:
        return TrialKey(self.name, self.case.name, self.scenario.id, 1)

    @property
    def folder(self) -> Path:
        """Its trial's folder, in the audit's: `trials/<case>/<scenario>/<stand-in>`."""
        mine = f"broken-{self.index}" if self.role is ProbeRole.BROKEN else self.role.value
        return Path("trials", safe_name(self.case.name), safe_name(self.scenario.id), mine)

    def where(self) -> str:
        """Where its stand-in is written, for an error: `cases/a.yaml:12: scenario 'x'
        reference`."""
        line = f":{self.stand_in.line}" if self.stand_in and self.stand_in.line else ""
        return f"{self.case.path}{line}: scenario '{self.scenario.id}' {self.name}"


def audit_suite(suite: Suite, options: AuditOptions, hooks: RunHooks | None = None) -> Audit:
    """Play every selected scenario with its stand-ins, one trial each, and say what they
    show. Raises what a run raises before its first trial (SpecError, SuiteConfigError,
    RunSetupError, WorkspaceError), and KeyboardInterrupt when `hooks.interrupted()` says
    so; a trial's own failure is its verdict."""
    hooks = hooks or RunHooks()
    cases = load_cases(suite.case_files(options.cases), suite_dir=suite.root)
    for note in (note for case in cases for note in case.notes):
        hooks.on_note(note)
    chosen = select_scenarios(cases, options.scenarios)
    settings = prepare_run(suite, RunOptions(llm="live"), agent=null_agent(suite))
    check_judge(suite, cases, settings)
    parts = [part for case, scenario in chosen for part in _parts(case, scenario)]
    groups = _groups(suite, settings, parts)  # every stand-in resolved before any trial
    root = allocate_run(suite.results_dir, prefix="audit-").root
    try:
        plans = _plans(suite, root, groups)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)  # nothing ran: nothing to keep
        raise
    # trials of one stand-in at once: `--parallel`, else `[defaults] parallel`, else the cores
    parallel = options.parallel or suite.config.defaults.parallel or os.cpu_count() or 1
    hooks.on_plan(sum(len(group_plans) for _, group_plans in plans), 0)
    trials = {trial.key: trial for trial in _play(plans, parallel, hooks)}
    probes = {part.key: _probe(suite, part, trials.get(part.key)) for part in parts}
    audit = Audit(suite=str(suite.root), folder=str(root), scenarios=_scenarios(chosen, probes))
    write_text(root / AUDIT_FILE, json.dumps(audit.document(), indent=1) + "\n")
    return audit


def null_agent(suite: Suite) -> Agent:
    """The agent that does nothing: no tool call, no file, an empty answer, exit 0. It is
    handed what the suite's agent is (`[agent] env`), and ignores it."""
    return Agent("callable", function=_nothing, env=suite.agent_env, attempts=1)


def _nothing(prompt: str, context: AgentContext) -> str:
    return ""


def _parts(case: Case, scenario: Scenario) -> list[_Part]:
    """The stand-ins of a scenario, in the audit's order: reference, null, broken."""
    parts = [_Part(case, scenario, ProbeRole.REFERENCE, stand_in=scenario.reference)]
    parts = parts if scenario.reference is not None else []
    parts.append(_Part(case, scenario, ProbeRole.NULL))
    broken = enumerate(scenario.broken)
    return parts + [_Part(case, scenario, ProbeRole.BROKEN, i, s) for i, s in broken]


@dataclass
class _Group:
    """The parts one agent plays (a stand-in a case shares plays all its scenarios), with
    the settings that run it; a stored record is no agent: its parts are scored."""

    settings: TrialSettings | None
    parts: list[_Part] = field(default_factory=list)


def _groups(suite: Suite, settings: TrialSettings, parts: list[_Part]) -> list[_Group]:
    groups: dict[tuple[str, str], _Group] = {}
    for part in parts:
        stand_in = part.stand_in
        name = ("null", "") if stand_in is None else (stand_in.kind, stand_in.target)
        if name not in groups:
            groups[name] = _Group(_settings(suite, settings, part))
        groups[name].parts.append(part)
    return list(groups.values())


def _settings(suite: Suite, settings: TrialSettings, part: _Part) -> TrialSettings | None:
    """The settings its agent runs with: the run's, with the stand-in as the agent."""
    stand_in = part.stand_in
    if stand_in is None:
        return settings
    if stand_in.record is not None:
        return None
    update = {"command": stand_in.command, "callable": stand_in.callable}
    config = suite.config.agent.model_copy(update=update)
    return replace(settings, agent=make_agent(suite, config, part.where()))


def _plans(suite: Suite, root: Path, groups: list[_Group]) -> list[tuple[_Group, list[TrialPlan]]]:
    """Each group's trials, the start state of each workspace found once and kept once."""
    origins: dict[int, Origin] = {}
    planned = []
    for group in groups:
        plans = []
        for part in group.parts if group.settings is not None else ():
            origin = kept_origin(suite, root, part.scenario, origins)
            cell = Cell(DEFAULT_CELL)  # the scenario as written: stand-ins are no cell of it
            plans.append(
                TrialPlan(part.key, part.case, part.scenario, origin, root / part.folder, cell)
            )
        planned.append((group, plans))
    return planned


def _play(
    planned: list[tuple[_Group, list[TrialPlan]]],
    parallel: int,
    hooks: RunHooks,
) -> Iterator[Trial]:
    """Every trial, one group's after another, up to `parallel` of a group at once. When
    interrupted, no new trial starts and the running agents are killed."""
    RUNNING.stopping.clear()
    for group, plans in planned:
        if not plans or group.settings is None:
            continue
        listed = Listed(iter(plans), len(plans))
        work = Work(listed, len(plans), group.settings, parallel, hooks.interrupted)
        pool = TrialPool(work, parallel)
        try:
            for trial in pool.outcomes():
                hooks.on_trial(trial)
                yield trial
        except BaseException:
            RUNNING.stop_all()
            pool.stop(STOP_GRACE)
            raise


def _probe(suite: Suite, part: _Part, trial: Trial | None) -> Probe:
    """What the part's stand-in got: its record's score, or its trial's verdict."""
    if part.stand_in is not None and part.stand_in.record is not None:
        return _scored(suite, part, part.stand_in.record)
    assert trial is not None, f"{part.key.label} never finished"  # an interruption raised
    return Probe(
        name=part.name,
        role=part.role,
        plays=part.plays,
        verdict=trial.verdict,
        reason=trial.reason,
        error_kind=trial.error_kind,
        trial=str(part.folder),
    )


def _scored(suite: Suite, part: _Part, record: str) -> Probe:
    """A stored record's stand-in, scored as `sounding score CASE --record R` scores it; a
    record that cannot be read is its own error."""
    said: dict[str, Any] = {"name": part.name, "role": part.role, "plays": part.plays}
    try:
        score = score_record(part.case.path, part.scenario, suite.root / record)
    except (RecordError, ResultsError) as exc:
        error = TrialVerdict.ERROR
        return Probe(**said, verdict=error, reason=str(exc), error_kind="agent")
    kind = score_error_kind(score)
    return Probe(**said, verdict=score.verdict, reason=score.reason, error_kind=kind)


def _scenarios(
    chosen: list[tuple[Case, Scenario]], probes: dict[TrialKey, Probe]
) -> list[ScenarioAudit]:
    audits = []
    for case, scenario in chosen:
        mine = [p for k, p in probes.items() if (k.case, k.scenario) == (case.name, scenario.id)]
        audits.append(ScenarioAudit(case=case.name, scenario=scenario.id, probes=mine))
    return audits
