"""A suite as pytest collects it: its sounding.toml a file node, each case file a collector,
each scenario (in each cell, when the suite has cells) a test item.

An item's outcome comes from a run of sounding's own runner. The items of one suite that
this process runs go as one run, made when the first of them sets up, so the run folder
holds exactly the scenarios pytest selected (`-k`, `--lf`, ...). When pytest may stop
between items (`-x`, `--maxfail`, `--stepwise`) or hands them out one at a time (an xdist
worker), each item is a run of its own, made when pytest reaches it.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_sounding._options import Options
from pytest_sounding._outcome import FlakyScenarioWarning, Outcome, PytestOutcome
from pytest_sounding._runs import (
    NOTE_PROPERTY,
    RUN_PROPERTY,
    Line,
    RunFailed,
    Wanted,
    run_scenarios,
    scenarios_of,
)

if TYPE_CHECKING:
    from sounding.spec import Case


class SuiteFile(pytest.File):
    """A suite's sounding.toml: a collector per case file; and the runs of its items."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._done: dict[Line, Outcome | RunFailed] = {}
        self._notes: dict[Line, list[str]] = {}

    def collect(self) -> Iterator[CaseNode]:
        cases, cells = self._load()
        for case in cases:
            yield CaseNode.from_parent(self, name=case.name, case=case, cells=cells)

    def _load(self) -> tuple[list[Case], list[str]]:
        """The suite's case files and cell names, or a collection error saying what is
        wrong and where (a bad sounding.toml, a case file's line)."""
        from sounding.runner import SuiteConfigError, load_suite
        from sounding.spec import SpecError, load_cases

        try:
            suite = load_suite(self.path.parent)
            files = suite.case_files()
            if not files:
                raise self.CollectError(
                    f"{suite.cases_dir}: no case files (*.yaml, *.yml, *.toml): add one "
                    "(docs/cases.md), or run `sounding init` for a suite that runs green"
                )
            return load_cases(files, suite_dir=suite.root), [cell.name for cell in suite.cells]
        except (SuiteConfigError, SpecError) as exc:
            raise self.CollectError(str(exc)) from None

    def outcome(self, item: ScenarioItem) -> Outcome | RunFailed:
        """The item's outcome; its run (and that of the items that go with it) made now
        when it has not been made yet."""
        if item.line not in self._done:
            batch = [other.line for other in self._batch(item)]
            try:
                finished = run_scenarios(self.path.parent, self._wanted(batch))
                notes = finished.notes
                self._done.update(finished.outcomes)
            except RunFailed as failed:
                self._done.update(dict.fromkeys(batch, failed))
                notes = []
            for line in batch:
                self._done.setdefault(line, _no_verdict(self.path.parent, line))
                self._notes[line] = notes
        return self._done[item.line]

    def notes(self, item: ScenarioItem) -> list[str]:
        return self._notes.get(item.line, [])

    def _batch(self, item: ScenarioItem) -> list[ScenarioItem]:
        """The items that run with `item`: itself alone when pytest may stop before the
        next one or hands items out one by one; else every item of this suite still to run."""
        config = self.config
        one_by_one = (
            hasattr(config, "workerinput")  # an xdist worker: items come one batch at a time
            or config.getoption("maxfail", 0) > 0
            or config.getoption("stepwise", False)
        )
        if one_by_one:
            return [item]
        mine = (i for i in self.session.items if isinstance(i, ScenarioItem) and i.suite is self)
        return [i for i in mine if i.line not in self._done]

    def _wanted(self, lines: list[Line]) -> Wanted:
        return Wanted(scenarios_of(lines), Options.of(self.config))


def _no_verdict(suite_dir: Path, line: Line) -> RunFailed:
    """A scenario the run left out of its summary (never expected: say how to look)."""
    _, case, scenario = line
    return RunFailed(
        f"{case}/{scenario}: the run gave no verdict for it; run it alone to see why: "
        f"sounding run {suite_dir} {case} --scenario {scenario}"
    )


class CaseNode(pytest.Collector):
    """A case file of the suite: an item per scenario and cell."""

    def __init__(self, *, case: Case, cells: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case, self.cells = case, cells

    def collect(self) -> Iterator[ScenarioItem]:
        for scenario in self.case.scenarios:
            for cell in self.cells:
                name = scenario.id if len(self.cells) == 1 else f"{scenario.id}[{cell}]"
                yield ScenarioItem.from_parent(
                    self, name=name, line=(cell, self.case.name, scenario.id), at=scenario.line
                )


class ScenarioItem(pytest.Item):
    """One scenario in one cell: passed, passed with a warning, failed or error as its
    line of the run says (docs/pytest.md)."""

    def __init__(self, *, line: Line, at: int | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.line, self._at = line, at
        self.add_marker(pytest.mark.sounding)

    @property
    def suite(self) -> SuiteFile:
        node = self.getparent(SuiteFile)
        assert node is not None
        return node

    def setup(self) -> None:
        """Runs the scenario (with those that go with it). A run that could not start, and
        an ERROR line, fail here: pytest reports them as errors, not failures."""
        outcome = self.suite.outcome(self)
        self.user_properties.extend((NOTE_PROPERTY, note) for note in self.suite.notes(self))
        if isinstance(outcome, RunFailed):
            pytest.fail(str(outcome), pytrace=False)
        self.user_properties.append((RUN_PROPERTY, str(outcome.run_dir)))
        if outcome.test_outcome is PytestOutcome.ERROR:
            pytest.fail(outcome.describe(), pytrace=False)

    def runtest(self) -> None:
        outcome = self.suite.outcome(self)
        assert isinstance(outcome, Outcome)  # setup has failed otherwise
        if outcome.test_outcome is PytestOutcome.FAILED:
            pytest.fail(outcome.describe(), pytrace=False)
        if outcome.test_outcome is PytestOutcome.WARNED:
            warnings.warn(FlakyScenarioWarning(outcome.describe()), stacklevel=1)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        parent = self.getparent(CaseNode)
        path = parent.case.path if parent is not None else self.path
        cell, case, scenario = self.line
        label = f"{case}/{scenario}" + (f" [{cell}]" if self.name.endswith("]") else "")
        return path, (self._at - 1 if self._at else None), label
