"""The run's worker threads: each runs one trial at a time, up to `--parallel` at once.

A callable agent is called in its worker's own thread, with no hand-off per trial. A Python
call cannot be stopped, so a callable that overruns its trial's timeout is dealt with here:
once its deadline (plus a grace) has passed, the main thread records the trial as an error
and abandons the thread, and a fresh worker takes its place. Should the call ever return,
its trial notices it was abandoned and stores nothing.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sounding.runner._agent import RUNNING
from sounding.runner._trial import (
    TrialAbandoned,
    TrialInterrupted,
    TrialPlan,
    TrialSettings,
    overrun_trial,
    run_trial,
)
from sounding.spec import Case
from sounding.store import Trial, write_trial

GRACE = 1.0  # seconds past a callable's timeout before its thread is abandoned
_TICK = 0.02  # seconds the main thread waits between looks at the finished trials


class Watch:
    """One running trial as the main thread sees it: its deadline, and who ends it."""

    def __init__(self, plan: TrialPlan) -> None:
        self.plan = plan
        self.started = time.monotonic()
        self.deadline: float | None = None  # set while a callable agent runs
        self.timeout = 0.0
        self._lock = threading.Lock()
        self._state = "running"  # "running" | "claimed" (by its thread) | "abandoned"

    def agent_started(self, timeout: float) -> None:
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout + GRACE

    def agent_returned(self) -> bool:
        """The trial's own thread goes on to store it; False when it was abandoned."""
        with self._lock:
            if self._state == "abandoned":
                return False
            self._state, self.deadline = "claimed", None
            return True

    def abandon(self) -> bool:
        with self._lock:
            if self._state != "running":
                return False
            self._state = "abandoned"
            return True


@dataclass
class Retries:
    """`--retry-errors`: how many trials of the run may run again after an error that was
    not the agent's (`Trial.infrastructure_error`), and those that did. The folder of the
    try that erred is kept, moved by `set_aside`."""

    left: int = 0
    set_aside: Callable[[Trial, Path], None] | None = None
    done: list[Trial] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, trial: Trial, folder: Path) -> bool:
        """Whether `trial` runs again; its folder is then set aside."""
        with self._lock:
            if self.left <= 0:
                return False
            self.left -= 1
            self.done.append(trial)
        if self.set_aside is not None:
            self.set_aside(trial, folder)
        return True


class Plans(Protocol):
    """Where the pool's workers take their trials: a plan fixed up front (`Listed`), or one
    that grows and shrinks with the outcomes (an adaptive run's `Schedule`)."""

    def take(self) -> TrialPlan | None:
        """The next trial to start, waiting for outcomes if need be; None when no trial is
        left to start (or the plans were closed)."""
        ...

    def finished(self, trial: Trial) -> None:
        """A trial taken from here ended (after its last try): its outcome, to plan by."""
        ...

    def close(self) -> None:
        """No trial starts any more: `take` answers None, at once, in every thread."""
        ...

    @property
    def settled(self) -> bool:
        """Every trial these plans would give has finished."""
        ...


class Listed:
    """A plan fixed up front: its trials made one at a time, in order, as workers take them."""

    def __init__(self, plans: Iterator[TrialPlan], count: int) -> None:
        self._plans = plans
        self._left = count  # trials not yet finished
        self._lock = threading.Lock()

    def take(self) -> TrialPlan | None:
        with self._lock:  # one thread at a time advances the plans
            return next(self._plans, None)

    def finished(self, trial: Trial) -> None:
        with self._lock:
            self._left -= 1

    def close(self) -> None:
        with self._lock:
            self._plans = iter(())

    @property
    def settled(self) -> bool:
        return self._left <= 0


