"""One trial, in small steps: prepare → run → collect → measure → store."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sounding._files import read_regular, write_bytes, write_text
from sounding._sandbox import Sandbox
from sounding._secrets import (
    redact,
    redact_bytes,
    redact_json,
    redact_sqlite,
    secret_values,
    url_passwords,
)
from sounding._words import listed
from sounding.checks import Evidence
from sounding.record import TRACE_ENV, RecordError, RunRecord, Usage, llm_usage, total
from sounding.runner._agent import RUNNING, AgentRun, TurnInput, run_callable, run_command
from sounding.runner._cassette import (
    CassetteError,
    cassette_path,
    llm_proxy,
    record_cassette,
    unanswered,
)
from sounding.runner._cells import Cell
from sounding.runner._collect import READ_LIMIT, build_record
from sounding.runner._workspace import (
    Origin,
    changes,
    checks_read_workspace,
    folder_entries,
    keep_touched,
    prepare,
    remove_planted,
    workspace_identity,
)
from sounding.scoring import measure_trial, score_error_kind
from sounding.services import (
    LlmProxy,
    OtlpReceiver,
    ServiceError,
    ServiceSet,
    ServiceSettings,
    start_services,
)
from sounding.simulator import SimulatedUser
from sounding.spec import Case, Scenario
from sounding.store import Trial, TrialKey, write_trial
from sounding.validators import FinishedTrial, Validation, run_validators

if TYPE_CHECKING:
    from sounding.judge import JudgeClient


@dataclass(frozen=True)
class Agent:
    """The agent under test, resolved once per run."""

    kind: str  # "command" | "callable"
    argv: list[str] = field(default_factory=list)
    function: Any = None
    env: dict[str, str] = field(default_factory=dict)
    attempts: int = 3
    sandbox: bool = False
    network: str = "auto"  # in the sandbox: "on", "off", or on for a case with services
    target: str = ""  # a callable's `module:function`, as `[agent] callable` names it

    def run(self, given: TurnInput, args: list[str]) -> AgentRun:
        if self.kind == "command":
            return run_command([*self.argv, *args], given)
        return run_callable(self.function, given)


@dataclass(frozen=True)
class TrialPlan:
    """Everything one trial needs, decided before it starts."""

    key: TrialKey
    case: Case
    scenario: Scenario
    origin: Origin
    folder: Path
    cell: Cell

    @property
    def workspace(self) -> Path:
        return self.folder / "workspace"

    @property
    def trace(self) -> Path:
        return self.folder / "trace.jsonl"

    @property
    def llm_calls(self) -> Path:
        """The calls to its model API the agent made, each request with its answer."""
        return self.folder / "llm-calls.json"

    @property
    def spans(self) -> Path:
        """The OpenTelemetry spans the agent exported, as one OTLP/JSON export."""
        return self.folder / "spans.json"


@dataclass(frozen=True)
class TrialSettings:
    """What is the same for every trial of a run."""

    agent: Agent
    suite_root: Path
    judge: JudgeClient | None
    service_settings: ServiceSettings
    base_env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    capture_otlp: bool = False  # a receiver for the agent's OpenTelemetry spans, per trial
    capture_llm: dict[str, str] | None = None  # the upstreams of a proxy to its model API
    llm_mode: str = "live"  # or "record" (cassettes written) or "replay" (served from them)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)  # `[prices]`
    max_tokens: int | None = None  # a trial's budget: `[defaults] max_tokens`
    max_cost_usd: float | None = None  # and `[defaults] max_cost_usd`
    simulator: JudgeClient | None = None  # the model playing simulated users: `[simulator]`

    def over_budget(self, usage: Usage) -> str | None:
        """Why `usage` is past a trial's budget, or None when it is within (or has none)."""
        tokens = usage.input_tokens + usage.output_tokens
        if self.max_tokens is not None and tokens > self.max_tokens:
            return f"{tokens:,} tokens, over [defaults] max_tokens = {self.max_tokens:,}"
        spent = usage.cost_usd
        if self.max_cost_usd is not None and spent is not None and spent > self.max_cost_usd:
            return f"{spent:.4f} USD, over [defaults] max_cost_usd = {self.max_cost_usd}"
        return None

    @cached_property
    def base_secrets(self) -> dict[str, str]:
        """The secret values of the environment sounding runs in, and the passwords of the
        services' server URLs: found once per run."""
        return {**secret_values(self.base_env), **url_passwords(self.service_settings.servers)}


