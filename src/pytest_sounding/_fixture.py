"""`sounding_run`: a test runs one scenario, against a Python function or the suite's own
agent, and asserts on its outcome. The run folder is written as `sounding run` writes one
(under the test's `tmp_path` unless a folder is named), so every report reads it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from pytest_sounding._options import Options
from pytest_sounding._outcome import Outcome
from pytest_sounding._runs import (
    NOTE_PROPERTY,
    RUN_PROPERTY,
    RunFailed,
    Wanted,
    run_scenarios,
)

if TYPE_CHECKING:
    from sounding.runner import Suite
    from sounding.spec import Case


class ScenarioRunner:
    """What `sounding_run` gives a test: call it to run one scenario, get its `Outcome`."""

    def __init__(self, results: Path, options: Options, test: pytest.Item) -> None:
        self._results, self._options, self._test = results, options, test

    def __call__(
        self,
        path: str | Path,
        scenario: str | None = None,
        *,
        agent: Callable[..., Any] | None = None,
        trials: int | None = None,
        llm: str | None = None,
        results: str | Path | None = None,
        cell: str | None = None,
    ) -> Outcome:
        """Run `scenario` (its id, or `case/id`) of the case file or suite folder `path`.

        `agent` is a function(prompt, context) run in place of the suite's `[agent]`;
        `trials` and `llm` are `sounding run`'s `--trials` and `--llm` (default: the
        session's `--sounding-trials` and `--sounding-llm`, else the case's own); `results`
        the folder the run folder goes in (default: the test's tmp_path / "results").
        With cells every cell runs; the outcome is `cell`'s (default: the reference cell).
        """
        suite_dir, case = _case_of(Path(path), scenario)
        scenario_id = _scenario_id(case, scenario)
        options = Options(trials or self._options.trials, llm or self._options.llm)
        folder = Path(results) if results is not None else self._results
        wanted = Wanted([(case.name, scenario_id)], options, agent, folder)
        try:
            finished = run_scenarios(suite_dir, wanted)
        except RunFailed as failed:
            _refuse(str(failed))
        self._test.user_properties.append((RUN_PROPERTY, str(finished.run_dir)))
        self._test.user_properties.extend((NOTE_PROPERTY, note) for note in finished.notes)
        return _of_cell(finished.outcomes, finished.run_dir, cell, (case.name, scenario_id))


def _case_of(path: Path, scenario: str | None) -> tuple[Path, Case]:
    """The suite folder and the case file `path` and `scenario` name, loaded."""
    from sounding.runner import SuiteConfigError, load_suite, suite_of
    from sounding.spec import SpecError, load_cases

    if not path.exists():
        _refuse(f"{path}: no such case file or suite folder")
    try:
        suite = load_suite(path if path.is_dir() else suite_of(path))
        cases = load_cases(_case_files(suite, path, scenario), suite_dir=suite.root)
    except (SuiteConfigError, SpecError) as exc:
        _refuse(str(exc))
    wanted = scenario.rsplit("/", 1)[-1] if scenario else None
    holding = [c for c in cases if wanted is None or any(s.id == wanted for s in c.scenarios)]
    if len(holding) != 1:
        _refuse(_which_case(path, wanted, cases, holding))
    return suite.root, holding[0]


def _case_files(suite: Suite, path: Path, scenario: str | None) -> list[Path]:
    """The case file `path` is, in its suite's cases/; or the suite's case files (only the
    one `scenario` names, as `case/id`)."""
    if path.is_file():
        if path.resolve() not in suite.case_files():
            _refuse(f"{path}: a case file runs from its suite's cases folder ({suite.cases_dir})")
        return [path.resolve()]
    if scenario is not None and "/" in scenario:
        return suite.case_files([scenario.split("/", 1)[0]])
    return suite.case_files()


def _which_case(path: Path, wanted: str | None, cases: list[Case], holding: list[Case]) -> str:
    known = ", ".join(f"{c.name}/{s.id}" for c in cases for s in c.scenarios)
    if wanted is None:
        return f"{path}: name the scenario to run (scenarios: {known})"
    if not holding:
        return f"{path}: no scenario '{wanted}' (scenarios: {known})"
    return f"{path}: several case files have a scenario '{wanted}': name it case/{wanted}"


def _scenario_id(case: Case, scenario: str | None) -> str:
    if scenario is not None:
        return scenario.rsplit("/", 1)[-1]
    if len(case.scenarios) == 1:
        return case.scenarios[0].id
    known = ", ".join(s.id for s in case.scenarios)
    _refuse(f"{case.path} has {len(case.scenarios)} scenarios: name one ({known})")


def _of_cell(
    outcomes: dict[tuple[str, str, str], Outcome],
    run_dir: Path,
    cell: str | None,
    scenario: tuple[str, str],
) -> Outcome:
    from sounding.store import read_plan

    cell = cell or read_plan(run_dir).reference_cell or "default"
    found = outcomes.get((cell, *scenario))
    if found is None:
        cells = ", ".join(sorted({c for c, *rest in outcomes if tuple(rest) == scenario}))
        _refuse(f"{run_dir}: no cell '{cell}' (cells: {cells})")
    return found


def _refuse(message: str) -> NoReturn:
    """Fail the test with what is wrong and how to fix it, without a traceback."""
    pytest.fail(message, pytrace=False)


@pytest.fixture
def sounding_run(request: pytest.FixtureRequest, tmp_path: Path) -> ScenarioRunner:
    """Run one scenario of a suite and get its outcome (docs/pytest.md):
    `outcome = sounding_run("evals/cases/refunds.yaml", "refund-twice", agent=answer)`."""
    return ScenarioRunner(tmp_path / "results", Options.of(request.config), request.node)
