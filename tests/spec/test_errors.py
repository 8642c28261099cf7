"""Malformed case files: each problem at its file, line and key, with the closest name."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from sounding.spec import Case, Problem, SpecError, resolve_case

Load = Callable[[str, str], Case]


@dataclass(frozen=True)
class Bad:
    """A malformed file and the one problem it must produce."""

    name: str
    text: str
    line: int
    key: str
    says: str
    closest: str | None = None


def _only(load: Load, bad: Bad) -> Problem:
    with pytest.raises(SpecError) as caught:
        load(bad.name, textwrap.dedent(bad.text))
    assert len(caught.value.problems) == 1, str(caught.value)
    return caught.value.problems[0]


YAML = [
    Bad(
        "unknown_top_key.yaml",
        """\
        version: 1
        scenario:
          - {id: a, user: hi}
        """,
        2,
        "scenario",
        "unknown key 'scenario'",
        "scenarios",
    ),
    Bad(
        "unknown_check.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            expect:
              - no_error: true
              - tool_caled: {name: lookup}
        """,
        6,
        "scenarios[0].expect[1].tool_caled",
        "unknown check type 'tool_caled'",
        "tool_called",
    ),
    Bad(
        "param_typo.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            expect:
              - tool_called:
                  name: lookup
                  arg: {id: 7}
        """,
        7,
        "scenarios[0].expect[0].tool_called.arg",
        "unknown key 'arg'",
        "args",
    ),
    Bad(
        "param_type.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            expect:
              - tool_called:
                  name: lookup
                  args: 7
        """,
        7,
        "scenarios[0].expect[0].tool_called.args",
        "must be a mapping",
    ),
    Bad(
        "duplicate_key.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            trials: 2
            trials: 3
        """,
        5,
        "scenarios[0].trials",
        "appears twice (first at line 4)",
    ),
    Bad(
        "duplicate_id.yaml",
        """\
        scenarios:
          - id: same
            user: hi
          - id: other
            user: hi
          - id: same
            user: hi
        """,
        6,
        "scenarios[2].id",
        "'same' is used twice (first at line 2)",
    ),
    Bad(
        "version.yaml",
        """\
        version: 2
        scenarios: [{id: a, user: hi}]
        """,
        1,
        "version",
        "unknown case file version 2",
    ),
    Bad(
        "trials.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            trials: 0
        """,
        4,
        "scenarios[0].trials",
        "must be at least 1 (got 0)",
    ),
    Bad(
        "weight.yaml",
        """\
        invariants:
          tests_pass:
            weight: -0.5
            check: {type: command_exit, command: make test}
        scenarios: [{id: a, user: hi}]
        """,
        3,
        "invariants.tests_pass.weight",
        "must be at least 0",
    ),
    Bad(
        "threshold.yaml",
        """\
        scoring:
          pass_threshold: 1.5
        scenarios: [{id: a, user: hi}]
        """,
        2,
        "scoring.pass_threshold",
        "must be at most 1 (got 1.5)",
    ),
    Bad(
        "aggregation.yaml",
        """\
        scoring: {replica_aggregation: majorty}
        scenarios: [{id: a, user: hi}]
        """,
        1,
        "scoring.replica_aggregation",
        "'majorty' is not one of the allowed values",
        "majority",
    ),
    Bad(
        "k_over_trials.yaml",
        """\
        defaults: {trials: 2}
        scenarios:
          - id: a
            user: hi
            scoring:
              k: 3
        """,
        6,
        "scenarios[0].scoring.k",
        "k=3 is more than the 2 trials of scenario 'a'",
    ),
    Bad(
        "forbidden_rule.yaml",
        """\
        forbidden:
          tools_forbiden: [offer_replacement]
        scenarios: [{id: a, user: hi}]
        """,
        2,
        "forbidden.tools_forbiden",
        "unknown forbidden rule 'tools_forbiden'",
        "tools_forbidden",
    ),
    Bad(
        "param_path.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            invariants:
              report:
                check:
                  type: file_exists
                  path: ../outside/report.json
        """,
        8,
        "scenarios[0].invariants.report.check.path",
        "climbs out of the workspace",
    ),
    Bad(
        "shorthand_path.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            expect:
              - file_exists: ~/notes.txt
        """,
        5,
        "scenarios[0].expect[0].file_exists",
        "starts with '~'",
    ),
    Bad(
        "script_path.yaml",
        """\
        invariants:
          custom_one:
            check:
              type: custom
              script: /usr/local/bin/verify.py
        scenarios: [{id: a, user: hi}]
        """,
        5,
        "invariants.custom_one.check.script",
        "is absolute",
    ),
    Bad(
        "fixture.yaml",
        """\
        workspace:
          fixture: /srv/repo
        scenarios: [{id: a, user: hi}]
        """,
        2,
        "workspace.fixture",
        "'/srv/repo' is absolute",
    ),
    Bad(
        "given_dest.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            workspace:
              given:
                ../up.txt: fixtures/up.txt
        """,
        6,
        'scenarios[0].workspace.given["../up.txt"]',
        "climbs out of the workspace",
    ),
    Bad(
        "given_source.yaml",
        """\
        workspace:
          given:
            tests/probe.py: ../../elsewhere/probe.py
        scenarios: [{id: a, user: hi}]
        """,
        3,
        'workspace.given["tests/probe.py"]',
        "climbs out of the suite folder",
    ),
    Bad(
        "test_command.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            test_command: make build && make test
        """,
        4,
        "scenarios[0].test_command",
        "uses shell syntax '&&'",
    ),
    Bad(
        "prepare.yaml",
        """\
        prepare:
          - pip install -e .
          - cat requirements.txt | xargs echo
        scenarios: [{id: a, user: hi}]
        """,
        3,
        "prepare[1]",
        "uses shell syntax '|'",
    ),
    Bad(
        "no_user.yaml",
        """\
        scenarios:
          - id: a
            user: hi
          - id: b
            trials: 2
        """,
        4,
        "scenarios[1]",
        "scenario 'b' has no `user`",
    ),
    Bad(
        "no_scenarios.yaml",
        """\
        defaults: {trials: 3}
        scenarios: []
        """,
        2,
        "scenarios",
        "is empty",
    ),
    Bad(
        "services.yaml",
        """\
        services:
          - {name: db, type: sql}
          - {name: db, type: http_mock}
        scenarios: [{id: a, user: hi}]
        """,
        3,
        "services[1].name",
        "'db' is used twice (first at line 2)",
    ),
    Bad(
        "undeclared_service.yaml",
        """\
        services:
          - {name: orders, type: sql}
        invariants:
          clean:
            check:
              type: sql
              service: order
              query: SELECT 1
        scenarios: [{id: a, user: hi}]
        """,
        7,
        "invariants.clean.check.service",
        "names service 'order'",
        "orders",
    ),
    Bad(
        "duration.yaml",
        """\
        defaults:
          trials: 3
          timeout: 5 minutes
        scenarios: [{id: a, user: hi}]
        """,
        3,
        "defaults.timeout",
        "'5 minutes' is not a duration",
    ),
    Bad(
        "no_type.yaml",
        """\
        invariants:
          tests_pass:
            check: {command: make test}
        scenarios: [{id: a, user: hi}]
        """,
        3,
        "invariants.tests_pass.check",
        "has no `type`",
    ),
    Bad(
        "two_checks.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            expect:
              - tool_called: {name: lookup}
                no_error: true
        """,
        5,
        "scenarios[0].expect[0]",
        "holds 2 checks (tool_called, no_error)",
    ),
    Bad(
        "no_params.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            expect:
              - no_error: {strict: true}
        """,
        5,
        "scenarios[0].expect[0].no_error",
        "takes no params: write `no_error: true`",
    ),
    Bad(
        "missing_param.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            expect:
              - tool_called: {args: {id: 7}}
        """,
        5,
        "scenarios[0].expect[0].tool_called",
        "missing required key 'name'",
    ),
    Bad(
        "scenario_key.yaml",
        """\
        scenarios:
          - id: a
            usr: hi
        """,
        3,
        "scenarios[0].usr",
        "unknown key 'usr'",
        "user",
    ),
    Bad(
        "syntax.yaml",
        """\
        scenarios:
          - id: a
            user: [hi
          - id: b
        """,
        4,
        "",
        "YAML syntax error",
    ),
    Bad(
        "bad_id.yaml",
        """\
        scenarios:
          - id: refund once
            user: hi
        """,
        2,
        "scenarios[0].id",
        "may use only letters, digits",
    ),
    Bad(
        "strict_gate.yaml",
        """\
        invariants:
          tests_pass:
            gate: 1
            check: {type: command_exit, command: make test}
        scenarios: [{id: a, user: hi}]
        """,
        3,
        "invariants.tests_pass.gate",
        "must be true or false (got int 1)",
    ),
    Bad(
        "simulate_typo.yaml",
        """\
        scenarios:
          - id: rebook
            user:
              - Hi
              - simulate: {goal: move ABC123, max_turn: 3}
        """,
        5,
        "scenarios[0].user[1].simulate.max_turn",
        "unknown key 'max_turn'",
        "max_turns",
    ),
    Bad(
        "simulate_not_last.yaml",
        """\
        scenarios:
          - id: rebook
            user:
              - simulate: {goal: move ABC123}
              - and then this
        """,
        4,
        "scenarios[0].user[0]",
        "`simulate:` must be last",
    ),
    Bad(
        "simulate_no_goal.yaml",
        """\
        scenarios:
          - id: rebook
            user:
              - simulate: {persona: terse}
        """,
        4,
        "scenarios[0].user[0].simulate",
        "missing required key 'goal'",
    ),
    Bad(
        "reference_key.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            reference: {comand: python3 solve.py}
        """,
        4,
        "scenarios[0].reference.comand",
        "unknown key 'comand'",
        "command",
    ),
    Bad(
        "broken_two_kinds.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            broken:
              - {command: python3 solve.py --twice}
              - {command: python3 solve.py, record: records/bad.jsonl}
        """,
        6,
        "scenarios[0].broken[1]",
        "sets command, record: write one of `command`, `callable` or `record`",
    ),
    Bad(
        "reference_callable.yaml",
        """\
        reference: {callable: solutions.refund}
        scenarios: [{id: a, user: hi}]
        """,
        1,
        "reference.callable",
        "'solutions.refund' must read 'module:function'",
    ),
    Bad(
        "reference_record.yaml",
        """\
        scenarios:
          - id: a
            user: hi
            reference:
              record: ../elsewhere/good.jsonl
        """,
        5,
        "scenarios[0].reference.record",
        "climbs out of the suite folder",
    ),
    Bad(
        "simulate_too_long.yaml",
        """\
        scenarios:
          - id: rebook
            user:
              - simulate: {goal: move ABC123, max_turns: 500}
        """,
        4,
        "scenarios[0].user[0].simulate.max_turns",
        "at most 100",
    ),
]

TOML = [
    Bad(
        "syntax.toml",
        """\
        version = 1

        [[scenarios]]
        id = "a"
        user = "hi
        """,
        5,
        "",
        "TOML syntax error at column",
    ),
    Bad(
        "version.toml",
        """\
        version = "1"

        [[scenarios]]
        id = "a"
        user = "hi"
        """,
        1,
        "version",
        "unknown case file version '1'",
    ),
    Bad(
        "scenario_key.toml",
        """\
        [[scenarios]]
        id = "a"
        user = "hi"

        [[scenarios]]
        id = "b"
        usr = "hi"
        """,
        7,
        "scenarios[1].usr",
        "unknown key 'usr'",
        "user",
    ),
    Bad(
        "unknown_check.toml",
        """\
        [[scenarios]]
        id = "a"
        user = "hi"
        expect = [
          { no_error = true },
          { final_answer_contain = "Paris" },
        ]
        """,
        6,
        "scenarios[0].expect[1].final_answer_contain",
        "unknown check type 'final_answer_contain'",
        "final_answer_contains",
    ),
    Bad(
        "param_typo.toml",
        """\
        [[scenarios]]
        id = "a"
        user = "hi"

        [[scenarios.expect]]
        no_error = true

        [[scenarios.expect]]
        tool_called = { name = "lookup", arg = { id = 7 } }
        """,
        9,
        "scenarios[0].expect[1].tool_called.arg",
        "unknown key 'arg'",
        "args",
    ),
    Bad(
        "duplicate_id.toml",
        """\
        [[scenarios]]
        id = "same"
        user = "hi"

        [[scenarios]]
        id = "same"
        user = "again"
        """,
        6,
        "scenarios[1].id",
        "'same' is used twice (first at line 2)",
    ),
    Bad(
        "weight.toml",
        """\
        [invariants.tests_pass]
        description = "the suite passes"
        weight = -1
        check = { type = "command_exit", command = "make test" }

        [[scenarios]]
        id = "a"
        user = "hi"
        """,
        3,
        "invariants.tests_pass.weight",
        "must be at least 0 (got -1)",
    ),
    Bad(
        "forbidden.toml",
        """\
        [forbidden]
        tools_forbidden = ["offer_replacement"]
        file_write_outside = ["src/"]

        [[scenarios]]
        id = "a"
        user = "hi"
        """,
        3,
        "forbidden.file_write_outside",
        "unknown forbidden rule 'file_write_outside'",
        "file_writes_outside",
    ),
    Bad(
        "test_command.toml",
        """\
        [[scenarios]]
        id = "a"
        user = "hi"
        test_command = "pytest -q > out.txt"
        """,
        4,
        "scenarios[0].test_command",
        "uses shell syntax '>'",
    ),
    Bad(
        "k_over_trials.toml",
        """\
        [defaults]
        trials = 2

        [scoring]
        k = 5

        [[scenarios]]
        id = "a"
        user = "hi"
        """,
        5,
        "scoring.k",
        "k=5 is more than the 2 trials",
    ),
    Bad(
        "undeclared_service.toml",
        """\
        [[services]]
        name = "ledger"
        type = "sql"

        [[scenarios]]
        id = "a"
        user = "hi"

        [scenarios.invariants.balanced]
        check = { type = "sql", service = "ledgr", query = "SELECT 0" }
        """,
        10,
        "scenarios[0].invariants.balanced.check.service",
        "names service 'ledgr'",
        "ledger",
    ),
    Bad(
        "param_path.toml",
        """\
        [[scenarios]]
        id = "a"
        user = "hi"

        [scenarios.invariants.report]
        description = "the report is written"

        [scenarios.invariants.report.check]
        type = "file_exists"
        path = "/tmp/report.json"
        """,
        10,
        "scenarios[0].invariants.report.check.path",
        "'/tmp/report.json' is absolute",
    ),
    Bad(
        "no_scenarios.toml",
        """\
        version = 1
        scenarios = []
        """,
        2,
        "scenarios",
        "is empty",
    ),
    Bad(
        "no_user.toml",
        """\
        [[scenarios]]
        id = "a"
        trials = 3
        """,
        1,
        "scenarios[0]",
        "scenario 'a' has no `user`",
    ),
    Bad(
        "duration.toml",
        """\
        [[scenarios]]
        id = "a"
        user = "hi"
        check_timeout = "10 sec"
        """,
        4,
        "scenarios[0].check_timeout",
        "'10 sec' is not a duration",
    ),
    Bad(
        "aggregation.toml",
        """\
        [[scenarios]]
        id = "a"
        user = "hi"
        scoring = { pass_threshold = 0.5, replica_aggregation = "avg" }
        """,
        4,
        "scenarios[0].scoring.replica_aggregation",
        "'avg' is not one of the allowed values",
    ),
    Bad(
        "broken_command.toml",
        """\
        [[scenarios]]
        id = "a"
        user = "hi"

        [[scenarios.broken]]
        command = "python3 solve.py | tee out.txt"
        """,
        6,
        "scenarios[0].broken[0].command",
        "uses shell syntax '|'",
    ),
    Bad(
        "services.toml",
        """\
        [[services]]
        name = "mock"
        type = "http_mock"

        [[services]]
        name = "mock"
        type = "http_mock"

        [[scenarios]]
        id = "a"
        user = "hi"
        """,
        6,
        "services[1].name",
        "'mock' is used twice (first at line 2)",
    ),
]


@pytest.mark.parametrize("bad", YAML + TOML, ids=lambda bad: bad.name)
def test_a_malformed_file_names_line_key_and_closest_name(load: Load, bad: Bad) -> None:
    problem = _only(load, bad)
    assert (problem.line, problem.key) == (bad.line, bad.key), str(problem)
    assert bad.says in problem.message
    assert problem.closest == bad.closest
    assert Path(problem.file).name == bad.name


def test_the_error_prints_one_problem_a_line_as_file_line_key_message(load: Load) -> None:
    text = """\
        scenarios:
          - id: a
            user: hi
            expect:
              - tool_caled: {name: lookup}
            trials: 0
        """
    with pytest.raises(SpecError) as caught:
        load("two.yaml", textwrap.dedent(text))
    lines = str(caught.value).splitlines()
    assert len(lines) == 1  # model validation stops the pipeline before semantic checks
    assert lines[0].endswith("two.yaml:6: scenarios[0].trials: must be at least 1 (got 0)")


def test_all_semantic_problems_of_a_file_come_together_in_line_order(load: Load) -> None:
    text = """\
        scenarios:
          - id: a
            user: hi
            expect:
              - tool_caled: {name: lookup}
          - id: a
            user: hi
            test_command: "make; make test"
        """
    with pytest.raises(SpecError) as caught:
        load("many.yaml", textwrap.dedent(text))
    shown = str(caught.value).splitlines()
    assert [line.split(": ")[0].rsplit(":", 1)[1] for line in shown] == ["5", "6", "8"]
    assert shown[0].endswith(
        "scenarios[0].expect[0].tool_caled: unknown check type 'tool_caled' "
        "(allowed: command_exit, custom, file_exists, final_answer_contains, matches_golden, "
        "no_error, sql, tool_called; did you mean 'tool_called'?)"
    )


def test_a_problem_without_a_line_prints_file_and_key() -> None:
    problem = Problem("cases/a.yaml", None, "scenarios[0].id", "is used twice")
    assert str(problem) == "cases/a.yaml: scenarios[0].id: is used twice"


def test_data_resolved_from_memory_reports_keys_without_lines(registry: object) -> None:
    data = {"scenarios": [{"id": "a", "user": "hi", "expect": [{"no_eror": True}]}]}
    with pytest.raises(SpecError) as caught:
        resolve_case(data, path="draft.yaml", registry=registry)  # type: ignore[arg-type]
    (problem,) = caught.value.problems
    assert (problem.file, problem.line) == ("draft.yaml", None)
    assert problem.key == "scenarios[0].expect[0].no_eror"
    assert problem.closest == "no_error"


def test_a_yaml_file_that_is_not_a_mapping_is_refused(load: Load) -> None:
    with pytest.raises(SpecError, match=r"list\.yaml:1: holds list, not a mapping"):
        load("list.yaml", "- id: a\n  user: hi\n")


def test_an_empty_file_is_refused(load: Load) -> None:
    with pytest.raises(SpecError, match=r"empty\.yaml: is empty: a case file needs"):
        load("empty.yaml", "# nothing yet\n")
    with pytest.raises(SpecError, match=r"empty\.toml:1: missing required key 'scenarios'"):
        load("empty.toml", "")