NO_SPACE = (errno.ENOSPC, errno.EDQUOT)  # a full device stops the run; it fails no trial


class TrialInterrupted(Exception):
    """The run was interrupted while this trial ran: it is left unfinished, to run on resume."""


class TrialAbandoned(Exception):
    """The callable overran its deadline and the run already recorded the trial as an error."""


class TrialsLost(Exception):
    """Trials an executor lost again and again (their Ray worker died each time they ran):
    left unfinished, never counted, for `--resume`; the run's other trials finished."""

    def __init__(self, keys: list[TrialKey], tries: int) -> None:
        labels = ", ".join(key.label for key in keys)
        super().__init__(
            f"{len(keys)} trial(s) lost with their Ray worker {tries} times each ({labels}): "
            "left unfinished, not counted"
        )
        self.keys = keys


class AgentWatch(Protocol):
    """How the run's pool follows a trial: when its agent started, and when it returned."""

    def agent_started(self, timeout: float) -> None: ...

    def agent_returned(self) -> bool: ...


def run_trial(plan: TrialPlan, settings: TrialSettings, watch: AgentWatch) -> Trial:
    """Run one trial to the end and store it; never raises for anything the agent or a
    check did."""
    started = time.monotonic()
    plan.folder.mkdir(parents=True, exist_ok=True)
    secrets = _secrets(settings, plan)
    try:
        # redacted here too: what the agent left must serialize
        trial = _run(plan, settings, started, watch, secrets).redacted(secrets)
    except (TrialInterrupted, TrialAbandoned):
        raise
    except CassetteError as exc:  # the suite's file, not a fault of the harness's code
        trial = failed_trial(plan, str(exc), started, kind="harness").redacted(secrets)
    except ServiceError as exc:  # a database or mock the scenario needs did not come up
        reason = f"a service did not start: {exc}"
        trial = failed_trial(plan, reason, started, kind="service").redacted(secrets)
    except Exception as exc:  # the runner boundary: one broken trial never stops the others
        if isinstance(exc, OSError) and exc.errno in NO_SPACE:
            raise  # the machine's fault, not the trial's: it stays unfinished, for --resume
        write_text(plan.folder / "harness-error.txt", redact(traceback.format_exc(), secrets))
        reason = f"{type(exc).__name__}: {exc}"
        trial = failed_trial(plan, reason, started, kind="harness").redacted(secrets)
    # once read, whatever became of the trial
    _redact_files([plan.trace, plan.spans, plan.llm_calls], secrets)
    write_trial(plan.folder, trial)
    return trial


