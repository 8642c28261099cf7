"""`validators:` of a case, checked at load: modes, metrics, commands and rubrics."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from sounding.spec import Case, SpecError, ValidatorSpec, load_case

SCENARIOS = "scenarios:\n  - {id: s, user: go}\n"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "checks").mkdir()
    scope = tmp_path / "checks/scope.py"
    scope.write_text(f"#!{sys.executable}\n")
    scope.chmod(0o755)
    (tmp_path / "checks/plain.py").write_text("print()\n")
    (tmp_path / "rubric.md").write_text("Is it usable?")
    return tmp_path


def load(suite: Path, validators: str) -> Case:
    path = suite / "cases" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    body = textwrap.indent(textwrap.dedent(validators).strip("\n"), "  ")
    path.write_text(f"validators:\n{body}\n{SCENARIOS}")
    return load_case(path, suite_dir=suite)


def refused(suite: Path, validators: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load(suite, validators)
    prefix = f"{suite / 'cases' / 'c.yaml'}:"
    return [str(problem).removeprefix(prefix) for problem in caught.value.problems]


def test_each_mode_resolves_with_its_defaults(suite: Path) -> None:
    case = load(
        suite,
        """
        - {mode: script, command: checks/scope.py --strict, metrics: [in_scope, delivered]}
        - {mode: judge, rubric: rubric.md, pieces: [response, diff], metrics: [usable, score],
           types: {score: number}, model: judge-2}
        - {mode: form, metrics: [reads_well]}
        """,
    )
    script, judge, form = case.validators
    assert script == ValidatorSpec(
        name="scope",
        mode="script",
        metrics=["in_scope", "delivered"],
        command=["checks/scope.py", "--strict"],
        timeout=60.0,
        line=2,
    )
    assert (judge.name, judge.pieces, judge.model) == ("judge", ["response", "diff"], "judge-2")
    assert (judge.kind("score"), judge.kind("usable")) == ("number", "bool")
    assert (form.name, form.metrics) == ("form", ["reads_well"])


def test_a_timeout_is_a_duration(suite: Path) -> None:
    (spec,) = load(
        suite, "- {mode: script, command: [checks/scope.py], metrics: [x], timeout: 2m}"
    ).validators
    assert spec.timeout == 120.0 and spec.command == ["checks/scope.py"]


def test_two_validators_may_not_declare_one_metric(suite: Path) -> None:
    problems = refused(
        suite,
        """
        - {mode: script, command: checks/scope.py, metrics: [in_scope, overflow]}
        - {mode: judge, name: critic, rubric: rubric.md, pieces: [response], metrics: [overflow]}
        """,
    )
    assert problems == [
        "3: validators[1].metrics[0]: metric 'overflow' is declared by validator 'critic' and "
        "by validator 'scope' at line 2: two validators may not declare one metric; rename one "
        "(like 'overflow_judge')"
    ]


def test_a_key_of_another_mode_and_a_missing_one_are_named(suite: Path) -> None:
    problems = refused(suite, "- {mode: judge, command: checks/scope.py, metrics: [x]}")
    assert problems == [
        "2: validators[0].command: `command` is for mode script; a judge validator takes mode, "
        "name, metrics, lower_is_better, rubric, pieces, model, types",
        "2: validators[0]: a judge validator needs `rubric`, like `rubric: rubrics/note.md` (a "
        "file of the suite folder)",
        "2: validators[0]: a judge validator needs `pieces`, like `pieces: [prompt, response, "
        "diff]`",
    ]


@pytest.mark.parametrize(
    ("validator", "problem"),
    [
        (
            "{mode: shell, metrics: [x]}",
            "'shell' is not one of the allowed values (allowed: script, judge, form)",
        ),
        ("{mode: form, metrics: []}", "metrics: is empty: declare the metrics"),
        ("{mode: form, metrics: [in-scope]}", "metric 'in-scope' must start with a letter"),
        ("{mode: form, metrics: [passed]}", "metric 'passed' is a name every trial already has"),
        ("{mode: form, metrics: [a, a]}", "metric 'a' is declared twice by this validator"),
        ("{mode: form, metrics: [a], types: {b: bool}}", "gives a type to 'b', which `metrics`"),
        (
            "{mode: form, metrics: [a], types: {a: text}}",
            "'text' is not one of the allowed values (allowed: bool, number, string)",
        ),
        ("{mode: form, name: 'my form', metrics: [a]}", "'my form' may use only letters"),
        ("{mode: script, command: 'checks/scope.py | tee x', metrics: [a]}", "shell syntax '|'"),
        ("{mode: script, command: ../scope.py, metrics: [a]}", "climbs out of the suite folder"),
        ("{mode: script, command: /bin/scope, metrics: [a]}", "is absolute"),
        (
            "{mode: script, command: checks/nope.py, metrics: [a]}",
            "'checks/nope.py' does not exist",
        ),
        (
            "{mode: script, command: checks/plain.py, metrics: [a]}",
            "'checks/plain.py' is not executable: run 'chmod +x checks/plain.py'",
        ),
        (
            "{mode: judge, rubric: nope.md, pieces: [diff], metrics: [a]}",
            "rubric 'nope.md' is not a file",
        ),
        ("{mode: judge, rubric: rubric.md, pieces: [], metrics: [a]}", "pieces: is empty"),
        (
            "{mode: judge, rubric: rubric.md, pieces: [diff, diff], metrics: [a]}",
            "pieces[1]: 'diff' is listed twice",
        ),
        (
            "{mode: judge, rubric: rubric.md, pieces: [transcript], metrics: [a]}",
            "'transcript' is not one of the allowed values (allowed: prompt, response, diff)",
        ),
    ],
)
def test_a_validator_that_cannot_run_is_refused_at_load(
    suite: Path, validator: str, problem: str
) -> None:
    (found,) = refused(suite, f"- {validator}")
    assert problem in found


def test_two_validators_of_one_name_are_refused(suite: Path) -> None:
    problems = refused(
        suite,
        """
        - {mode: script, command: checks/scope.py, metrics: [a]}
        - {mode: script, command: [checks/scope.py, --other], metrics: [b]}
        """,
    )
    assert problems == [
        "3: validators[1]: validator name 'scope' is also the name of the validator at line 2: "
        "give each a distinct `name:`"
    ]


def test_a_program_on_path_is_found_when_it_runs(suite: Path) -> None:
    (spec,) = load(suite, "- {mode: script, command: my-validator --fast, metrics: [a]}").validators
    assert spec.command == ["my-validator", "--fast"] and spec.name == "my-validator"


def test_validators_belong_to_the_case_not_to_a_scenario(suite: Path) -> None:
    path = suite / "c.yaml"
    path.write_text("scenarios:\n  - id: s\n    user: go\n    validators: []\n")
    with pytest.raises(SpecError, match="unknown key 'validators'"):
        load_case(path, suite_dir=suite)


JUDGED = """
  - id: s
    user: go
    invariants:
      tone: {check: {type: llm_as_judge, criteria: Is it polite?}}
    expect:
      - llm_as_judge: Is it short?
