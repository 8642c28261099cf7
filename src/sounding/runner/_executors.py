"""Where a run's trials run: an executor takes the pending trial plans and gives back each
finished trial, in the calling thread, as it finishes (docs/scale.md).

Planning, scoring and storing do not care where a trial ran: each executor runs
`run_trial`, which writes the trial's folder, so a run started on one executor can be
resumed on another. `local` runs the trials on threads of this process (`TrialPool`);
`ray` runs each as a Ray task.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from sounding.runner import _ray
from sounding.runner._config import ExecutorConfig, Suite, SuiteConfigError
from sounding.runner._plan import RunOptions
from sounding.runner._pool import TrialPool, Work
from sounding.runner._trial import TrialSettings
from sounding.store import Trial


class Executor(Protocol):
    """Runs the trials of a run; what the run asks of it while it runs and when it stops."""

    spent: float  # US dollars the finished trials cost, for `--max-cost`

    def outcomes(self) -> Iterator[Trial]:
        """Each finished trial (on disk by then), as it finishes; KeyboardInterrupt when
        the run's `interrupted()` says so."""
        ...

    def stop(self, grace: float) -> None:
        """No trial starts any more; the running ones end within `grace` seconds or are
        left unfinished, for `--resume`."""
        ...

    def finished_meanwhile(self) -> list[Trial]:
        """After `stop`: the trials that finished (and are on disk) but were not yet given."""
        ...

    @property
    def over_budget(self) -> bool:
        """The trials spent more than `--max-cost`: no trial starts any more."""
        ...


def _local(config: ExecutorConfig, work: Work, held: contextlib.ExitStack) -> Executor:
    """Threads of this process, as many as the cores unless told."""
    return TrialPool(work, work.parallel or os.cpu_count() or 1)


def _no_check(config: ExecutorConfig, options: RunOptions, settings: TrialSettings) -> None:
    """The local executor runs whatever the run can."""


@dataclass(frozen=True)
class _Kind:
    """An executor as it registers: how its run is checked before any trial, and started."""

    check: Callable[[ExecutorConfig, RunOptions, TrialSettings], None]
    start: Callable[[ExecutorConfig, Work, contextlib.ExitStack], Executor]


EXECUTORS: dict[str, _Kind] = {
    "local": _Kind(_no_check, _local),
    "ray": _Kind(_ray.check, _ray.start),
}


def executor_config(suite: Suite, options: RunOptions) -> ExecutorConfig:
    """`[executor]` of sounding.toml, with `--executor` and `--ray-address` over it."""
    table = suite.config.executor
    kind = options.executor or table.kind
    if kind not in EXECUTORS:
        raise SuiteConfigError(f"no executor '{kind}' (executors: {', '.join(EXECUTORS)})")
    if options.ray_address and kind != "ray":
        raise SuiteConfigError("--ray-address goes with --executor ray (or [executor] kind)")
    address = options.ray_address or table.address
    return table.model_copy(update={"kind": kind, "address": address})


def check_executor(config: ExecutorConfig, options: RunOptions, settings: TrialSettings) -> None:
    """Before the run's folder is made: refuse what the chosen executor cannot run."""
    EXECUTORS[config.kind].check(config, options, settings)


def start_executor(config: ExecutorConfig, work: Work, held: contextlib.ExitStack) -> Executor:
    """The chosen executor, ready to run `work`; what it started ends with `held`."""
    return EXECUTORS[config.kind].start(config, work, held)
