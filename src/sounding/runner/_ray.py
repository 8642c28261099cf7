"""The `ray` executor: each trial is one Ray task that calls `run_trial` on a Ray worker.

With `[executor] artifacts = "shared"` (the default) the worker writes the trial's folder in
place, with the same atomic writes as a local run, so its machine must see the run's results
folder and the suite where this process does (one machine, or a shared filesystem). With
`"driver"` the suite travels as the Ray job's `working_dir`, the worker runs the trial in a
folder of its own and the trial's folder comes back as the task's value, stored here
(`runner._artifacts`). This process submits up to `parallel` tasks at once,
takes each outcome as it finishes, and ends a task still running past its deadline (its
scenario's timeout for every attempt of the agent, plus a grace) with
`ray.cancel(force=True)`: that trial is recorded as an error of the harness. A trial whose
worker died under it (killed, out of memory, its node gone) is no outcome: its folder is
cleared and it runs again, up to `LOST_TRIES` times in all, then it is left unfinished for
`--resume` while the other trials go on. Ray is imported only when this executor is chosen
(`pip install 'sounding[ray]'`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from types import ModuleType
from typing import TYPE_CHECKING, Any

from sounding.runner._agent import ImportedCallable
from sounding.runner._artifacts import Shipped, Unwatched, run_shipped, stored
from sounding.runner._config import ExecutorConfig, SuiteConfigError
from sounding.runner._plan import RunOptions, scenario_at
from sounding.runner._trial import (
    TrialPlan,
    TrialSettings,
    TrialsLost,
    failed_trial,
    overrun_trial,
    run_trial,
)
from sounding.spec import Case
from sounding.store import Trial, write_trial

if TYPE_CHECKING:
    from sounding.runner._pool import Work

GRACE = 60.0  # seconds past a trial's timeouts before its task is cancelled
CALLABLE_GRACE = 10.0  # the same for a callable agent, which only a cancel can stop
LOST_TRIES = 3  # runs of a trial whose worker keeps dying, before it is left for --resume
_CANCELLED = 10.0  # seconds a cancelled task's worker has to end before its trial is written
_PROBE = 5.0  # seconds a cluster's address has to accept a connection
_TICK = 0.05  # seconds this process waits for an outcome between looks at Ctrl-C, deadlines
_CHOSEN = 'the ray executor (--executor ray, [executor] kind = "ray")'


def check(config: ExecutorConfig, options: RunOptions, settings: TrialSettings) -> None:
    """Refuse, before the run starts, what cannot run as Ray tasks yet, and a cluster
    address where nothing answers."""
    _ray()
    why = _refused(config, options, settings)
    if why:
        raise SuiteConfigError(f"{_CHOSEN} cannot run {why} yet; run it with --executor local")
    _answers(_address(config))


def _address(config: ExecutorConfig) -> str:
    """--ray-address, else [executor] address, else RAY_ADDRESS, else a local instance."""
    return config.address or os.environ.get("RAY_ADDRESS") or "local"


def _answers(address: str) -> None:
    """A cluster's `HOST:PORT` accepts connections, or an error now: Ray itself would retry
    for minutes. Other forms (`local`, `auto`, `ray://...`) are left to Ray."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "/" in host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE).close()
    except OSError as exc:
        raise SuiteConfigError(_unreachable(address, exc)) from None


def _refused(config: ExecutorConfig, options: RunOptions, settings: TrialSettings) -> str | None:
    """What of this run cannot travel to a Ray worker, be scheduled there, or come back from
    one with `artifacts = "driver"`, in words."""
    if options.until_decided is not None:
        return "--until-decided (its schedule waits on outcomes in this process)"
    if settings.agent.kind == "callable" and not settings.agent.target:
        return "a callable agent given as a Python object (name it in [agent] callable)"
    if config.artifacts == "driver" and (options.llm or settings.llm_mode) == "record":
        return (
            '--llm record with [executor] artifacts = "driver" (the cassettes are written in '
            'the suite, which workers see only as a copy; record with artifacts = "shared")'
        )
    return None