class TrialPool:
    """Runs the trials of `work` on `parallel` daemon threads (never more threads than
    `work.count`, the most trials it may give); `outcomes()` yields them as they finish."""

    def __init__(self, work: Work, parallel: int) -> None:
        self._work = work
        self.spent = 0.0  # US dollars: past `work.max_cost`, no trial starts
        self._plans = work.plans  # asked for one trial at a time, as workers are free
        self._spending = threading.Lock()
        self._parallel = max(1, min(parallel, work.count))
        self._workers = 0  # started and not yet done (an abandoned one no longer counts)
        self._finished: queue.SimpleQueue[Trial | BaseException | None] = queue.SimpleQueue()
        self._running: set[Watch] = set()
        self._threads: list[threading.Thread] = []

    def outcomes(self) -> Iterator[Trial]:
        """Every outcome, in the calling thread, as trials finish; overruns are ended here.

        The calling thread waits on the queue of outcomes (a C-level wait that a Ctrl-C
        interrupts cleanly), looking at the running callables' deadlines between waits. A
        worker says `None` when it found no trial left to start; the pool ends when every
        worker has. A fault of the harness in a worker stops the pool with that fault.
        """
        for _ in range(self._parallel):
            self._start_worker()
        while self._workers:
            if self._work.interrupted():  # Ctrl-C, as the caller sees it
                raise KeyboardInterrupt
            try:
                item = self._finished.get(timeout=_TICK)
            except queue.Empty:
                pass
            else:
                if isinstance(item, BaseException):
                    raise item
                if item is None:
                    self._workers -= 1
                else:
                    yield item
            yield from self._end_overruns()

    def finished_meanwhile(self) -> list[Trial]:
        """The trials that finished (and are on disk) but were not yet taken by `outcomes`:
        once the run stops, they are counted with the others."""
        found: list[Trial] = []
        while True:
            try:
                item = self._finished.get_nowait()
            except queue.Empty:
                return found
            if isinstance(item, Trial):
                found.append(item)

    def stop(self, grace: float) -> None:
        """No trial starts any more; wait up to `grace` seconds for the running ones."""
        self._plans.close()
        until = time.monotonic() + grace
        for thread in self._threads:
            thread.join(max(0.0, until - time.monotonic()))

    def _start_worker(self) -> None:
        thread = threading.Thread(target=self._worker, name="sounding-trial", daemon=True)
        self._threads.append(thread)
        self._workers += 1
        thread.start()

    def _worker(self) -> None:
        try:
            while not RUNNING.stopping.is_set() and (plan := self._plans.take()) is not None:
                trial = self._run(plan)
                self._plans.finished(trial)
                self._finished.put(trial)
        except TrialAbandoned:
            return  # given up on: a fresh worker took this one's place
        except TrialInterrupted:
            pass  # the run is stopping
        except BaseException as exc:  # a fault of the harness itself: the run stops
            self._finished.put(exc)
            return
        self._finished.put(None)

    def _run(self, plan: TrialPlan) -> Trial:
        """One trial, run again while its error is not the agent's and retries are left."""
        while True:
            watch = Watch(plan)
            self._running.add(watch)
            try:
                trial = run_trial(plan, self._work.settings, watch)
            finally:
                self._running.discard(watch)
            self._spend(trial.spent_usd)
            if not trial.infrastructure_error or not self._work.retries.take(trial, plan.folder):
                return trial

    @property
    def over_budget(self) -> bool:
        limit = self._work.max_cost
        return limit is not None and self.spent > limit

    def _spend(self, cost: float) -> None:
        """Count a finished trial's cost; past the budget, no trial starts any more."""
        with self._spending:
            self.spent += cost
            if self.over_budget:
                self._plans.close()

    def _end_overruns(self) -> Iterator[Trial]:
        now = time.monotonic()
        for watch in list(self._running):
            if watch.deadline is None or watch.deadline > now or not watch.abandon():
                continue
            self._running.discard(watch)
            outcome = overrun_trial(watch.plan, watch.timeout, watch.started)
            write_trial(watch.plan.folder, outcome)
            self._plans.finished(outcome)
            self._workers -= 1
            self._start_worker()  # the abandoned thread's place
            yield outcome


@dataclass(frozen=True)
class Work:
    """What a run hands its executor: the trials to take, at most `count` of them, and how
    to run them. `parallel` is the user's choice (`--parallel`, `[defaults] parallel`), or
    None for the executor's own default; `cases` are the run's, for what an executor checks
    before its first trial (the resources their scenarios ask for)."""

    plans: Plans
    count: int
    settings: TrialSettings
    parallel: int | None
    interrupted: Callable[[], bool]
    max_cost: float | None = None
    retries: Retries = field(default_factory=Retries)
    cases: list[Case] = field(default_factory=list)
    run_root: Path | None = None  # the run's folder: what a Ray job's working_dir leaves out