def _run(
    plan: TrialPlan,
    settings: TrialSettings,
    started: float,
    watch: AgentWatch,
    secrets: dict[str, str],
) -> Trial:
    """The finished trial; `secrets` are the values no stored file of it may hold."""
    with (
        start_services(
            plan.case.services,
            trial_dir=plan.folder,
            suite_dir=settings.suite_root,
            settings=settings.service_settings,
        ) as services,
        OtlpReceiver() if settings.capture_otlp else contextlib.nullcontext() as receiver,
        _proxy(plan, settings) as proxy,
    ):
        env = {**services.env, **(receiver.env() if receiver else {})}
        env.update(proxy.env() if proxy else {})
        given_env = agent_env(settings, plan)
        before = folder_entries(plan.folder)  # what sounding made there: its services
        run, attempts, made, user = _attempts(plan, settings, env, watch, secrets)
        if not watch.agent_returned():
            raise TrialAbandoned(plan.key.label)
        if RUNNING.stopping.is_set():  # its agent was killed by Ctrl-C: not a result
            raise TrialInterrupted(plan.key.label)
        planted = remove_planted(plan.folder, before)
        _store_agent_output(plan.folder, run, secrets)
        spans = receiver.export() if receiver else None
        if spans is not None:  # kept as they came, redacted with the trace
            write_text(plan.spans, json.dumps(spans))
        calls = proxy.exchanges() if proxy else []
        if settings.llm_mode == "record":
            record_cassette(_cassette(plan, settings), calls, secrets)
        if proxy and proxy.unanswered:
            reason = unanswered(_cassette(plan, settings), proxy)  # the agent asked something new
            return failed_trial(plan, reason, started, attempts, kind="agent")
        calls = [{k: v for k, v in call.items() if k != "raw"} for call in calls]
        if calls:
            write_text(plan.llm_calls, json.dumps(calls))
        simulated = _simulated(user, settings)
        try:  # with a simulated user, the turns it said; else the scenario's as the cell sent them
            turns = run.said if user else plan.cell.turns(plan.scenario.user)
            record = build_record(turns, run, plan.trace, spans, calls, settings.prices)
        except RecordError as exc:  # the trace the agent wrote: its trial's error, not ours
            reason = str(exc)
            return failed_trial(plan, reason, started, attempts, kind="agent", **simulated)
        if user and user.error:  # the simulator's failure, never the agent's
            return failed_trial(
                plan, user.error, started, attempts, record, kind="simulator", **simulated
            )
        spent = settings.over_budget(record.usage)
        if spent is not None:  # what the agent did past its budget is not measured
            reason = f"over its budget: {spent}"
            return failed_trial(plan, reason, started, attempts, record, kind="budget")
        error = (
            _agent_error(run, settings.agent.kind)
            or _replaced(plan.workspace, made)
            or _outside(planted)
        )
        if error:
            return failed_trial(plan, error, started, attempts, record, kind="agent")
        evidence = _evidence(plan, record, run, services, given_env, secrets)
        judge = settings.judge.metered() if settings.judge else None  # its spending apart
        validation = _validate(plan, settings, evidence, secrets, judge)
        _redact_files((plan.folder / "validation").glob("*"), secrets)
        score = None
        if validation.valid:  # an invalid trial is an error: its checks are not run
            score = measure_trial(
                plan.scenario,
                validation.applied(evidence),
                suite_dir=settings.suite_root,
                judge=judge,
            )
    # a validation context replays by hand on the whole workspace: with validators, it stays
    kept = None if plan.case.validators else keep_touched(plan.origin, plan.workspace, evidence)
    if workspace_identity(plan.workspace) is not None:  # not swapped for a link
        _redact_files((plan.workspace / name for name in evidence.touched or ()), secrets)
    return Trial(
        **plan.key.as_dict(),
        origin=kept,
        reason=score.reason if score else validation.reason,
        error_kind=validation.kind if score is None else score_error_kind(score),
        duration_ms=_ms(started),
        attempts=attempts,
        usage=record.usage.model_dump(exclude_none=True) | {"turns": record.turns},
        judge_usage=_spent(judge, settings),
        **simulated,
        metrics=dict(validation.metrics),
        metric_reasons=dict(validation.reasons),
        touched=sorted(evidence.touched or ()),
        byproducts=sorted(evidence.byproducts),
        exit_code=run.exit_code,
        score=score,
        record=record,
    )


def failed_trial(
    plan: TrialPlan,
    reason: str,
    started: float,
    attempts: int = 0,
    record: RunRecord | None = None,
    *,
    kind: str,
    **kept: Any,
) -> Trial:
    """A trial the harness could not score: an error of a `kind` (`ERROR_KINDS`), saying
    why (and `kept`: the other fields of `Trial` it has)."""
    return Trial(
        **plan.key.as_dict(),
        reason=reason,
        duration_ms=_ms(started),
        attempts=attempts,
        record=record,
        error_kind=kind,
        **kept,
    )


