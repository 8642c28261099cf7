"""The run's worker threads: each runs one trial at a time, up to `--parallel` at once.

A callable agent is called in its worker's own thread, with no hand-off per trial. A Python
call cannot be stopped, so a callable that overruns its trial's timeout is dealt with here:
once its deadline (plus a grace) has passed, the main thread records the trial as an error
and abandons the thread, and a fresh worker takes its place. Should the call ever return,
its trial notices it was abandoned and stores nothing.
"""

from __future__ import annotations

import collections
import contextlib
import os
import pickle
import queue
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

from sounding.runner._agent import RUNNING
from sounding.runner._trial import (
    TrialAbandoned,
    TrialInterrupted,
    TrialOutcome,
    TrialPlan,
    TrialSettings,
    load_outcome,
    overrun_outcome,
    run_trial,
    store_outcome,
)
from sounding.store import TrialKey


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


GRACE = 1.0  # seconds past a callable's timeout before its thread is abandoned
_TICK = 0.02  # seconds the main thread sleeps when no outcome is waiting


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
        self._left = len(plans)
        self._settings = settings
        self._parallel = max(1, min(parallel, len(plans)))
        self._finished: queue.SimpleQueue[TrialOutcome | BaseException] = queue.SimpleQueue()
        self._running: set[Watch] = set()
        self._threads: list[threading.Thread] = []

    def outcomes(self) -> Iterator[TrialOutcome]:
        """Every outcome, in the calling thread, as trials finish; overruns are ended here.

        The calling thread looks at the queue of outcomes each tick rather than blocking on
        it: a worker that finishes a trial never has to wake it, which with thousands of
        short trials costs more than the trials' own work.
        """
        for _ in range(self._parallel):
            self._start_worker()
        while self._left:
            try:
                item = self._finished.get_nowait()
            except queue.Empty:
                time.sleep(_TICK)
                yield from self._end_overruns()
                continue
            if isinstance(item, BaseException):
                raise item
            self._left -= 1
            yield item

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

    def _end_overruns(self) -> Iterator[TrialOutcome]:
        now = time.monotonic()
        for watch in list(self._running):
            if watch.deadline is None or watch.deadline > now or not watch.abandon():
                continue
            self._running.discard(watch)
            outcome = overrun_outcome(watch.plan, watch.timeout, watch.started)
            store_outcome(watch.plan.folder, outcome)
            self._left -= 1
            self._start_worker()  # the abandoned thread's place
            yield outcome


class ForkedPool:
    """A callable agent's trials shared over forked processes, each with its own TrialPool.

    A Python callable holds the interpreter's lock while it runs, so threads alone cannot
    use more than one core; forked children inherit the loaded cases and the agent at no
    cost. Each child sends its outcomes back in batches through a pipe. A child that dies
    leaves its unfinished trials as errors that `--resume` runs again.
    """

    def __init__(self, plans: list[TrialPlan], settings: TrialSettings, parallel: int) -> None:
        self._processes = max(1, min(parallel, cores(), len(plans)))
        self._threads = -(-parallel // self._processes)  # the rest of --parallel, as threads
        self._plans = plans
        self._settings = settings
        self._children: dict[int, int] = {}  # reading end → pid

    def outcomes(self) -> Iterator[TrialOutcome]:
        import selectors

        seen: set[TrialKey] = set()
        # the first trial runs here: what every trial needs (modules imported on first use,
        # models built on first use) is then ready once, in every child, before the fork
        first, rest = self._plans[:1], self._plans[1:]
        for outcome in TrialPool(first, self._settings, 1).outcomes():
            seen.add(outcome.key)
            yield outcome
        for part in range(self._processes):
            self._spawn(rest[part :: self._processes])
        selector = selectors.DefaultSelector()
        for fd in self._children:
            selector.register(fd, selectors.EVENT_READ)
        buffers = {fd: bytearray() for fd in self._children}
        statuses: list[int] = []
        try:
            while self._children:
                for key, _ in selector.select():
                    fd = int(key.fd)
                    data = os.read(fd, 1 << 16)
                    if data:
                        buffers[fd] += data
                        for outcome in _frames(buffers[fd]):
                            seen.add(outcome.key)
                            yield outcome
                        continue
                    selector.unregister(fd)
                    os.close(fd)
                    statuses.append(_ended(self._children.pop(fd)))
        except KeyboardInterrupt:
            raise  # the run stops the workers gently (`stop`)
        except BaseException:  # the run itself failed or gave up: no worker outlives it
            self.stop(0.0)
            raise
        yield from self._left_over(seen, statuses)

    def stop(self, grace: float) -> None:
        """Ctrl-C: each child stops its trials as a run would; what outlives `grace` is killed."""
        for pid in self._children.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGINT)
        until = time.monotonic() + grace
        for pid in self._children.values():
            while time.monotonic() < until and os.waitpid(pid, os.WNOHANG) == (0, 0):
                time.sleep(_TICK)
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        self._children.clear()

    def _spawn(self, share: list[TrialPlan]) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid:
            os.close(write)
            self._children[read] = pid
            return
        os.close(read)  # the child, from here on: never returns to the caller
        for fd in self._children:
            os.close(fd)  # the other children's pipes belong to the parent
        os._exit(_child(share, self._settings, self._threads, write))

    def _left_over(self, seen: set[TrialKey], statuses: list[int]) -> Iterator[TrialOutcome]:
        """Trials no child reported: stored after all, or unfinished because a child died."""
        died = ", ".join(str(s) for s in statuses if s != 0) or "none"
        for plan in self._plans:
            if plan.key in seen:
                continue
            if (plan.folder / "trial.json").is_file():
                yield load_outcome(plan.folder, plan.key)
                continue
            reason = (
                f"its worker process ended (exit status {died}) before the trial finished; "
                "`sounding run --resume` runs it again"
            )
            yield TrialOutcome(plan.key, "error", None, reason, 0.0, 0)


_BATCH_SECONDS = 0.05  # a child sends what finished at least this often
_HEADER = 4


def _child(share: list[TrialPlan], settings: TrialSettings, threads: int, fd: int) -> int:
    """A child's whole life: run its share, send outcomes back, return its exit status."""
    pool = TrialPool(share, settings, threads)
    batch: list[TrialOutcome] = []
    sent = time.monotonic()
    try:
        with os.fdopen(fd, "wb") as pipe:
            try:
                for outcome in pool.outcomes():
                    batch.append(outcome)
                    if time.monotonic() - sent >= _BATCH_SECONDS:
                        _send(pipe, batch)
                        batch, sent = [], time.monotonic()
            except KeyboardInterrupt:
                RUNNING.stop_all()
                pool.stop(GRACE)
                _send(pipe, batch)
                return 130
            _send(pipe, batch)
    except BaseException:  # a fault of the harness: told on stderr, the parent sees the status
        import traceback

        traceback.print_exc()
        return 70
    return 0


def _send(pipe: Any, batch: list[TrialOutcome]) -> None:
    if batch:
        data = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
        pipe.write(len(data).to_bytes(_HEADER, "big") + data)
        pipe.flush()


def _frames(buffer: bytearray) -> Iterator[TrialOutcome]:
    """The whole batches at the head of `buffer`, taken out of it."""
    while len(buffer) >= _HEADER:
        size = int.from_bytes(buffer[:_HEADER], "big")
        if len(buffer) < _HEADER + size:
            return
        batch: list[TrialOutcome] = pickle.loads(buffer[_HEADER : _HEADER + size])
        del buffer[: _HEADER + size]
        yield from batch


def _ended(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
