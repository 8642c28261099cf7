"""Cells against the reference within one run: planted gaps hold, noise does not."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

AGENT = """
import os, sys, time
sys.stdin.read()
trial = int(os.environ["SOUNDING_TRIAL"])
mode = os.environ.get("MODE", "base")
if mode == "crash" and trial == 1:
    time.sleep(30)  # over the 2 s timeout: an errored, invalid trial
good = trial % 5 == 0 if mode == "base" else trial % 5 != 0
print("right" if good else "wrong")
"""


def _run(sounding: Any, tmp_path: Path, cells: str, trials: int = 20) -> tuple[Path, str]:
    suite = tmp_path / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "agent.py").write_text(AGENT)
    (suite / "sounding.toml").write_text(
        f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n{cells}'
    )
    (suite / "cases/q.yaml").write_text(
        f"scenarios:\n  - id: q\n    user: go\n    trials: {trials}\n    timeout: 2s\n"
        "    expect: [{final_answer_contains: right}]\n"
    )
    done = sounding("run", str(suite))
    (run,) = (suite / "results").iterdir()
    return run, done.stdout


def _report(sounding: Any, run: Path, tmp_path: Path) -> dict[str, object]:
    out = tmp_path / "report.json"
    assert sounding("report", str(run), "--json", str(out)).returncode == 0
    return json.loads(out.read_text())["cells"]  # type: ignore[no-any-return]


PLANTED = """
[cells.axes]
mode = ["base", "tuned"]
[cells.values.mode.tuned]
env = { MODE = "tuned" }
"""


def test_a_planted_improvement_is_established_and_printed(tmp_path: Path, sounding: Any) -> None:
    run, stdout = _run(sounding, tmp_path, PLANTED)
    assert "cells against the reference 'base':" in stdout
    assert "IMPROVEMENT tuned: passed" in stdout
    cells = _report(sounding, run, tmp_path)
    assert cells["schema"] == "sounding.cells/1" and cells["reference"] == "base"
    passed = next(g for g in cells["gaps"] if g["metric"] == "passed")  # type: ignore[index]
    assert passed["state"] == "improvement" and passed["paired"] is True
    assert passed["difference"]["seed"] == 20260729 and passed["difference"]["draws"] == 10_000
    duration = next(g for g in cells["gaps"] if g["metric"] == "duration_ms")  # type: ignore[index]
    assert duration["state"] == "no verdict"


def test_identical_cells_are_inconclusive(tmp_path: Path, sounding: Any) -> None:
    same = PLANTED.replace('MODE = "tuned"', 'MODE = "base", OTHER = "1"')
    run, stdout = _run(sounding, tmp_path, same)
    assert "no difference survives resampling" in stdout
    passed = next(g for g in _report(sounding, run, tmp_path)["gaps"] if g["metric"] == "passed")  # type: ignore[index]
    assert passed["state"] == "inconclusive"


def test_a_cell_with_an_invalid_trial_publishes_nothing(tmp_path: Path, sounding: Any) -> None:
    crash = PLANTED.replace('MODE = "tuned"', 'MODE = "crash"')
    run, stdout = _run(sounding, tmp_path, crash, trials=6)
    assert "nothing is published as a difference" in stdout
    passed = next(g for g in _report(sounding, run, tmp_path)["gaps"] if g["metric"] == "passed")  # type: ignore[index]
    assert passed["state"] == "withheld" and "invalid trial" in passed["withheld"]
