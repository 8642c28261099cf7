"""examples/validators runs as its README says, so it cannot rot."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from sounding.record import RunRecord
from sounding.validators import ContextDocument, Reference

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/validators"
SCOPE = EXAMPLE / "scope.py"


def fixture_context(tmp_path: Path, *, readme: bool, test_command: str | None) -> Path:
    """A trial of the example's counter, fixed, with the bytecode the tests leave."""
    workspace = tmp_path / "workspace"
    shutil.copytree(EXAMPLE / "fixtures/counter", workspace)
    counter = workspace / "counter.py"
    counter.write_text(counter.read_text().replace("-= 1", "+= 1"))
    (workspace / "__pycache__").mkdir()
    (workspace / "__pycache__/counter.cpython-311.pyc").write_bytes(b"\0bytecode")
    touched = ["__pycache__/counter.cpython-311.pyc", "counter.py"]
    if readme:
        (workspace / "README.md").write_text("tidied\n")
        touched.append("README.md")
    (tmp_path / "record.json").write_text(RunRecord(final_answer="Fixed.").to_json())
    document = ContextDocument(
        workspace=str(workspace),
        reference=Reference(checkout=str(EXAMPLE / "fixtures/counter")),
        record=str(tmp_path / "record.json"),
        declared=["delivered", "in_scope", "tests"],
        touched=sorted(touched),
        byproducts=["__pycache__/counter.cpython-311.pyc"],
        test_command=test_command,
    )
    path = tmp_path / "validation/context.json"
    path.parent.mkdir()
    path.write_text(document.model_dump_json(by_alias=True, exclude_none=True))
    return path


def validate(context: Path) -> dict[str, object]:
    """Run the example validator as the harness does: executable, one argument."""
    done = subprocess.run(
        [str(SCOPE), str(context)],
        cwd=context.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_the_example_validator_is_executable() -> None:
    assert os.access(SCOPE, os.X_OK)
    assert SCOPE.read_text().startswith("#!/usr/bin/env python3\n")


def test_by_products_are_not_the_agents_work(tmp_path: Path) -> None:
    command = f"{sys.executable} -m unittest -q test_counter"
    answer = validate(fixture_context(tmp_path, readme=False, test_command=command))
    assert answer == {
        "metrics": {"delivered": True, "in_scope": True, "tests": True, "work": ["counter.py"]},
        "reasons": {},
        "unjudged": {},
    }


def test_out_of_scope_work_is_named_and_no_test_command_is_unjudged(tmp_path: Path) -> None:
    answer = validate(fixture_context(tmp_path, readme=True, test_command=None))
    assert answer["metrics"] == {
        "delivered": True,
        "in_scope": False,
        "work": ["README.md", "counter.py"],
    }
    assert answer["reasons"] == {"in_scope": "also touched README.md"}
    assert answer["unjudged"] == {
        "tests": "the scenario declares no test_command: nothing decides `tests`"
    }


def test_the_example_suite_runs_and_its_scope_gate_holds(tmp_path: Path, sounding: Any) -> None:
    suite = tmp_path / "validators"
    shutil.copytree(EXAMPLE, suite, ignore=shutil.ignore_patterns("results", ".sounding"))
    done = sounding("run", str(suite))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FLAKY counter/fix-the-counter  2/3" in done.stdout
    assert "metric 'in_scope' is false: also touched README.md" in done.stdout
    (run,) = (suite / "results").iterdir()
    trial = run / "trials/default/counter/fix-the-counter#1"
    assert json.loads((trial / "trial.json").read_text())["metrics"]["tests"] is True
    # a stored validation replays by hand: the same command on the same archived file
    replayed = validate(trial / "validation/context.json")
    assert replayed["metrics"] == json.loads((trial / "trial.json").read_text())["metrics"]