def _secrets(settings: TrialSettings, plan: TrialPlan) -> dict[str, str]:
    """Values no stored file may hold: the environment's secrets (found once per run), and
    this trial's own: what the suite handed the agent, and what the scenario names."""
    given_env = agent_env(settings, plan)
    everything = {**settings.base_env, **given_env}
    own = secret_values(everything, _declared(plan.scenario), among=given_env)
    return {**settings.base_secrets, **own}


def _spent(client: JudgeClient | None, settings: TrialSettings) -> dict[str, Any]:
    """What a metered model's calls (the judge's, the simulator's) spent on this trial;
    answers read from their cache spend nothing."""
    if client is None or not client.spent:
        return {}
    spent = total(client.spent, settings.prices)
    return spent.model_dump(exclude_none=True) | {"calls": len(client.spent)}


def _simulated(user: SimulatedUser | None, settings: TrialSettings) -> dict[str, Any]:
    """A simulated user's fields of the trial: who it played, its turns, how the
    conversation ended, and what its model spent."""
    if user is None:
        return {}
    played = user.simulation.model_dump()
    return {
        "simulated": {"simulation": played, "ending": user.ending, "turns": user.turns},
        "simulator_usage": _spent(user.client, settings),
    }


def _validate(
    plan: TrialPlan,
    settings: TrialSettings,
    evidence: Evidence,
    secrets: dict[str, str],
    judge: JudgeClient | None,
) -> Validation:
    """The case's validators, between collect and measure (docs/validators.md)."""
    if not plan.case.validators:
        return Validation()
    trial = FinishedTrial(
        folder=plan.folder,
        case=plan.case,
        scenario=plan.scenario,
        cell=plan.key.cell,
        trial=plan.key.trial,
        prompt="\n\n".join(plan.cell.turns(plan.scenario.user)),
        evidence=evidence,
        suite_dir=settings.suite_root,
        reference=plan.origin.tree,
        reference_ref=plan.scenario.workspace.ref,
        given=tuple(sorted(plan.origin.given)),
        record=redact_json(evidence.record.to_json(), secrets),
    )
    return run_validators(trial, judge=judge)


def _attempts(
    plan: TrialPlan,
    settings: TrialSettings,
    service_env: dict[str, str],
    watch: AgentWatch,
    secrets: dict[str, str],
) -> tuple[AgentRun, int, tuple[int, int] | None, SimulatedUser | None]:
    """Retry only a trial that produced nothing; a trial that produced a result never re-runs.
    With what the agent made of it: how many attempts, the workspace folder's identity
    as it was laid out (None when a callable's empty one was not laid out), and the
    simulated user of the last attempt (each attempt meets a fresh one)."""
    workspace = plan.workspace
    run, user = AgentRun(), None
    for attempt in range(1, settings.agent.attempts + 1):
        if attempt > 1:  # the first attempt starts in a fresh folder
            shutil.rmtree(workspace, ignore_errors=True)
            plan.trace.unlink(missing_ok=True)
        made = not _lazy_workspace(plan, settings)
        if made:
            prepare(plan.origin, workspace)
        identity = workspace_identity(workspace) if made else None
        user = _simulated_user(plan, settings, secrets)
        given = _turn_input(plan, settings, service_env, made, user)
        if settings.agent.kind == "callable":
            watch.agent_started(given.timeout)  # a command agent's own timeout stops it
        run = settings.agent.run(given, plan.cell.delta.args)
        if not run.produced_nothing:
            return run, attempt, identity, user
    return run, settings.agent.attempts, identity, user


def _replaced(workspace: Path, made: tuple[int, int] | None) -> str | None:
    """Why the workspace cannot be measured: the agent put a link or another folder in the
    place of the one sounding made (checks would read wherever it leads)."""
    now = workspace_identity(workspace)
    if now is None and (made is not None or workspace.is_symlink()):
        what = "removed its workspace folder or replaced it with a link"
    elif made is not None and now != made:
        what = "replaced its workspace folder with another one"
    else:
        return None
    return f"the agent {what}: nothing in it is measured"


