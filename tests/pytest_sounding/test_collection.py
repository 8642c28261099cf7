"""Which sounding.toml files pytest collects with the plugin loaded (only those asked for),
what an item is called, the entry point that loads the plugin, and bad options."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]  # the project: pyproject.toml, examples/, tests/
ITEMS = [f"evals/sounding.toml::main::{s}" for s in ("passes", "flaky", "flaky-any", "fails")]


def collected(done: pytest.RunResult) -> list[str]:
    """The node ids `--collect-only -q` printed."""
    return [line for line in done.outlines if "::" in line]


def test_a_suite_is_collected_only_where_the_session_asks_for_it(suite: Any) -> None:
    suite.write("fixtures/test_probe.py", "def test_probe():\n    pass\n")  # a workspace's test
    other = suite.pytester.path / "tests"
    (other / "test_plain.py").parent.mkdir()
    (other / "test_plain.py").write_text("def test_plain():\n    pass\n")
    suite.write("../tests/fixture-suite/sounding.toml", '[agent]\ncommand = "true"\n')
    suite.write("../tests/fixture-suite/cases/c.yaml", "scenarios:\n  - {id: x, user: hi}\n")
    walked = collected(suite.pytest("--collect-only", "-q"))
    assert walked == ["evals/fixtures/test_probe.py::test_probe", "tests/test_plain.py::test_plain"]
    named = collected(suite.pytest("--collect-only", "-q", "evals"))
    assert named == [*ITEMS, "evals/sounding.toml::main::crashes"]  # and nothing else inside
    assert collected(suite.pytest("--collect-only", "-q", "evals/sounding.toml")) == named
    suite.pytester.makeini("[pytest]\nsounding_suites = evals\n")
    listed = collected(suite.pytest("--collect-only", "-q"))
    assert listed == [*named, "tests/test_plain.py::test_plain"]


def test_each_cell_of_a_scenario_is_an_item_of_its_own(suite: Any) -> None:
    suite.write(
        "sounding.toml",
        (suite.root / "sounding.toml").read_text()
        + '[cells.axes]\nmode = ["plain", "strict"]\n'
        + '[cells.values.mode.strict]\nenv = { MODE = "strict" }\n',
    )
    names = collected(suite.pytest("--collect-only", "-q", "evals", "-k", "passes"))
    assert names == [f"{ITEMS[0]}[plain]", f"{ITEMS[0]}[strict]"]
    done = suite.pytest("evals", "-k", "passes and strict")
    done.assert_outcomes(failed=1, deselected=9)
    done.stdout.fnmatch_lines(["FAIL ?strict? main/passes: 0 of 2 judged trials passed*"])


def test_the_projects_own_suites_collect_alike_with_the_plugin_loaded(
    pytester: pytest.Pytester,
) -> None:
    """The examples hold the project's sounding.toml files (its tests write theirs while
    they run): with the plugin loaded, pytest collects there what it collects without it."""
    examples = ("--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", str(ROOT / "examples"))
    without = pytester.runpytest(*examples)
    quiet = ("-W", "ignore::pytest.PytestAssertRewriteWarning")  # imported here already
    loaded = pytester.runpytest("-p", "pytest_sounding", *quiet, *examples)
    assert (loaded.ret, _timeless(loaded)) == (without.ret, _timeless(without))
    assert "examples/" in loaded.stdout.str() and "sounding.toml" not in loaded.stdout.str()


def _timeless(done: pytest.RunResult) -> list[str]:
    """What `--collect-only -q` printed, but the line with the time it took."""
    return [line for line in done.outlines if " in " not in line]


def test_the_entry_point_loads_the_plugin_once(
    suite: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyproject declares the plugin under `pytest11`; an installed distribution declaring
    it so (made here by hand) loads it in every session, and `-p` beside it is no error."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = pyproject["project"]["entry-points"]["pytest11"]
    assert declared == {"pytest_sounding": "pytest_sounding"}
    installed = tmp_path / "site" / "sounding_probe-0.dist-info"
    installed.mkdir(parents=True)
    (installed / "METADATA").write_text("Metadata-Version: 2.1\nName: sounding-probe\nVersion: 0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in declared.items())
    (installed / "entry_points.txt").write_text(f"[pytest11]\n{lines}")
    monkeypatch.syspath_prepend(installed.parent)  # what pytest reads entry points from
    for plugin in (False, True):  # by the entry point alone, and by `-p` beside it
        done = suite.pytest("--collect-only", "-q", "evals", plugin=plugin)
        assert collected(done) == [*ITEMS, "evals/sounding.toml::main::crashes"]
    off = suite.pytest("--co", "-q", "evals", "-p", "no:pytest_sounding", plugin=False)
    assert collected(off) == []


@pytest.mark.parametrize(
    ("args", "ini", "said"),
    [
        (
            ["--sounding-trials", "0"],
            "",
            "*--sounding-trials: takes a number of trials, 1 or more*",
        ),
        (["--sounding-llm", "fake"], "", "*--sounding-llm: invalid choice: 'fake'*"),
        ([], "sounding_suites = nowhere", "*sounding_suites lists */nowhere, which holds no*"),
    ],
)
def test_a_bad_option_is_a_usage_error_saying_how_to_fix_it(
    suite: Any, args: list[str], ini: str, said: str
) -> None:
    if ini:
        suite.pytester.makeini(f"[pytest]\n{ini}\n")
    done = suite.pytest("evals", *args)
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines([said])
