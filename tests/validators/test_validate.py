"""Validators in a real run: between collect and measure, gating only through `metric`."""

from __future__ import annotations

import json
from typing import Any

from sounding.checks import Evidence
from sounding.record import RunRecord
from sounding.store import Trial
from sounding.validators import Validation, run_validators

Bench = Any  # the `bench` fixture of conftest.py

# The agent edits notes.md, and on trial 2 also README.md (out of scope).
AGENT = """
import os, sys
from pathlib import Path
sys.stdin.read()
workspace = Path(os.environ["SOUNDING_WORKSPACE"])
(workspace / "notes.md").write_text("done")
if os.environ["SOUNDING_TRIAL"] == "2":
    (workspace / "README.md").write_text("rewritten")
print("finished")
"""
SCOPE = """
import json, sys
context = json.load(open(sys.argv[1]))
outside = sorted(set(context["touched"]) - {"notes.md"})
reason = "also touched " + ", ".join(outside) if outside else ""
json.dump({"metrics": {"in_scope": not outside, "touched": context["touched"]},
           "reasons": {"in_scope": reason}}, sys.stdout)
"""
CASE = """
defaults: {trials: 2}
workspace: {fixture: fixtures/repo}
validators:
  - {mode: script, command: scope.py, metrics: [in_scope]}
  - {mode: form, metrics: [reads_well]}
scenarios:
  - id: notes
    user: write the notes
    invariants:
      scoped: {gate: true, check: {type: metric, metric: in_scope}}
"""


def test_a_validator_metric_gates_a_scenario_through_an_invariant(bench: Bench) -> None:
    bench.agent(AGENT)
    bench.write("fixtures/repo/README.md", "hello")
    bench.script("scope.py", SCOPE)
    bench.write("cases/docs.yaml", CASE)
    done = bench.run()
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FLAKY docs/notes  1/2" in done.stdout
    assert "metric 'in_scope' is false: also touched README.md" in done.stdout
    run = bench.only_run()
    first, second = (
        json.loads((run / f"trials/default/docs/notes#{n}/trial.json").read_text()) for n in (1, 2)
    )
    assert (first["verdict"], second["verdict"]) == ("pass", "fail")
    assert first["metrics"] == {"in_scope": True, "touched": ["notes.md"]}  # extras stored
    assert second["metric_reasons"] == {"in_scope": "also touched README.md"}
    assert "reads_well" not in first["metrics"]  # a form metric: nothing measured it yet
    measures = json.loads((run / "measures.json").read_text())
    in_scope = {t["trial"]: t["metrics"]["in_scope"] for t in measures["trials"]}
    assert in_scope == {1: True, 2: False}  # in the order the trials finished
    assert (run / "trials/default/docs/notes#1/validation/context.json").is_file()


def test_an_invalid_validation_makes_the_trial_an_error_not_a_fail(bench: Bench) -> None:
    bench.agent(AGENT)
    bench.write("fixtures/repo/README.md", "hello")
    bench.script("scope.py", "import sys\nprint('no context here', file=sys.stderr)\nsys.exit(1)\n")
    bench.write("cases/docs.yaml", CASE.replace("trials: 2", "trials: 1"))
    done = bench.run()
    assert done.returncode == 3, done.stdout + done.stderr  # an error prevented a verdict
    assert "ERROR docs/notes" in done.stdout
    trial = json.loads(next(bench.only_run().glob("trials/*/*/*#1/trial.json")).read_text())
    assert (trial["state"], trial["verdict"], trial["score"]) == ("error", "error", None)
    assert trial["reason"] == (
        "invalid: script validator 'scope' exited with 1: no context here "
        "(its stderr is in validation/scope.stderr)"
    )


def test_a_case_without_validators_runs_none(bench: Bench) -> None:
    case = bench.case("scenarios:\n  - {id: s, user: go}\n")
    trial = bench.trial(case)
    assert run_validators(trial) == Validation()
    assert not (trial.folder / "validation").exists()


def test_the_metrics_reach_the_checks_through_the_evidence() -> None:
    found = Validation(
        metrics={"in_scope": True, "tests": None},
        reasons={"tests": "no suite"},
        unjudged={"tests": "no suite", "reads_well": "not filled yet"},
    )
    evidence = found.applied(Evidence(record=RunRecord(), extra={"trace_path": "t.jsonl"}))
    assert evidence.extra == {
        "trace_path": "t.jsonl",
        "metrics": {"in_scope": True, "tests": None},
        "reasons": {"tests": "no suite"},
        "unjudged": {"tests": "no suite", "reads_well": "not filled yet"},
    }


def test_a_stored_trial_gives_its_metrics_back_for_re_scoring() -> None:
    stored = Trial(
        cell="default",
        case="c",
        scenario="s",
        trial=1,
        metrics={"in_scope": False, "tests": None},
        metric_reasons={"in_scope": "also touched a.py", "tests": "no suite declared"},
    )
    found = Validation.from_trial(stored)
    assert dict(found.metrics) == {"in_scope": False, "tests": None}
    assert dict(found.unjudged) == {"tests": "no suite declared"}
    assert found.reasons["in_scope"] == "also touched a.py" and found.valid
    bare = Trial(cell="default", case="c", scenario="s", trial=1)
    assert Validation.from_trial(bare) == Validation()
