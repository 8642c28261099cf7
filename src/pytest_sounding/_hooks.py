"""The plugin's hooks: its options, and per session which sounding.toml files are
collected and a closing section naming the run folders the session wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_sounding._nodes import SuiteFile
from pytest_sounding._options import CONFIG_NAME, add_options, asked_suites
from pytest_sounding._runs import NOTE_PROPERTY, RUN_PROPERTY

SESSION_PLUGIN = "sounding-session"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sounding: a scenario of a sounding suite (docs/pytest.md)")
    config.pluginmanager.register(SuiteSession(asked_suites(config)), SESSION_PLUGIN)


class SuiteSession:
    """The hooks of one session: the suites it collects, and what their runs told (run
    folders and notes, each once, in the order they came)."""

    def __init__(self, suites: frozenset[Path]) -> None:
        self.suites = suites
        self.runs: dict[str, None] = {}
        self.notes: dict[str, None] = {}

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> SuiteFile | None:
        """A sounding.toml in a suite folder the session asked for (docs/pytest.md)."""
        if file_path.name != CONFIG_NAME or file_path.parent.resolve() not in self.suites:
            return None
        suite: SuiteFile = SuiteFile.from_parent(parent, path=file_path)
        return suite

    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        """Inside a suite it collects, pytest looks at its sounding.toml alone: its fixtures,
        checks and results (workspaces an agent wrote, test files among them) are no tests."""
        if not self.suites:
            return None
        path = collection_path.resolve()
        if path.name == CONFIG_NAME and path.parent in self.suites:
            return None
        return True if any(folder in self.suites for folder in path.parents) else None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == RUN_PROPERTY:
                self.runs[str(value)] = None
            elif name == NOTE_PROPERTY:
                self.notes[str(value)] = None

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not (self.runs or self.notes):
            return
        terminalreporter.section("sounding")
        for note in self.notes:
            terminalreporter.write_line(f"! {note}")
        for run in self.runs:
            terminalreporter.write_line(f"run folder: {run}  (sounding report {run})")