def _ray() -> ModuleType:
    """The `ray` package, or an error naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise SuiteConfigError(
            f"{_CHOSEN} needs Ray, which is not installed: pip install 'sounding[ray]'"
        ) from None
    return ray


def run_on_worker(plan: TrialPlan, settings: TrialSettings) -> Trial:
    """One trial, run and stored on a Ray worker (the body of each Ray task)."""
    return run_trial(plan, settings, Unwatched())


def start(config: ExecutorConfig, work: Work, held: contextlib.ExitStack) -> RayExecutor:
    """Connect to Ray (or start a local instance, shut down with `held`) and get ready."""
    ray = _ray()
    if not ray.is_initialized():
        _connect(ray, config, work)
        held.callback(ray.shutdown)
    elif config.artifacts == "driver" and not _job_working_dir(ray):
        raise SuiteConfigError(
            f'{_CHOSEN} with [executor] artifacts = "driver" ships the suite as the Ray '
            "job's working_dir, and Ray was started in this process without one: let "
            "sounding connect to Ray, or call ray.init(runtime_env={'working_dir': SUITE})"
        )
    has = ray.cluster_resources()
    _check_resources(work.cases, has, config.num_cpus)
    parallel = work.parallel or max(1, int(has.get("CPU", 1) // config.num_cpus))
    return RayExecutor(ray, config, work, parallel)


def _connect(ray: ModuleType, config: ExecutorConfig, work: Work) -> None:
    """`ray.init` for the run: with `artifacts = "driver"`, the suite as its job's
    `working_dir` (uploaded once; every worker runs in a copy of it)."""
    address = _address(config)
    local: dict[str, Any] = {"include_dashboard": False} if address == "local" else {}
    if config.artifacts == "driver":
        local["runtime_env"] = _runtime_env(work)
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING, **local)
    except ConnectionError as exc:
        raise SuiteConfigError(_unreachable(address, exc)) from None
    except ValueError as exc:  # the job's own runtime_env names a working_dir already
        raise SuiteConfigError(
            f'{_CHOSEN} with [executor] artifacts = "driver" could not ship the suite as the '
            f"Ray job's working_dir: {exc}"
        ) from None


def _runtime_env(work: Work) -> dict[str, Any]:
    """The suite folder as the job's `working_dir`, without the run's results, sounding's
    caches and Python's (Ray leaves out `.git` folders and what `.gitignore` lists too)."""
    suite = work.settings.suite_root
    excludes = ["/.sounding", "__pycache__"]
    results = work.run_root.parent if work.run_root is not None else None
    if results is not None and results.is_relative_to(suite) and results != suite:
        excludes.append("/" + results.relative_to(suite).as_posix())
    return {"working_dir": str(suite), "excludes": excludes}


def _job_working_dir(ray: ModuleType) -> bool:
    """Whether the Ray job this process already drives ships a working_dir."""
    return bool(ray.get_runtime_context().runtime_env.get("working_dir"))


def _scheduling(resources: dict[str, float]) -> dict[str, Any]:
    """A scenario's `resources:` as Ray's task options: CPU and GPU are Ray's own."""
    own = {"CPU": "num_cpus", "GPU": "num_gpus"}
    options: dict[str, Any] = {own[name]: n for name, n in resources.items() if name in own}
    custom = {name: n for name, n in resources.items() if name not in own}
    return {**options, "resources": custom} if custom else options