"""


def load_judged(suite: Path, validators: str) -> Case:
    path = suite / "cases" / "j.yaml"
    path.parent.mkdir(exist_ok=True)
    body = textwrap.indent(textwrap.dedent(validators).strip("\n"), "  ")
    path.write_text(f"validators:\n{body}\nscenarios:{JUDGED}")
    return load_case(path, suite_dir=suite)


def test_a_form_metric_checks_a_judge_check_or_a_judge_metric(suite: Path) -> None:
    case = load_judged(
        suite,
        """
        - {mode: judge, rubric: rubric.md, pieces: [response], metrics: [usable, depth],
           types: {depth: number}}
        - mode: form
          metrics: [tone_ok, tone_score, usable_by_hand, depth_by_hand, short_ok]
          types: {tone_score: number, depth_by_hand: number}
          checks: {tone_ok: tone, tone_score: tone, usable_by_hand: usable,
                   depth_by_hand: depth, short_ok: "expect[0] llm_as_judge"}
        """,
    )
    form = case.validators[1]
    assert form.checks["tone_score"] == "tone" and form.checks["usable_by_hand"] == "usable"
    judges = case.judge_checks()
    assert list(judges) == ["tone", "expect[0] llm_as_judge", "usable", "depth"]
    assert judges["tone"].validator is None and judges["tone"].kind is None
    assert (judges["depth"].validator, judges["depth"].kind) == ("judge", "number")


@pytest.mark.parametrize(
    ("form", "problem"),
    [
        (
            "{mode: form, metrics: [a], checks: {a: tnoe}}",
            "validators[1].checks.a: 'tnoe' is no judge check of this case: name an invariant "
            "or `expect` entry that asks the judge (llm_as_judge), or a metric of a judge "
            "validator (allowed: tone, expect[0] llm_as_judge, usable; did you mean 'tone'?)",
        ),
        (
            "{mode: form, metrics: [a], checks: {b: tone}}",
            "validators[1].checks.b: ties 'b' to a judge, but `metrics` does not declare it",
        ),
        (
            "{mode: form, metrics: [a], types: {a: string}, checks: {a: tone}}",
            "validators[1].checks.a: 'a' is text: only a yes/no or number metric checks a judge",
        ),
        (
            "{mode: form, metrics: [a], types: {a: number}, checks: {a: usable}}",
            "validators[1].checks.a: 'a' is number but judge metric 'usable' is bool: a form "
            "metric checks a judge metric of its own kind (`types:`)",
        ),
        (
            "{mode: script, command: checks/scope.py, metrics: [a], checks: {a: tone}}",
            "validators[1].checks: `checks` is for mode form; a script validator takes mode, "
            "name, metrics, lower_is_better, command, timeout",
        ),
    ],
)
def test_a_tie_to_no_judge_is_refused_at_load(suite: Path, form: str, problem: str) -> None:
    judge = "- {mode: judge, rubric: rubric.md, pieces: [response], metrics: [usable]}"
    with pytest.raises(SpecError) as caught:
        load_judged(suite, f"{judge}\n- {form}")
    found = [str(p).split(": ", 1)[1] for p in caught.value.problems]
    assert any(problem in line for line in found), found
