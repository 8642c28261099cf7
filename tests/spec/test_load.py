"""Loading case files: YAML and TOML alike, folders of them, and large files fast."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sounding.checks import Registry, Role
from sounding.spec import (
    Aggregation,
    Case,
    Scenario,
    SpecError,
    load_case,
    load_cases,
    resolve_case,
)

Load = Callable[[str, str], Case]

REFUND_YAML = """\
version: 1
defaults: {trials: 3, timeout: 5m, check_timeout: 30s}
workspace: {fixture: fixtures/shop, byproducts: [__pycache__]}
services:
  - {name: orders, type: sql, seed: fixtures/orders.sql}
scoring: {pass_threshold: 0.85, replica_aggregation: all, k: 3}
invariants:
  refunded_once:
    description: exactly one refund row
    weight: 1.0
    gate: true
    check: {type: sql, service: orders, query: SELECT count(*) FROM refunds, equals: 1}
expect:
  - tool_called: {name: lookup, args: {id: 7}}
  - final_answer_contains: refunded
forbidden: {tools_forbidden: [offer_replacement], file_writes_outside: [src/]}
scenarios:
  - id: refund-once
    user: I want my money back for order 7.
    trials: 5
    timeout: 120s
    expect:
      - no_error: true
  - id: refund-then-thanks
    user:
      - I want my money back for order 7.
      - Thanks!
    test_command: pytest -q tests/test_refunds.py
    prepare: [pip install -e .]
    env: {SHOP_MODE: strict}
"""

REFUND_TOML = """\
version = 1
expect = [
  { tool_called = { name = "lookup", args = { id = 7 } } },
  { final_answer_contains = "refunded" },
]

[defaults]
trials = 3
timeout = 300
check_timeout = "30s"

[workspace]
fixture = "fixtures/shop"
byproducts = ["__pycache__"]

[[services]]
name = "orders"
type = "sql"
seed = "fixtures/orders.sql"

[scoring]
pass_threshold = 0.85
replica_aggregation = "all"
k = 3

[invariants.refunded_once]
description = "exactly one refund row"
weight = 1.0
gate = true

[invariants.refunded_once.check]
type = "sql"
service = "orders"
query = "SELECT count(*) FROM refunds"
equals = 1

[forbidden]
tools_forbidden = ["offer_replacement"]
file_writes_outside = ["src/"]

[[scenarios]]
id = "refund-once"
user = "I want my money back for order 7."
trials = 5
timeout = "2m"
expect = [{ no_error = true }]

