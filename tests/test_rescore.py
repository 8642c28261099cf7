"""`sounding score RESULTS_DIR`: today's rules on a stored run, with no agent run again."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _suite(root: Path, calls: Path) -> None:
    (root / "cases").mkdir(parents=True)
    (root / "agent.py").write_text(
        "import os, sys\n"
        f"open({str(calls)!r}, 'a').write('x')\n"
        "prompt = sys.stdin.read()\n"
        "print('the answer is 42' if os.environ['SOUNDING_TRIAL'] != '3' else 'no idea')\n"
    )
    (root / "sounding.toml").write_text(
        f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n'
    )
    (root / "cases/q.yaml").write_text(
        "scenarios:\n  - id: answer\n    user: what is it?\n    trials: 3\n"
        "    expect: [{final_answer_contains: answer}]\n"
    )


def test_rescoring_applies_todays_case_file_and_names_what_flipped(
    tmp_path: Path, sounding: Any
) -> None:
    root, calls = tmp_path / "suite", tmp_path / "calls"
    _suite(root, calls)
    first = sounding("run", str(root))
    assert "FLAKY q/answer  2/3" in first.stdout
    (run,) = (root / "results").iterdir()
    assert len(calls.read_text()) == 3

    same = sounding("score", str(run))
    assert "re-scored 3 trials: 0 verdicts changed" in same.stdout

    case = root / "cases/q.yaml"
    case.write_text(case.read_text().replace("contains: answer", "contains: '42'"))
    changed = sounding("score", str(run), "--json")
    document: dict[str, Any] = json.loads(changed.stdout)
    assert document["schema"] == "sounding.rescore/1"
    assert document["trials"] == 3 and document["changed"] == []

    case.write_text(case.read_text().replace("contains: '42'", "contains: idea"))
    flipped = sounding("score", str(run))
    lines = flipped.stdout.splitlines()
    assert "q/answer#1: fail → pass" not in lines
    assert any(
        line.startswith(
            "q/answer#1: pass → fail  (expect[0] final_answer_contains: passed → failed"
        )
        for line in lines
    ), flipped.stdout
    assert any(line.startswith("q/answer#3: fail → pass") for line in lines)
    assert "re-scored 3 trials: 3 verdicts changed" in flipped.stdout
    assert flipped.returncode == 1
    assert len(calls.read_text()) == 3, "re-scoring ran the agent"


def test_a_folder_that_is_not_a_run_is_a_usage_error(tmp_path: Path, sounding: Any) -> None:
    done = sounding("score", str(tmp_path))
    assert done.returncode == 2 and "not the folder of a run" in done.stderr


def test_a_run_an_older_sounding_wrote_is_rescored_alike(
    tmp_path: Path, sounding: Any, as_older_run: Any
) -> None:
    root, calls = tmp_path / "suite", tmp_path / "calls"
    _suite(root, calls)
    sounding("run", str(root))
    (run,) = (root / "results").iterdir()
    as_older_run(run)  # nested folders, each run record in a record.json of its own
    case = root / "cases/q.yaml"
    case.write_text(case.read_text().replace("contains: answer", "contains: idea"))
    flipped = sounding("score", str(run))
    assert "re-scored 3 trials: 3 verdicts changed" in flipped.stdout, flipped.stdout
    assert len(calls.read_text()) == 3  # the agent never ran again