def _check_resources(cases: list[Case], has: dict[str, float], cpus: float) -> None:
    """Before any trial: a scenario asking for more of a resource than the whole cluster
    has would wait forever; refuse it, naming where it asks and what the cluster has."""
    for case in cases:
        for scenario in case.scenarios:
            for name, amount in {"CPU": cpus, **scenario.resources}.items():
                if has.get(name, 0) >= amount:
                    continue
                listed = ", ".join(f"{k} {v:g}" for k, v in sorted(has.items()) if "node:" not in k)
                raise SuiteConfigError(
                    f"{scenario_at(case, scenario)} needs {amount:g} {name} per trial and "
                    f"the Ray cluster has {has.get(name, 0):g} (it has: {listed}): start nodes "
                    "that declare it (`ray start --resources '{\"NAME\": N}'`, `--num-gpus`) "
                    "or take it out of the scenario's `resources:`"
                )


def _shipped(settings: TrialSettings) -> TrialSettings:
    """The settings as a worker gets them: a callable agent travels as its name, imported
    on the worker (its function object belongs to this process)."""
    agent = settings.agent
    if agent.kind != "callable":
        return settings
    function = ImportedCallable(agent.target, settings.suite_root)
    return replace(settings, agent=replace(agent, function=function))


def _unreachable(address: str, exc: OSError) -> str:
    """Why `ray.init` found no cluster at `address`, with what usually makes it answer."""
    return (
        f"{_CHOSEN} could not connect to the Ray cluster at {address} ({exc}). Check that it "
        "runs (`ray status --address ...`); a cluster started with token authentication "
        "needs RAY_AUTH_MODE=token here too, and one kept on 127.0.0.1 needs "
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 here too (docs/scale.md)"
    )


@dataclass
class _Task:
    """A submitted trial: its plan, when this process gives up on it, and how many of its
    tries were lost with their worker."""

    plan: TrialPlan
    started: float
    deadline: float
    lost: int = 0


