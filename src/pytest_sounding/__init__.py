"""The pytest plugin (docs/pytest.md), registered through the `pytest11` entry point.

`python -m pytest path/to/suite` collects a test per scenario of a sounding suite (per
scenario and cell, with cells) and runs them through sounding's runner: PASS passes, FAIL
and a FLAKY scenario whose gate does not hold fail, ERROR is an error, and a FLAKY scenario
that holds its gate passes with a `FlakyScenarioWarning`. The `sounding_run` fixture runs
one scenario from a test, against a Python function or the suite's agent, and gives its
`Outcome`.
"""

from pytest_sounding._fixture import ScenarioRunner, sounding_run
from pytest_sounding._hooks import pytest_addoption, pytest_configure
from pytest_sounding._outcome import FlakyScenarioWarning, Outcome, PytestOutcome

__all__ = [
    "FlakyScenarioWarning",
    "Outcome",
    "PytestOutcome",
    "ScenarioRunner",
    "pytest_addoption",
    "pytest_configure",
    "sounding_run",
]
