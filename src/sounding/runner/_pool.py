"""The run's worker threads: each runs one trial at a time, up to `--parallel` at once.

A callable agent is called in its worker's own thread, with no hand-off per trial. A Python
call cannot be stopped, so a callable that overruns its trial's timeout is dealt with here:
once its deadline (plus a grace) has passed, the main thread records the trial as an error
and abandons the thread, and a fresh worker takes its place. Should the call ever return,
its trial notices it was abandoned and stores nothing.
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from collections.abc import Iterator

from sounding.runner._agent import RUNNING
from sounding.runner._trial import (
    TrialAbandoned,
    TrialInterrupted,
    TrialPlan,
    TrialSettings,
    overrun_trial,
    run_trial,
)
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


class TrialPool:
    """Runs `plans` on `parallel` daemon threads; `outcomes()` yields them as they finish."""

    def __init__(self, plans: list[TrialPlan], settings: TrialSettings, parallel: int) -> None:
        self._todo = collections.deque(plans)
        self._left = len(plans)  # outcomes not yet given out
        self._settings = settings
        self._parallel = max(1, min(parallel, len(plans)))
        self._finished: queue.SimpleQueue[Trial | BaseException] = queue.SimpleQueue()
        self._running: set[Watch] = set()
        self._threads: list[threading.Thread] = []

    def outcomes(self) -> Iterator[Trial]:
        """Every outcome, in the calling thread, as trials finish; overruns are ended here.

        The calling thread waits on the queue of outcomes (a C-level wait that a Ctrl-C
        interrupts cleanly), looking at the running callables' deadlines between waits.
        """
        for _ in range(self._parallel):
            self._start_worker()
        while self._left:
            try:
                item = self._finished.get(timeout=_TICK)
            except queue.Empty:
                item = None
            if isinstance(item, BaseException):
                raise item
            if item is not None:
                self._left -= 1
                yield item
            yield from self._end_overruns()

    def stop(self, grace: float) -> None:
        """No trial starts any more; wait up to `grace` seconds for the running ones."""
        self._todo.clear()
        until = time.monotonic() + grace
        for thread in self._threads:
            thread.join(max(0.0, until - time.monotonic()))

    def _start_worker(self) -> None:
        thread = threading.Thread(target=self._work, name="sounding-trial", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        while not RUNNING.stopping.is_set():
            try:
                plan = self._todo.popleft()
            except IndexError:
                return
            watch = Watch(plan)
            self._running.add(watch)
            try:
                outcome = run_trial(plan, self._settings, watch)
            except (TrialInterrupted, TrialAbandoned):
                return  # the run is stopping, or this thread was given up on
            except BaseException as exc:  # a fault of the harness itself: the run stops
                self._finished.put(exc)
                return
            finally:
                self._running.discard(watch)
            self._finished.put(outcome)

    def _end_overruns(self) -> Iterator[Trial]:
        now = time.monotonic()
        for watch in list(self._running):
            if watch.deadline is None or watch.deadline > now or not watch.abandon():
                continue
            self._running.discard(watch)
            outcome = overrun_trial(watch.plan, watch.timeout, watch.started)
            write_trial(watch.plan.folder, outcome)
            self._left -= 1
            self._start_worker()  # the abandoned thread's place
            yield outcome
