"""The plugin's command-line options and ini keys, and which suites a session asked for.

A suite is collected only where the user asked for it: its folder (or its sounding.toml)
is among the paths pytest was given, or the ini key `sounding_suites` lists it. Any other
sounding.toml pytest walks past (the fixture suites of a project's own tests, say) is left
alone, so installing sounding changes no other test session.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

CONFIG_NAME = "sounding.toml"  # as `sounding.runner` names it; kept here to import nothing
LLM_MODES = ("live", "record", "replay")


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("sounding", "sounding: agent scenarios as tests (docs/pytest.md)")
    group.addoption(
        "--sounding-trials",
        type=_trials,
        metavar="N",
        help="trials per scenario, for every scenario of every suite (as `sounding run --trials`)",
    )
    group.addoption(
        "--sounding-llm",
        choices=LLM_MODES,
        help="the agents' model calls: live, record (keep cassettes) or replay (answer from "
        "them); as `sounding run --llm`, default the suite's [capture] mode",
    )
    parser.addini(
        "sounding_suites",
        type="paths",
        default=[],
        help="suite folders (holding sounding.toml) to collect when pytest walks past them",
    )


def _trials(value: str) -> int:
    """`--sounding-trials`: a whole number of at least 1, or a usage error saying so."""
    import argparse

    try:
        trials = int(value)
    except ValueError:
        trials = 0
    if trials < 1:
        raise argparse.ArgumentTypeError(f"takes a number of trials, 1 or more, not {value!r}")
    return trials


@dataclass(frozen=True)
class Options:
    """What a session's runs take from its command line."""

    trials: int | None = None
    llm: str | None = None

    @staticmethod
    def of(config: pytest.Config) -> Options:
        return Options(config.getoption("sounding_trials"), config.getoption("sounding_llm"))


def asked_suites(config: pytest.Config) -> frozenset[Path]:
    """The suite folders this session collects: those named among the paths pytest was
    given (the command line, or `testpaths` when it names none), as a folder or as their
    sounding.toml, and those `sounding_suites` lists."""
    base = config.invocation_params.dir
    named = [base / arg.split("::", 1)[0] for arg in config.args]
    listed = [Path(p) for p in config.getini("sounding_suites")]
    for path in listed:
        if _suite_folder(path) is None:
            raise pytest.UsageError(
                f"{config.inipath}: sounding_suites lists {path}, which holds no {CONFIG_NAME}: "
                "name the folder of a suite (`sounding init DIR` makes one), or remove it"
            )
    folders = {_suite_folder(path) for path in [*named, *listed]}
    return frozenset(folder for folder in folders if folder is not None)


def _suite_folder(path: Path) -> Path | None:
    """The suite folder `path` names: itself, or the folder of the sounding.toml it is."""
    folder = path.parent if path.name == CONFIG_NAME else path
    return folder.resolve() if (folder / CONFIG_NAME).is_file() else None
