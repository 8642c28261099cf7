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
from collections.abc import Callable, Iterator
from typing import Any

from sounding._fork import cores
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

    def __init__(
        self,
        plans: list[TrialPlan],
        settings: TrialSettings,
        parallel: int,
        more: Callable[[], list[TrialPlan]] | None = None,
    ) -> None:
        self._todo = collections.deque(plans)
        self._taken = len(plans)  # plans taken in, counted by the workers (under `_taking`)
        self._given = 0  # outcomes given out, counted by the calling thread
        self._more = more  # where further plans come from once `plans` are all started
        self._taking = threading.Lock()
        self._settings = settings
        self._parallel = max(1, parallel if more else min(parallel, len(plans)))
        self._finished: queue.SimpleQueue[TrialOutcome | BaseException] = queue.SimpleQueue()
        self._running: set[Watch] = set()
        self._threads: list[threading.Thread] = []
        self._drained = threading.Event()  # a worker found no trial left to start

    def outcomes(self) -> Iterator[TrialOutcome]:
        """Every outcome, in the calling thread, as trials finish; overruns are ended here.

        The calling thread looks at the queue of outcomes each tick rather than blocking on
        it: a worker that finishes a trial never has to wake it, which with thousands of
        short trials costs more than the trials' own work.
        """
        for _ in range(self._parallel):
            self._start_worker()
        while self._given < self._taken or self._more is not None:
            try:
                item = self._finished.get_nowait()
            except queue.Empty:
                if self._drained.wait(_TICK):
                    self._drained.clear()
                yield from self._end_overruns()
                continue
            if isinstance(item, BaseException):
                raise item
            self._given += 1
            yield item

    def stop(self, grace: float) -> None:
        """No trial starts any more; wait up to `grace` seconds for the running ones."""
        with self._taking:
            self._todo.clear()
            self._more = None
        until = time.monotonic() + grace
        for thread in self._threads:
            thread.join(max(0.0, until - time.monotonic()))

    def _start_worker(self) -> None:
        thread = threading.Thread(target=self._work, name="sounding-trial", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        try:
            self._run_trials()
        finally:
            self._drained.set()  # the last outcomes are taken at once, not at the next tick

    def _run_trials(self) -> None:
        while not RUNNING.stopping.is_set():
            try:
                plan = self._next()
            except BaseException as exc:  # no more plans could be taken: the run stops
                self._finished.put(exc)
                return
            if plan is None:
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

    def _next(self) -> TrialPlan | None:
        """The next trial to start, taking more plans in when there are none left here."""
        try:
            return self._todo.popleft()
        except IndexError:
            pass
        with self._taking:
            if not self._todo and self._more is not None:
                taken = self._more()
                self._taken += len(taken)
                self._todo.extend(taken)
                if not taken:
                    self._more = None  # the source is dry: the pool ends with what it has
        try:
            return self._todo.popleft()
        except IndexError:
            return None

    def _end_overruns(self) -> Iterator[TrialOutcome]:
        now = time.monotonic()
        for watch in list(self._running):
            if watch.deadline is None or watch.deadline > now or not watch.abandon():
                continue
            self._running.discard(watch)
            outcome = overrun_outcome(watch.plan, watch.timeout, watch.started)
            store_outcome(watch.plan.folder, outcome)
            self._given += 1
            self._start_worker()  # the abandoned thread's place
            yield outcome


class ForkedPool:
    """A callable agent's trials shared over forked processes, each with its own TrialPool.

    A Python callable holds the interpreter's lock while it runs, so threads alone cannot
    use more than one core; forked children inherit the loaded cases and the agent at no
    cost. The trials are cut into small batches whose numbers wait in a pipe: each child
    takes the next batch when it has run out, so a child slowed by slow trials or a busy
    core takes fewer, and all finish close together. Each child sends its outcomes back
    through a pipe of its own. A child that dies leaves its unfinished trials as errors that
    `--resume` runs again.
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
        batches = _Batches(rest, self._processes)
        for _ in range(self._processes):
            self._spawn(batches)
        batches.close()
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

    def _spawn(self, batches: _Batches) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid:
            os.close(write)
            self._children[read] = pid
            return
        os.close(read)  # the child, from here on: never returns to the caller
        for fd in self._children:
            os.close(fd)  # the other children's pipes belong to the parent
        os._exit(_child(batches.take, self._settings, self._threads, write))

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


class _Batches:
    """The trials of a forked run in batches, taken by the children one batch at a time.

    The batch numbers are written to a pipe before any child is forked and the parent closes
    its writing end: a read of one number takes that batch for good (a read this small from
    a pipe is never split), and an empty read means every batch has been taken.
    """

    _SIZE = 50  # trials per batch, or fewer for a small run: 8 batches per child at least
    _MOST = 2048  # batches at most: 4 KiB of numbers, which any pipe holds unread
    _NUMBER = 2  # bytes per batch number

    def __init__(self, plans: list[TrialPlan], processes: int) -> None:
        finer = min(self._SIZE, len(plans) // (8 * processes))
        size = max(1, finer, -(-len(plans) // self._MOST))
        self._plans, self._size = plans, size
        self._read, write = os.pipe()
        count = -(-len(plans) // size)
        with os.fdopen(write, "wb") as pipe:
            pipe.write(b"".join(n.to_bytes(self._NUMBER, "big") for n in range(count)))

    def take(self) -> list[TrialPlan]:
        """The next batch not taken by any child; empty once all are."""
        number = os.read(self._read, self._NUMBER)
        if not number:
            return []
        start = int.from_bytes(number, "big") * self._size
        return self._plans[start : start + self._size]

    def close(self) -> None:
        os.close(self._read)


_BATCH_SECONDS = 0.05  # a child sends what finished at least this often
_HEADER = 4


def _child(
    take: Callable[[], list[TrialPlan]], settings: TrialSettings, threads: int, fd: int
) -> int:
    """A child's whole life: run batches of trials, send outcomes back, return its exit
    status."""
    pool = TrialPool([], settings, threads, more=take)
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
