"""Script mode: real executables, one argument, the answer contract held strictly."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from sounding.validators import run_validators

Bench = Any  # the `bench` fixture of conftest.py

ONE = """
validators:
  - {mode: script, command: checks/v.py, metrics: [in_scope, delivered]}
scenarios:
  - {id: s, user: go}
"""

GOOD = {
    "metrics": {"in_scope": False, "delivered": True, "files": 3},
    "reasons": {"in_scope": "also touched README.md", "delivered": ""},
}


def test_a_good_answer_becomes_the_trials_metrics(bench: Bench) -> None:
    bench.answering("checks/v.py", GOOD)
    found = run_validators(bench.trial(bench.case(ONE)))
    assert found.valid and found.reason == ""
    assert dict(found.metrics) == {"in_scope": False, "delivered": True, "files": 3}
    assert dict(found.reasons) == {"in_scope": "also touched README.md"}  # empty reason dropped
    assert dict(found.unjudged) == {}


def test_the_context_is_one_archived_file_of_absolute_paths(bench: Bench) -> None:
    bench.script(
        "checks/v.py",
        """
        import json, os, sys
        context = json.load(open(sys.argv[1]))
        json.dump({"metrics": {"in_scope": True, "delivered": True,
                   "cwd": os.getcwd(), "argv": sys.argv[1:]}}, sys.stdout)
        """,
    )
    case = bench.case(
        ONE.replace("scenarios:", "test_command: pytest -q\nprepare: [make deps]\nscenarios:")
    )
    trial = bench.trial(
        case,
        touched=("a.py", "__pycache__/a.pyc"),
        byproducts=("__pycache__/a.pyc",),
        files={"a.py": "x = 1\n", "sub/b.txt": "b"},
        prompt="fix a.py",
    )
    found = run_validators(trial)
    validation = trial.folder / "validation"
    assert found.metrics["cwd"] == str(validation)  # never the workspace
    assert found.metrics["argv"] == [str(validation / "context.json")]
    context = json.loads((validation / "context.json").read_text())
    assert context["schema"] == "sounding.validation-context/1"
    assert context["workspace"] == str((trial.folder / "workspace").resolve())
    assert Path(context["prompt"]).read_text() == "fix a.py"
    assert context["record"] == str((validation / "record.json").resolve())
    assert json.loads(Path(context["record"]).read_text())["final_answer"] == "done"
    assert (context["case"], context["scenario"], context["trial"]) == ("c", "s", 1)
    assert context["declared"] == ["in_scope", "delivered"]
    assert context["touched"] == ["__pycache__/a.pyc", "a.py"]
    assert context["byproducts"] == context["artefacts"] == ["__pycache__/a.pyc"]  # old name too
    assert context["files"] == ["a.py", "sub/b.txt"]
    assert (context["test_command"], context["prepare"]) == ("pytest -q", ["make deps"])
    assert context["reference"] == {"ref": None, "checkout": None}
    for key in ("workspace", "prompt", "record", "suite"):
        assert Path(context[key]).is_absolute()


def test_no_test_command_is_an_absent_key_not_a_null(bench: Bench) -> None:
    bench.answering("checks/v.py", {"metrics": {"in_scope": True, "delivered": True}})
    trial = bench.trial(bench.case(ONE))
    run_validators(trial)
    context = json.loads((trial.folder / "validation/context.json").read_text())
    assert "test_command" not in context and context["prepare"] == []


def test_a_missing_declared_metric_makes_the_trial_invalid_not_false(bench: Bench) -> None:
    bench.answering("checks/v.py", {"metrics": {"in_scope": True}})
    found = run_validators(bench.trial(bench.case(ONE)))
    assert not found.valid
    assert found.reason == (
        "invalid: script validator 'v' did not return the declared metric 'delivered' "
        "(returned: in_scope)"
    )


def test_a_non_zero_exit_is_invalid_and_its_stderr_is_kept(bench: Bench) -> None:
    bench.script(
        "checks/v.py",
        """
        import sys
        print("reading the diff", file=sys.stderr)
        print("KeyError: 'touched'", file=sys.stderr)
        sys.exit(3)
        """,
    )
    trial = bench.trial(bench.case(ONE))
    found = run_validators(trial)
    assert found.problems == (
        "script validator 'v' exited with 3: KeyError: 'touched' "
        "(its stderr is in validation/v.stderr)",
    )
    kept = (trial.folder / "validation/v.stderr").read_text()
    assert kept == "reading the diff\nKeyError: 'touched'\n"


def test_unreadable_json_is_invalid_and_the_output_is_kept(bench: Bench) -> None:
    bench.answering("checks/v.py", "in_scope: yes")
    trial = bench.trial(bench.case(ONE))
    found = run_validators(trial)
    assert not found.valid
    assert "script validator 'v' printed no JSON object on stdout" in found.reason
    assert "'in_scope: yes'" in found.reason
    assert (trial.folder / "validation/v.stdout").read_text() == "in_scope: yes"


def test_a_validator_past_its_timeout_is_killed_and_the_trial_invalid(bench: Bench) -> None:
    bench.script("checks/v.py", "import time\ntime.sleep(30)\n")
    case = bench.case(ONE.replace("metrics: [in_scope, delivered]", "metrics: [x], timeout: 0.5s"))
    started = time.monotonic()
    found = run_validators(bench.trial(case))
    assert time.monotonic() - started < 10
    assert found.problems == (
        "script validator 'v' timed out after 0.5s: raise `timeout:` (now 0.5s) or make it faster",
    )


def test_an_unjudged_metric_with_a_reason_leaves_only_its_denominator(bench: Bench) -> None:
    answer = {"metrics": {"in_scope": True}, "unjudged": {"delivered": "no reference tree"}}
    bench.answering("checks/v.py", answer)
    found = run_validators(bench.trial(bench.case(ONE)))
    assert found.valid
    assert dict(found.metrics) == {"in_scope": True, "delivered": None}
    assert dict(found.unjudged) == {"delivered": "no reference tree"}
    assert found.reasons["delivered"] == "no reference tree"


def test_an_unjudged_metric_without_a_reason_is_invalid(bench: Bench) -> None:
    answer = {"metrics": {"in_scope": True}, "unjudged": {"delivered": " "}}
    bench.answering("checks/v.py", answer)
    found = run_validators(bench.trial(bench.case(ONE)))
    assert found.problems == (
        "script validator 'v' marked metric 'delivered' unjudged without a reason: "
        "say why it could not judge",
    )


def test_a_program_that_cannot_start_is_invalid(bench: Bench) -> None:
    case = bench.case(ONE.replace("checks/v.py", "no-such-program-anywhere"))
    found = run_validators(bench.trial(case))
    assert found.problems[0].startswith(
        "script validator 'no-such-program-anywhere' could not start 'no-such-program-anywhere'"
    )


def test_validators_are_independent_and_a_declared_metric_is_its_owners(bench: Bench) -> None:
    bench.answering("checks/a.py", {"metrics": {"in_scope": True, "tests": False, "extra": 1}})
    bench.answering("checks/b.py", {"metrics": {"tests": True, "extra": 2}})
    case = bench.case(
        """
        validators:
          - {mode: script, command: checks/a.py, metrics: [in_scope]}
          - {mode: script, command: checks/b.py, metrics: [tests]}
        scenarios:
          - {id: s, user: go}
        """
    )
    found = run_validators(bench.trial(case))
    # `tests` is b's: a's value is not taken; an extra nobody declares: the first one found
    assert dict(found.metrics) == {"in_scope": True, "tests": True, "extra": 1}


def test_a_suite_program_is_called_by_its_name_and_suite_placeholder(bench: Bench) -> None:
    bench.answering("v.py", {"metrics": {"x": True}})
    bench.script(
        "checks/args.py",
        """
        import json, sys
        json.dump({"metrics": {"y": sys.argv[1]}}, sys.stdout)
        """,
    )
    case = bench.case(
        """
        validators:
          - {mode: script, command: v.py, metrics: [x]}
          - {mode: script, command: ["checks/args.py", "{suite}/data"], metrics: [y]}
        scenarios:
          - {id: s, user: go}
        """
    )
    found = run_validators(bench.trial(case))
    assert found.metrics == {"x": True, "y": str(bench.root.resolve() / "data")}