[[scenarios]]
id = "refund-then-thanks"
user = ["I want my money back for order 7.", "Thanks!"]
test_command = "pytest -q tests/test_refunds.py"
prepare = ["pip install -e ."]
env = { SHOP_MODE = "strict" }
"""


def _without_lines(value: Any) -> Any:
    """A dumped model with every `line` dropped: where a thing is written, not what it is."""
    if isinstance(value, dict):
        return {k: _without_lines(v) for k, v in value.items() if k != "line"}
    if isinstance(value, list):
        return [_without_lines(item) for item in value]
    return value


def test_yaml_and_toml_of_one_case_resolve_to_equal_scenarios(load: Load) -> None:
    from_yaml = load("refund.yaml", REFUND_YAML)
    from_toml = load("refund.toml", REFUND_TOML)
    assert len(from_yaml.scenarios) == 2
    for ours, theirs in zip(from_yaml.scenarios, from_toml.scenarios, strict=True):
        assert _without_lines(ours.model_dump()) == _without_lines(theirs.model_dump())
    assert from_yaml.services == from_toml.services
    assert from_yaml.services == [{"name": "orders", "type": "sql", "seed": "fixtures/orders.sql"}]


def test_a_resolved_scenario_carries_every_level_merged(load: Load) -> None:
    case = load("refund.yaml", REFUND_YAML)
    assert (case.name, case.version) == ("refund", 1)
    once = case.scenario("refund-once")
    assert (once.trials, once.timeout, once.check_timeout) == (5, 120.0, 30.0)
    assert once.user == ["I want my money back for order 7."]
    assert [a.name for a in once.expect] == [
        "expect[0] tool_called",
        "expect[1] final_answer_contains",
        "expect[2] no_error",
    ]
    assert once.expect[0].check.params.model_dump() == {"name": "lookup", "args": {"id": 7}}
    assert [a.name for a in once.forbidden] == [
        "forbidden tools_forbidden",
        "forbidden file_writes_outside",
    ]
    assert all(a.check.role is Role.FORBIDDEN for a in once.forbidden)
    (invariant,) = once.invariants
    assert (invariant.name, invariant.weight, invariant.gate) == ("refunded_once", 1.0, True)
    assert once.scoring.replica_aggregation is Aggregation.ALL
    assert once.workspace.fixture == "fixtures/shop"
    thanks = case.scenario("refund-then-thanks")
    assert (thanks.trials, thanks.timeout) == (3, 300.0)
    assert thanks.user == ["I want my money back for order 7.", "Thanks!"]
    assert thanks.test_command == "pytest -q tests/test_refunds.py"
    assert (thanks.prepare, thanks.env) == (["pip install -e ."], {"SHOP_MODE": "strict"})


def test_lines_point_at_the_scenario_and_each_check(load: Load) -> None:
    case = load("refund.yaml", REFUND_YAML)
    once = case.scenario("refund-once")
    assert once.line == 18
    assert [a.check.line for a in once.expect] == [14, 15, 23]
    assert once.invariants[0].check.line == 12
    toml = load("refund.toml", REFUND_TOML).scenario("refund-once")
    assert toml.line == 41
    assert [a.check.line for a in toml.expect] == [3, 4, 46]


def test_load_cases_reads_a_folder_sorted_and_skips_other_files(
    tmp_path: Path, registry: Registry
) -> None:
    (tmp_path / "b.toml").write_text('[[scenarios]]\nid = "b"\nuser = "hi"\n')
    (tmp_path / "a.yml").write_text("scenarios: [{id: a, user: hi}]\n")
    (tmp_path / "c.yaml").write_text("scenarios: [{id: c, user: hi}]\n")
    (tmp_path / "notes.md").write_text("not a case\n")
    cases = load_cases(tmp_path, registry=registry)
    assert [case.name for case in cases] == ["a", "b", "c"]
    assert [case.path.name for case in cases] == ["a.yml", "b.toml", "c.yaml"]


def test_load_cases_takes_files_and_folders_and_reports_all_problems(
    tmp_path: Path, registry: Registry
) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "one.yaml").write_text("scenarios: [{id: a, user: hi, trials: 0}]\n")
    (folder / "two.toml").write_text('[[scenarios]]\nid = "b"\n')
    (tmp_path / "one.toml").write_text('[[scenarios]]\nid = "c"\nuser = "hi"\n')
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SpecError) as caught:
        load_cases([folder, tmp_path / "one.toml", empty], registry=registry)
    shown = [str(problem) for problem in caught.value.problems]
    assert any(
        s.endswith("one.yaml:1: scenarios[0].trials: must be at least 1 (got 0)") for s in shown
    )
    assert any("two.toml:1: scenarios[0]: scenario 'b' has no `user`" in s for s in shown)
    assert any(
        s.endswith(
            "empty: holds no case files (*.yaml, *.yml, *.toml): add one or name another folder"
        )
        for s in shown
    )
    assert len(shown) == 3


def test_two_case_files_of_one_name_are_refused(tmp_path: Path, registry: Registry) -> None:
    (tmp_path / "refund.yaml").write_text("scenarios: [{id: a, user: hi}]\n")
    (tmp_path / "refund.toml").write_text('[[scenarios]]\nid = "a"\nuser = "hi"\n')
    with pytest.raises(SpecError, match="case name 'refund' is also the name of"):
        load_cases(tmp_path, registry=registry)


@pytest.mark.parametrize(
    ("name", "says"),
    [("missing.yaml", "does not exist"), ("case.json", "is not a case file")],
)
def test_a_path_that_is_no_case_file_is_refused_by_name(
    tmp_path: Path, registry: Registry, name: str, says: str
) -> None:
    (tmp_path / "case.json").write_text("{}")
    with pytest.raises(SpecError) as caught:
        load_case(tmp_path / name, registry=registry)
    (problem,) = caught.value.problems
    assert problem.file == str(tmp_path / name)
    assert says in problem.message


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path, registry: Registry) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes("scenarios: [{id: a, user: caf\xe9}]\n".encode("latin-1"))
    with pytest.raises(SpecError, match="is not UTF-8 text"):
        load_case(path, registry=registry)


def test_with_a_suite_folder_the_fixture_and_given_files_must_exist(
    tmp_path: Path, registry: Registry
) -> None:
    (tmp_path / "fixtures" / "shop").mkdir(parents=True)
    text = textwrap.dedent(
        """\
        workspace:
          fixture: fixtures/shop
          given: {tests/probe.py: fixtures/probe.py}
        scenarios: [{id: a, user: hi}]
        """
    )
    path = tmp_path / "cases" / "a.yaml"
    path.parent.mkdir()
    path.write_text(text)
    load_case(path, registry=registry)  # without a suite folder nothing is looked up
    with pytest.raises(SpecError) as caught:
        load_case(path, suite_dir=tmp_path, registry=registry)
    (problem,) = caught.value.problems
    assert (problem.line, problem.key) == (3, 'workspace.given["tests/probe.py"]')
    assert "given file 'fixtures/probe.py' does not exist" in problem.message
    (tmp_path / "fixtures" / "probe.py").write_text("")
    assert load_case(path, suite_dir=tmp_path, registry=registry).scenarios[0].id == "a"


def test_with_a_suite_folder_the_fixture_must_be_a_folder(
    tmp_path: Path, registry: Registry
) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "shop.zip").write_text("")
    path = tmp_path / "a.yaml"
    path.write_text("scenarios: [{id: a, user: hi}]\nworkspace: {fixture: fixtures/shop.zip}\n")
    with pytest.raises(SpecError) as caught:
        load_case(path, suite_dir=tmp_path, registry=registry)
    (problem,) = caught.value.problems
    assert (problem.line, problem.key) == (2, "workspace.fixture")
    assert problem.message == "fixture 'fixtures/shop.zip' is a file: name the folder to copy"


def test_resolve_case_builds_a_case_from_data_in_memory(registry: Registry) -> None:
    data = {"defaults": {"trials": 2}, "scenarios": [{"id": "draft", "user": "hi"}]}
    case = resolve_case(data, path="drafts/try.yaml", registry=registry)
    assert (case.name, case.scenarios[0].trials, case.scenarios[0].line) == ("try", 2, None)


def test_the_checks_of_the_families_resolve_by_default(tmp_path: Path) -> None:
    path = tmp_path / "families.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            scenarios:
              - id: a
                user: What is the capital of France?
                expect:
                  - final_answer_contains: Paris
                  - tool_called: {name: lookup}
                  - no_error: true
            """
        )
    )
    scenario = load_case(path).scenarios[0]
    assert [a.check.check_type.name for a in scenario.expect] == [
        "final_answer_contains",
        "tool_called",
        "no_error",
    ]


