"""Cells: a grid of axes plus named variants, each trial run in every cell, interleaved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CELLS = """
[cells.axes]
model = ["small", "large"]
tone = ["plain", "strict"]

[cells.values.model.large]
model = "large-model"
env = { ANSWER = "large" }

[cells.values.tone.strict]
prompt = "Be strict."
args = ["--strict"]

[cells.variants.odd]
env = { ANSWER = "odd" }
"""


def test_every_cell_runs_every_trial_interleaved(suite: Any, tmp_path: Path) -> None:
    log = tmp_path / "order.log"
    suite.agent(
        f"""
        import os, sys
        prompt = sys.stdin.read()
        line = "|".join([os.environ.get("ANSWER", "base"), os.environ.get("SOUNDING_MODEL", "-"),
                         " ".join(sys.argv[1:]), prompt.replace(chr(10), " ")])
        open({str(log)!r}, "a").write(os.environ["SOUNDING_TRIAL"] + ":" + line + chr(10))
        print(line)
        """,
        extra_config=CELLS,
    )
    suite.write("cases/c.yaml", "scenarios:\n  - {id: s, user: hi, trials: 2}\n")
    done = suite.run("--parallel", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    for cell in ("small / plain", "small / strict", "large / plain", "large / strict", "odd"):
        assert f"PASS  [{cell}] c/s  2/2" in done.stdout
    lines = log.read_text().splitlines()
    assert [line.split(":")[0] for line in lines] == ["1"] * 5 + ["2"] * 5
    assert "1:large|large-model||hi" in lines
    assert "1:base|-|--strict|Be strict.  hi" in lines
    run = json.loads((suite.runs()[0] / "run.json").read_text())
    assert run["reference_cell"] == "small / plain"
    assert run["cells"]["large / plain"] == {"model": "large-model", "env": {"ANSWER": "large"}}
    measures = json.loads((suite.runs()[0] / "measures.json").read_text())
    assert measures["schema"] == "sounding.measures/1" and len(measures["trials"]) == 10


def test_a_typo_in_a_delta_fails_at_load(suite: Any) -> None:
    suite.agent(
        "print('x')",
        extra_config=CELLS.replace("[cells.values.tone.strict]", "[cells.values.tone.strcit]"),
    )
    suite.write("cases/c.yaml", "scenarios:\n  - {id: s, user: hi}\n")
    done = suite.run()
    assert done.returncode == 2
    assert "cells.values.tone.strict: missing" in done.stderr
    assert not (suite.root / "results").exists()


def test_an_unknown_delta_key_is_refused(suite: Any) -> None:
    suite.agent("print('x')", extra_config=CELLS.replace('prompt = "Be strict."', 'promt = "x"'))
    suite.write("cases/c.yaml", "scenarios:\n  - {id: s, user: hi}\n")
    done = suite.run()
    assert done.returncode == 2
    assert "cells.values.tone.strict.promt: unknown key" in done.stderr
