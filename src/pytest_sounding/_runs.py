"""Scenarios of a suite run through sounding's own runner, as `sounding run` runs them: one
run folder in the suite's results folder (or the one given), which every report reads."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sounding._options import Options
from pytest_sounding._outcome import Outcome

if TYPE_CHECKING:
    from sounding.runner import RunResult, Suite

Line = tuple[str, str, str]  # cell, case, scenario: one line of a run's summary
RUN_PROPERTY = "sounding_run"  # the user property naming a test's run folder
NOTE_PROPERTY = "sounding_note"  # ... and each note its run gave


class RunFailed(Exception):
    """The run could not give its scenarios a verdict: the suite, a case file or the agent
    is wrong (the message says where and how to fix it), or the device filled up."""


@dataclass(frozen=True)
class Wanted:
    """What to run: scenarios by (case, scenario id), how, and with which agent."""

    scenarios: list[tuple[str, str]]
    options: Options = field(default_factory=Options)
    agent: Callable[..., Any] | None = None  # a Python function in place of `[agent]`
    results: Path | None = None  # the results folder, in place of `[output] dir`


@dataclass(frozen=True)
class Finished:
    """A run's lines as outcomes, its folder, and the notes it gave."""

    outcomes: dict[Line, Outcome]
    run_dir: Path
    notes: list[str]


def run_scenarios(suite_dir: Path, wanted: Wanted) -> Finished:
    """Run the wanted scenarios of the suite in `suite_dir` in one run (every cell of each)."""
    from sounding.runner import RunSetupError, SuiteConfigError, WorkspaceError
    from sounding.spec import SpecError
    from sounding.store import ResultsError

    notes: list[str] = []
    try:
        result = _run(suite_dir, wanted, notes)
    except (SuiteConfigError, SpecError, RunSetupError, WorkspaceError, ResultsError) as exc:
        raise RunFailed(str(exc)) from None
    lines = result.summary.scenarios
    outcomes = {(s.cell, s.case, s.scenario): Outcome(s, result.layout.root) for s in lines}
    return Finished(outcomes, result.layout.root, notes)


def _run(suite_dir: Path, wanted: Wanted, notes: list[str]) -> RunResult:
    from sounding.runner import (
        RunHooks,
        RunInterrupted,
        RunOptions,
        RunStopped,
        callable_agent,
        load_suite,
        prepare_run,
        run_suite,
    )

    suite = _writing_to(load_suite(suite_dir), wanted.results)
    cases = sorted({case for case, _ in wanted.scenarios})
    ids = sorted({scenario for _, scenario in wanted.scenarios})
    options = RunOptions(cases, ids, trials=wanted.options.trials, llm=wanted.options.llm)
    agent = callable_agent(suite, wanted.agent) if wanted.agent is not None else None
    settings = prepare_run(suite, options, agent)
    try:
        return run_suite(suite, options, settings, RunHooks(on_note=notes.append))
    except RunInterrupted as stop:
        pytest.exit(f"{stop.why}: {_kept(suite_dir, stop)}", returncode=pytest.ExitCode.INTERRUPTED)
    except RunStopped as stop:
        raise RunFailed(f"{stop.why}: {_kept(suite_dir, stop)}") from None


def _kept(suite_dir: Path, stop: Any) -> str:
    where = stop.root.name if stop.root else "RUN_ID"
    return (
        f"{stop.finished} trials finished and kept in {stop.root}; finish the run with: "
        f"sounding run {suite_dir} --resume {where}"
    )


def _writing_to(suite: Suite, results: Path | None) -> Suite:
    """The suite with its runs written to `results` instead of its `[output] dir`."""
    if results is None:
        return suite
    output = suite.config.output.model_copy(update={"dir": str(results.resolve())})
    config = suite.config.model_copy(update={"output": output})
    return dataclasses.replace(suite, config=config)


def scenarios_of(lines: Iterable[Line]) -> list[tuple[str, str]]:
    """The (case, scenario) pairs of summary lines, each once, in order."""
    return list(dict.fromkeys((case, scenario) for _, case, scenario in lines))
