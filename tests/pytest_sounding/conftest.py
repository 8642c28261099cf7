"""A small suite in pytester's folder whose scenarios end in each verdict, and helpers to run
pytest on it with the plugin and read the run folders it wrote."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml  # noqa: F401 - see below

import pytest_sounding  # noqa: F401 - loaded once, before the runs (below)
import sounding
import sounding.runner

# pytest runs here in this process (pytester), and forgets after each run the modules it
# imported: the modules sounding loads on first use are loaded once, before, so that the
# runs share them. libyaml's parser, which cannot be loaded twice, is one of them.

SOURCE = Path(sounding.__file__).resolve().parents[1]  # the src/ this sounding comes from
PLUGIN = ("-p", "pytest_sounding")
QUIET = (
    "-p",
    "no:benchmark",  # not ours: it warns beside xdist
    "-p",
    "no:hypothesispytest",  # nor needed: xdist's workers start quicker without them
    "-p",
    "no:anyio",
    "-W",
    "default::pytest_sounding.FlakyScenarioWarning",
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
)

# The agent answers by scenario and trial: `flaky` and `flaky-any` fail their even trials,
# `fails` always fails, `crashes` dies by a signal (an error, never a verdict).
AGENT = """
import os, signal
scenario, trial = os.environ["SOUNDING_SCENARIO"], int(os.environ["SOUNDING_TRIAL"])
if scenario == "crashes":
    os.kill(os.getpid(), signal.SIGKILL)
good = scenario == "passes" or (scenario.startswith("flaky") and trial % 2 == 1)
good = good and os.environ.get("MODE") != "strict"  # a cell that fails every scenario
print("done" if good else "nope")
"""

CASE = """
defaults: {trials: 2, timeout: 20s}
expect:
  - final_answer_contains: done
scenarios:
  - {id: passes, user: hi}
  - {id: flaky, user: hi}
  - {id: flaky-any, user: hi, scoring: {replica_aggregation: any}}
  - {id: fails, user: hi}
  - {id: crashes, user: hi}
"""


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


@dataclass
class PluginSuite:
    """A suite at `root` (in pytester's folder), and pytest run on it with the plugin."""

    root: Path
    pytester: pytest.Pytester

    def write(self, relative: str, text: str) -> Path:
        return write(self.root, relative, text)

    def pytest(self, *args: str, plugin: bool = True) -> pytest.RunResult:
        """pytest with the plugin (`-p`, unless `plugin` is false), in this process (its
        xdist workers in their own). The warning of a FLAKY scenario that holds its gate
        stays a warning, though these tests run with warnings as errors; the plugin,
        imported here already, is not rewritten."""
        return self.pytester.runpytest(*(PLUGIN if plugin else ()), *QUIET, *args)

    def runs(self) -> list[Path]:
        """The suite's run folders, oldest first."""
        results = self.root / "results"
        found = results.iterdir() if results.is_dir() else iter(())
        return sorted(p for p in found if (p / "run.json").is_file())


def write_suite(root: Path, case: str = CASE) -> Path:
    """A suite in `root` whose command agent runs with this interpreter (no site: quick)."""
    write(root, "agent.py", AGENT)
    command = json.dumps([sys.executable, "-S", "{suite}/agent.py"])
    write(root, "sounding.toml", f"[agent]\ncommand = {command}\n")
    write(root, "cases/main.yaml", case)
    return root


@pytest.fixture
def sounding_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest's subprocesses (xdist workers, a pytest run apart) import this sounding."""
    paths = [str(SOURCE), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))


@pytest.fixture
def suite(pytester: pytest.Pytester, sounding_path: None) -> PluginSuite:
    """The suite at `evals/` of pytester's folder."""
    return PluginSuite(write_suite(pytester.path / "evals"), pytester)


@pytest.fixture
def ran() -> Callable[[Path], list[tuple[str, int]]]:
    """The (scenario, trial) of each trial a run folder planned."""

    def trials(run_dir: Path) -> list[tuple[str, int]]:
        plan = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        return sorted((t["scenario"], t["trial"]) for t in plan["trials"])

    return trials