def _big_yaml(count: int) -> str:
    lines = ["defaults: {trials: 3, timeout: 300s}", "expect:", "  - no_error: true", "scenarios:"]
    for i in range(count):
        lines += [
            f"  - id: s{i}",
            f"    user: question number {i}",
            "    expect:",
            f"      - tool_called: {{name: lookup, args: {{id: {i}}}}}",
            "      - final_answer_contains: Paris",
        ]
    return "\n".join(lines) + "\n"


def _big_toml(count: int) -> str:
    blocks = ['[defaults]\ntrials = 3\ntimeout = "300s"\n']
    for i in range(count):
        blocks.append(
            f'[[scenarios]]\nid = "s{i}"\nuser = "question {i}"\nexpect = [\n'
            f'  {{ tool_called = {{ name = "lookup", args = {{ id = {i} }} }} }},\n'
            '  { final_answer_contains = "Paris" },\n]\n'
        )
    return "\n".join(blocks)


@pytest.mark.parametrize(("name", "build"), [("big.yaml", _big_yaml), ("big.toml", _big_toml)])
def test_five_thousand_scenarios_load_with_their_lines(
    load: Load, name: str, build: Callable[[int], str]
) -> None:
    case = load(name, build(5000))  # how fast: benchmarks/, never a timed assertion here
    assert len(case.scenarios) == 5000
    last: Scenario = case.scenarios[-1]
    assert last.expect[-1].check.line is not None