class RayExecutor:
    """Trials as Ray tasks, up to `parallel` at once; outcomes taken in the calling thread."""

    def __init__(self, ray: ModuleType, config: ExecutorConfig, work: Work, parallel: int) -> None:
        self.spent = 0.0
        self._ray, self._work = ray, work
        self._shipped = config.artifacts == "driver"
        self._task = ray.remote(run_shipped if self._shipped else run_on_worker)
        self._options = {"num_cpus": config.num_cpus, "max_retries": 0}  # + a scenario's
        callable_agent = work.settings.agent.kind == "callable"
        self._grace = config.grace or (CALLABLE_GRACE if callable_agent else GRACE)
        self._settings = ray.put(_shipped(work.settings))  # stored once, not sent per task
        self._parallel = parallel
        self._running: dict[Any, _Task] = {}  # by the task's object ref
        self._meanwhile: list[Trial] = []
        self._unfinished: list[TrialPlan] = []  # lost LOST_TRIES times: left for --resume
        self._closed = False

    @property
    def over_budget(self) -> bool:
        limit = self._work.max_cost
        return limit is not None and self.spent > limit

    def outcomes(self) -> Iterator[Trial]:
        """Each trial as its task finishes; the overrun ones ended here."""
        self._fill()
        while self._running:
            if self._work.interrupted():
                raise KeyboardInterrupt
            ready, _ = self._ray.wait(list(self._running), num_returns=1, timeout=_TICK)
            for ref in ready:
                task = self._running.pop(ref)
                trial = self._result(ref, task.plan)
                if trial is None:
                    self._lost(task)
                else:
                    yield from self._settled(task.plan, trial)
            yield from self._end_overruns()
            self._fill()
        if self._unfinished:
            raise TrialsLost([plan.key for plan in self._unfinished], LOST_TRIES)

    def stop(self, grace: float) -> None:
        """No trial starts any more; the trials still running are cancelled at once (their
        agents die with their workers) and left unfinished, for `--resume`."""
        self._closed = True
        self._work.plans.close()
        refs = list(self._running)
        ready, rest = self._ray.wait(refs, num_returns=len(refs), timeout=0) if refs else ([], [])
        for ref in rest:
            self._ray.cancel(ref, force=True)
        if rest:  # a cancel is only asked for: wait until those workers are gone, so that
            # none writes into a trial folder a resume runs again. What a cancelled task
            # stored is not kept: Ray may end its agent before its worker, which then records
            # the kill as the agent's; its trial runs again on resume
            self._ray.wait(rest, num_returns=len(rest), timeout=grace)
        for ref in rest:
            shutil.rmtree(self._running[ref].plan.folder, ignore_errors=True)
        for ref in ready:
            with contextlib.suppress(Exception):  # a task cancelled or failed finished nothing
                if (trial := self._result(ref, self._running[ref].plan)) is not None:
                    self._meanwhile.append(trial)
        self._running.clear()

    def finished_meanwhile(self) -> list[Trial]:
        found, self._meanwhile = self._meanwhile, []
        return found

    def _fill(self) -> None:
        while not self._closed and len(self._running) < self._parallel:
            plan = self._work.plans.take()
            if plan is None:
                return
            self._submit(plan)

    def _submit(self, plan: TrialPlan, lost: int = 0) -> None:
        options = {**self._options, **_scheduling(plan.scenario.resources)}
        ref = self._task.options(**options).remote(plan, self._settings)
        limit = plan.scenario.timeout * self._work.settings.agent.attempts + self._grace
        started = time.monotonic()
        self._running[ref] = _Task(plan, started, started + limit, lost)

    def _result(self, ref: Any, plan: TrialPlan) -> Trial | None:
        """The task's trial (with `artifacts = "driver"`, its folder stored here first), or
        None when its worker died under it; a fault of the harness on the worker stops the
        run with it."""
        errors = self._ray.exceptions
        try:
            value: Trial | Shipped = self._ray.get(ref)
        except errors.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, BaseException) else exc) from None
        except (errors.WorkerCrashedError, errors.NodeDiedError, errors.ObjectLostError):
            return None
        return stored(plan, value) if isinstance(value, Shipped) else value

    def _lost(self, task: _Task) -> None:
        """A trial whose worker died: no outcome. Its folder (what the dead try left) is
        cleared and it runs again, or it is left for `--resume` once lost `LOST_TRIES` times."""
        lost = task.lost + 1
        if self._closed:  # no trial starts any more: it stays unfinished like the others
            return
        if lost >= LOST_TRIES:
            self._unfinished.append(task.plan)
            return
        shutil.rmtree(task.plan.folder, ignore_errors=True)
        self._submit(task.plan, lost)

    def _settled(self, plan: TrialPlan, trial: Trial) -> Iterator[Trial]:
        """A finished try: counted, then run again (`--retry-errors`) or given."""
        self.spent += trial.spent_usd
        if self.over_budget:
            self._closed = True
            self._work.plans.close()
        if trial.infrastructure_error and self._work.retries.take(trial, plan.folder):
            self._submit(plan)
            return
        self._work.plans.finished(trial)
        yield trial

    def _end_overruns(self) -> Iterator[Trial]:
        now = time.monotonic()
        for ref, task in list(self._running.items()):
            if task.deadline > now:
                continue
            self._ray.cancel(ref, force=True)
            self._ray.wait([ref], timeout=_CANCELLED)  # its worker gone: no later writes
            del self._running[ref]
            trial = self._overrun(task, now)
            write_trial(task.plan.folder, trial)
            yield from self._settled(task.plan, trial)

    def _overrun(self, task: _Task, now: float) -> Trial:
        """A task still running past its deadline, cancelled: a callable's trial is recorded
        as a local run records it (timed out, the agent's error); any other is the harness's."""
        if self._work.settings.agent.kind == "callable":
            return overrun_trial(task.plan, task.plan.scenario.timeout, task.started)
        reason = (
            f"its Ray task was still running {now - task.started:.1f}s after it was submitted, "
            f"past the scenario's timeout and a grace of {self._grace:g}s, and was cancelled"
        )
        return failed_trial(task.plan, reason, task.started, kind="harness")
