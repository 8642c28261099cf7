"""Independent work shared over forked processes, for CPU-bound loops over many items."""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def can_fork(items: int, at_least: int) -> bool:
    """Whether `items` pieces of work are worth forked processes here: `at_least` of them,
    two cores or more, and `os.fork`."""
    return items >= at_least and cores() > 1 and hasattr(os, "fork")


def forked_parts(work: Callable[[Sequence[T]], R], items: Sequence[T]) -> list[R]:
    """`work` on consecutive parts of `items`, one part per core: the first here, each
    other in a forked child; the results in the order of the parts.

    A child inherits everything loaded so far at no cost, and sends back only its result.
    A part whose child did not give its result (it failed, or was killed) is done again
    here, in this process, where whatever went wrong is raised as it would have been.
    """
    if not items:
        return []
    count = min(cores(), len(items))
    size = -(-len(items) // count)
    parts = [items[start : start + size] for start in range(0, len(items), size)]
    running: dict[int, int] = {}  # pid → the reading end of its pipe
    try:
        for part in parts[1:]:
            pid, read = _start(work, part)
            running[pid] = read
        results = [work(parts[0])]
        for part, pid in zip(parts[1:], list(running), strict=True):
            with os.fdopen(running[pid], "rb") as pipe:
                running[pid] = -1  # closed with `pipe`
                data = pipe.read()
            _, status = os.waitpid(pid, 0)
            del running[pid]
            ok = os.waitstatus_to_exitcode(status) == 0 and data
            results.append(pickle.loads(data) if ok else work(part))
        return results
    finally:
        for pid, read in running.items():  # stopped early (Ctrl-C): no child outlives it
            _end(pid, read)


def _start(work: Callable[[Sequence[T]], R], part: Sequence[T]) -> tuple[int, int]:
    read, write = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write)
        return pid, read
    os.close(read)  # the child, from here on: never returns to the caller
    code = 0
    try:
        data = pickle.dumps(work(part), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
    except KeyboardInterrupt:  # Ctrl-C reaches the whole group: the parent says so
        code = 130
    except BaseException:  # told on stderr; the parent does the part again itself
        traceback.print_exc()
        code = 70
    sys.stderr.flush()
    os._exit(code)


def _end(pid: int, read: int) -> None:
    if read >= 0:
        os.close(read)
    with contextlib.suppress(ProcessLookupError, ChildProcessError):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