def test_the_old_key_artefacts_still_loads_with_a_note_to_rename_it(load: Any) -> None:
    case = load(
        "old.yaml",
        "workspace: {artefacts: [__pycache__]}\nscenarios:\n  - {id: a, user: hi}\n",
    )
    assert case.scenarios[0].workspace.byproducts == ["__pycache__"]
    (note,) = case.notes
    assert note.split("/")[-1].startswith("old.yaml:1: workspace.artefacts: is the old name of")


def test_byproducts_given_under_both_names_is_refused(load: Any) -> None:
    with pytest.raises(SpecError, match=r"artefacts: and `byproducts` are one setting"):
        load(
            "both.yaml",
            "workspace: {artefacts: [a], byproducts: [b]}\nscenarios:\n  - {id: a, user: hi}\n",
        )


def test_a_user_may_end_with_a_simulated_one(load: Load) -> None:
    case = load(
        "trip.yaml",
        """\
        scenarios:
          - id: rebook
            user:
              - Hi, I need to change my flight.
              - simulate:
                  persona: Impatient traveller
                  goal: Move reservation ABC123 to the next day
                  knows: {reservation_id: ABC123, seats: 2}
          - id: alone
            user: [{simulate: {goal: Cancel my booking}}]
        """,
    )
    rebook, alone = case.scenarios
    assert rebook.user == ["Hi, I need to change my flight."]
    assert rebook.simulate is not None and rebook.simulate.max_turns == 10
    assert rebook.simulate.knows == {"reservation_id": "ABC123", "seats": 2}
    assert alone.user == [] and alone.simulate is not None
    assert alone.simulate.goal == "Cancel my booking" and alone.simulate.persona == ""


def test_a_graded_check_the_composite_cannot_hear_is_noted(load: Any) -> None:
    graded = "{description: scored, check: {type: custom, script: checks/tone.py}}"
    saved = "{description: saved, check: {type: file_exists, path: note.txt}}"
    case = load(
        "graded.yaml",
        f"""\
scenarios:
  - id: perfect-only
    user: hi
    invariants: {{tone: {graded}}}
  - id: deaf
    user: hi
    scoring: {{pass_threshold: 0.5}}
    invariants: {{tone: {graded}, saved: {saved}}}
  - id: heard
    user: hi
    scoring: {{pass_threshold: 0.8}}
    invariants: {{tone: {graded}, saved: {saved}}}
  - id: gated
    user: hi
    invariants: {{tone: {{description: s, gate: true, check: {{type: custom, script: t.py}}}}}}
""",
    )
    perfect, deaf = case.notes
    assert "graded.yaml:2:" in perfect and "passes only on its perfect score" in perfect
    assert "graded.yaml:5:" in deaf and "a score of 0 passes the trial" in deaf


def test_a_reference_of_the_case_stands_for_each_scenario_that_names_none(load: Load) -> None:
    case = load(
        "audit.yaml",
        """\
        reference: {command: "python3 {suite}/solve.py"}
        broken:
          - {callable: "wrong:twice"}
        scenarios:
          - id: shared
            user: hi
          - id: own
            user: hi
            reference: {record: records/good.jsonl}
            broken:
              - {command: python3 solve.py --hasty}
        """,
    )
    shared, own = case.scenarios
    assert shared.reference is not None and own.reference is not None
    assert (str(shared.reference), shared.reference.line) == ("command python3 {suite}/solve.py", 1)
    assert [str(stand_in) for stand_in in shared.broken] == ["callable wrong:twice"]
    assert (own.reference.kind, own.reference.target) == ("record", "records/good.jsonl")
    assert [stand_in.kind for stand_in in own.broken] == ["callable", "command"]
    assert own.broken[1].line == 11


def test_a_reference_record_must_exist_in_the_suite_folder(
    tmp_path: Path, registry: Registry
) -> None:
    path = tmp_path / "cases" / "a.yaml"
    path.parent.mkdir()
    path.write_text("scenarios:\n  - {id: a, user: hi, reference: {record: records/good.jsonl}}\n")
    with pytest.raises(SpecError) as caught:
        load_case(path, suite_dir=tmp_path, registry=registry)
    (problem,) = caught.value.problems
    assert (problem.line, problem.key) == (2, "scenarios[0].reference.record")
    assert "record 'records/good.jsonl' does not exist" in problem.message
