"""How a scenario inherits from its case, and the short forms a case file may use."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from sounding.spec import Aggregation, Case

Load = Callable[[str, str], Case]

MERGING = """\
defaults: {trials: 4, timeout: 10m, check_timeout: 20s}
workspace: {fixture: fixtures/base, ref: v1, given: {probe.py: fixtures/probe.py}}
scoring: {pass_threshold: 0.8, replica_aggregation: majority, k: 2}
invariants:
  builds:
    description: it builds
    weight: 1.0
    gate: true
    check: {type: command_exit, command: make}
  tidy: {weight: 0.3, check: {type: command_exit, command: make lint}}
expect:
  - no_error: true
leads:
  - final_answer_contains: sorry
forbidden: {tools_forbidden: [drop_table], file_writes_outside: [src/]}
test_command: pytest -q
prepare: [pip install -e .]
env: {MODE: ci, LANG: C}
scenarios:
  - id: inherits
    user: hi
  - id: overrides
    user: hi
    trials: 6
    check_timeout: 5
    workspace: {ref: v2}
    scoring: {pass_threshold: 0.5}
    invariants:
      tidy: {weight: 0.1, check: {type: command_exit, command: ruff check}}
      tested: {check: {type: command_exit, command: make test}}
    expect:
      - final_answer_contains: done
    leads:
      - final_answer_contains: thanks
    forbidden: {tools_forbidden: [refund], file_writes_outside: [src/, docs/]}
    test_command: make test
    prepare: []
    env: {MODE: local}
"""


def test_a_scenario_that_says_nothing_gets_the_case_level_as_is(load: Load) -> None:
    scenario = load("merging.yaml", MERGING).scenario("inherits")
    assert (scenario.trials, scenario.timeout, scenario.check_timeout) == (4, 600.0, 20.0)
    assert [i.name for i in scenario.invariants] == ["builds", "tidy"]
    assert scenario.invariants[1].description == "tidy"  # no description: the name
    assert [a.name for a in scenario.expect] == ["expect[0] no_error"]
    assert [a.name for a in scenario.leads] == ["lead[0] final_answer_contains"]
    assert scenario.scoring.model_dump() == {
        "pass_threshold": 0.8,
        "replica_aggregation": Aggregation.MAJORITY,
        "k": 2,
    }
    assert scenario.workspace.given == {"probe.py": "fixtures/probe.py"}
    assert (scenario.test_command, scenario.prepare) == ("pytest -q", ["pip install -e ."])
    assert scenario.env == {"MODE": "ci", "LANG": "C"}


def test_invariants_merge_by_name_and_the_scenario_wins(load: Load) -> None:
    scenario = load("merging.yaml", MERGING).scenario("overrides")
    assert [(i.name, i.weight) for i in scenario.invariants] == [
        ("builds", 1.0),
        ("tidy", 0.1),
        ("tested", 1.0),
    ]
    assert scenario.invariants[1].check.params.model_dump()["command"] == "ruff check"


def test_expect_and_leads_append_and_are_numbered_within_the_scenario(load: Load) -> None:
    scenario = load("merging.yaml", MERGING).scenario("overrides")
    assert [a.name for a in scenario.expect] == [
        "expect[0] no_error",
        "expect[1] final_answer_contains",
    ]
    assert [a.check.params.model_dump() for a in scenario.leads] == [
        {"text": "sorry"},
        {"text": "thanks"},
    ]
    assert [a.name for a in scenario.leads] == [
        "lead[0] final_answer_contains",
        "lead[1] final_answer_contains",
    ]


def test_forbidden_rules_merge_by_rule(load: Load) -> None:
    scenario = load("merging.yaml", MERGING).scenario("overrides")
    rules = {a.name: a.check.params.model_dump() for a in scenario.forbidden}
    assert rules == {
        "forbidden tools_forbidden": {"names": ["refund"]},
        "forbidden file_writes_outside": {"prefixes": ["src/", "docs/"]},
    }


def test_scoring_and_workspace_merge_key_by_key(load: Load) -> None:
    scenario = load("merging.yaml", MERGING).scenario("overrides")
    assert (scenario.scoring.pass_threshold, scenario.scoring.k) == (0.5, 2)
    assert scenario.scoring.replica_aggregation is Aggregation.MAJORITY
    assert (scenario.workspace.fixture, scenario.workspace.ref) == ("fixtures/base", "v2")


def test_commands_are_replaced_and_env_merges_by_variable(load: Load) -> None:
    scenario = load("merging.yaml", MERGING).scenario("overrides")
    assert (scenario.trials, scenario.check_timeout) == (6, 5.0)
    assert (scenario.test_command, scenario.prepare) == ("make test", [])
    assert scenario.env == {"MODE": "local", "LANG": "C"}


def test_short_forms_mean_their_long_forms(load: Load) -> None:
    short = load(
        "short.yaml",
        textwrap.dedent(
            """\
            forbidden: {tools_forbidden: [drop_table]}
            scenarios:
              - id: a
                user: hi
                prepare: make deps
                expect:
                  - final_answer_contains: Paris
                  - tool_called: lookup
                  - no_error: true
            """
        ),
    ).scenarios[0]
    long = load(
        "long.yaml",
        textwrap.dedent(
            """\
            forbidden: {tools_forbidden: {names: [drop_table]}}
            scenarios:
              - id: a
                user: [hi]
                prepare: [make deps]
                expect:
                  - final_answer_contains: {text: Paris}
                  - tool_called: {name: lookup}
                  - no_error: {}
            """
        ),
    ).scenarios[0]
    assert short.model_dump() == long.model_dump()
    assert short.user == ["hi"] and short.prepare == ["make deps"]


def test_yaml_anchors_and_scratch_keys_share_blocks(load: Load) -> None:
    case = load(
        "anchors.yaml",
        textwrap.dedent(
            """\
            x-usual: &usual
              user: hi
              trials: 2
            scenarios:
              - <<: *usual
                id: a
              - <<: *usual
                id: b
                trials: 5
            """
        ),
    )
    assert [(s.id, s.user, s.trials) for s in case.scenarios] == [
        ("a", ["hi"], 2),
        ("b", ["hi"], 5),
    ]


def test_quoted_commands_may_hold_what_a_shell_would_read(load: Load) -> None:
    scenario = load(
        "quoted.yaml",
        textwrap.dedent(
            """\
            scenarios:
              - id: a
                user: hi
                test_command: pytest -k 'refund or "a|b"' tests/
                prepare: ["grep -c '$HOME && x' notes.txt", "echo 'a;b' \\"c>d\\""]
            """
        ),
    ).scenarios[0]
    assert scenario.test_command == "pytest -k 'refund or \"a|b\"' tests/"
    assert scenario.prepare[1] == "echo 'a;b' \"c>d\""