def _outside(planted: list[str]) -> str | None:
    """Why a trial whose agent wrote in its trial folder, outside its workspace, is not
    measured (what it wrote there is gone already)."""
    if not planted:
        return None
    return (
        f"the agent wrote outside its workspace, in its trial folder: {listed(planted, 5)}; "
        "removed, so nothing of it is stored or measured"
    )


def _lazy_workspace(plan: TrialPlan, settings: TrialSettings) -> bool:
    """A callable's workspace that starts empty and that no check or validator looks into
    is made only if the agent asks for it: most such trials never touch a file."""
    origin, scenario = plan.origin, plan.scenario
    if settings.agent.kind != "callable" or origin.tree is not None or origin.given:
        return False
    looked_into = plan.case.validators or scenario.test_command or scenario.prepare
    return not looked_into and not checks_read_workspace(scenario)


def _simulated_user(
    plan: TrialPlan, settings: TrialSettings, secrets: dict[str, str]
) -> SimulatedUser | None:
    """The scenario's simulated user, when it has one: the simulator counting its own spend,
    reading the agent's answers with this trial's secrets as their markers."""
    simulation = plan.scenario.simulate
    if simulation is None or settings.simulator is None:
        return None
    prompt, fixed = plan.cell.delta.prompt, plan.scenario.user
    return SimulatedUser(
        settings.simulator.metered(),
        simulation,
        fixed=fixed,
        secrets=secrets,
        lead=f"{prompt}\n\n" if prompt is not None and not fixed else "",
    )


def _turn_input(
    plan: TrialPlan,
    settings: TrialSettings,
    service_env: dict[str, str],
    made: bool,
    user: SimulatedUser | None,
) -> TurnInput:
    env = {
        **settings.base_env,
        **agent_env(settings, plan),
        **service_env,
        TRACE_ENV: str(plan.trace),
        "SOUNDING_WORKSPACE": str(plan.workspace),
        "SOUNDING_TRIAL": str(plan.key.trial),
        "SOUNDING_SCENARIO": plan.key.scenario,
        "SOUNDING_CASE": plan.key.case,
    }
    return TurnInput(
        turns=plan.cell.turns(plan.scenario.user),
        workspace=plan.workspace,
        trace_path=plan.trace,
        folder=plan.folder,
        env=env,
        timeout=plan.scenario.timeout,
        workspace_made=made,
        sandbox=_sandbox(plan, settings) if settings.agent.sandbox else None,
        user=user,
    )


def _proxy(
    plan: TrialPlan, settings: TrialSettings
) -> contextlib.AbstractContextManager[LlmProxy | None]:
    def over(calls: list[dict[str, Any]]) -> str | None:
        return settings.over_budget(llm_usage(calls, settings.prices))

    return llm_proxy(settings.capture_llm, settings.llm_mode, _cassette(plan, settings), over)


def _cassette(plan: TrialPlan, settings: TrialSettings) -> Path:
    return cassette_path(settings.suite_root, plan.key)


def _sandbox(plan: TrialPlan, settings: TrialSettings) -> Sandbox:
    """The agent sees the system and its suite read-only and may change its workspace, its
    trace and its services' files; the network is on when the case's services need it."""
    plan.trace.touch()  # a file is bound into the sandbox as it is: it must exist first
    services = plan.folder / "services"
    writable = (plan.workspace, plan.trace, *([services] if services.is_dir() else []))
    mode = settings.agent.network
    loopback = bool(plan.case.services) or settings.capture_otlp or bool(settings.capture_llm)
    network = mode == "on" or (mode == "auto" and loopback)
    return Sandbox((settings.suite_root, plan.folder), writable, network)


def _agent_error(run: AgentRun, kind: str) -> str | None:
    """Why the run gave no result to score: the agent did not start, was killed by a
    signal (it did not end as a program ends), or ran out of time."""
    if run.failed_to_start:
        return f"the agent did not start: {run.failed_to_start}"
    if run.signal is not None and not run.timed_out:
        name = signal.Signals(run.signal).name if run.signal in signal.valid_signals() else ""
        return f"the agent was killed by signal {run.signal} {name}".rstrip()
    if run.timed_out and kind == "callable":
        return f"timed out: the callable returned after {run.duration_ms / 1000:.1f}s"
    if run.timed_out:
        return (
            f"timed out after {run.duration_ms / 1000:.1f}s; the agent's process group was killed"
        )
    return None


def overrun_trial(plan: TrialPlan, timeout: float, started: float) -> Trial:
    """A callable trial still running past its timeout: an error, recorded by the run."""
    reason = (
        f"timed out after {timeout:.1f}s; a callable cannot be stopped, so its thread was "
        "left behind (use a command agent for a hard stop)"
    )
    return failed_trial(plan, reason, started, attempts=1, kind="agent")


def agent_env(settings: TrialSettings, plan: TrialPlan) -> dict[str, str]:
    """What the suite itself handed the agent: `[agent] env`, the scenario's, the cell's.

    Kept in memory for `secrets_in_logs`, never written to an artifact.
    """
    return {**settings.agent.env, **plan.scenario.env, **plan.cell.env()}


def _evidence(
    plan: TrialPlan,
    record: RunRecord,
    run: AgentRun,
    services: ServiceSet,
    given_env: dict[str, str],
    secrets: dict[str, str],
) -> Evidence:
    workspace = plan.workspace
    found = changes(plan.origin, workspace)
    if found.diff:
        write_text(plan.folder / "diff.patch", redact(found.diff, secrets))
    service_evidence = services.evidence()
    if services:
        services.store(plan.folder)
        _redact_files((plan.folder / "services").glob("*.json"), secrets)
        for database in (plan.folder / "services").glob("*.sqlite") if secrets else ():
            redact_sqlite(database, secrets)
    return Evidence(
        record=record,
        workspace=workspace,
        touched=frozenset(found.touched),
        byproducts=frozenset(found.byproducts),
        diff=found.diff,
        stdout=run.stdout,
        stderr=run.stderr,
        exit_code=run.exit_code,
        services=service_evidence,
        scenario_id=plan.scenario.id,
        trial=plan.key.trial,
        cell=plan.key.cell,
        secrets=secrets,
        extra={"trace_path": str(plan.trace), "env": services.env, "agent_env": given_env},
    )


def _store_agent_output(folder: Path, run: AgentRun, secrets: dict[str, str]) -> None:
    """What the agent printed, with every secret value replaced by its marker."""
    for name, output in (("stdout.txt", run.stdout), ("stderr.txt", run.stderr)):
        if output:
            write_text(folder / name, redact(output, secrets))


def _redact_files(paths: Iterable[Path], secrets: dict[str, str]) -> None:
    """Files written by others (the agent, its services), as kept: without secret values.
    One too large to scan is not kept: a note of its size stands in its place. A link or a
    FIFO is never followed."""
    for path in paths if secrets else ():
        found = read_regular(path, READ_LIMIT + 1)
        if found is None:
            continue  # deleted, a link, or not a regular file: nothing of it is kept as text
        data, size = found
        if size > READ_LIMIT:
            note = f"sounding did not keep this file: {size} bytes, over the {READ_LIMIT >> 20} MiB"
            write_text(path, f"{note} it scans for secrets\n")
        elif (clean := redact_bytes(data, secrets)) != data:
            write_bytes(path, clean)


def _declared(scenario: Scenario) -> list[str]:
    """Variables a scenario's `secrets_in_logs` rule names, secret-looking or not."""
    names: list[str] = []
    for rule in scenario.forbidden:
        variables = getattr(rule.check.params, "variables", "deny")
        if rule.check.type == "secrets_in_logs" and variables != "deny":
            names.extend(variables)
    return names


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000
