"""YAML specifics: values read as written, lines kept through nesting, anchors and merges."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from sounding.spec import Case, SpecError

Load = Callable[[str, str], Case]


def _problems(load: Load, text: str) -> list[tuple[int | None, str, str]]:
    with pytest.raises(SpecError) as caught:
        load("case.yaml", textwrap.dedent(text))
    return [(p.line, p.key, p.message) for p in caught.value.problems]


def test_dates_and_yes_no_read_the_yaml_way_but_dates_stay_text(load: Load) -> None:
    case = load(
        "values.yaml",
        textwrap.dedent(
            """\
            invariants:
              builds: {gate: yes, weight: 0x1, check: {type: command_exit, command: make}}
            scenarios:
              - id: a
                user: hi
                workspace: {repo: shop, ref: 2024-01-01}
                env: {"on": "off"}
            """
        ),
    )
    scenario = case.scenarios[0]
    assert (scenario.invariants[0].gate, scenario.invariants[0].weight) == (True, 1.0)
    assert scenario.workspace.ref == "2024-01-01"
    assert scenario.env == {"on": "off"}


def test_a_key_written_twice_deep_inside_names_both_lines(load: Load) -> None:
    found = _problems(
        load,
        """\
        scenarios:
          - id: a
            user: hi
            expect:
              - tool_called:
                  name: lookup
                  args: {id: 7}
                  name: search
        """,
    )
    assert found == [
        (
            8,
            "scenarios[0].expect[0].tool_called.name",
            "key 'name' appears twice (first at line 6): keep one",
        )
    ]


def test_a_tag_is_refused_rather_than_built(load: Load) -> None:
    found = _problems(
        load,
        """\
        scenarios:
          - id: a
            user: !!python/object:os.system echo
        """,
    )
    assert found[0][:2] == (3, "scenarios[0].user")
    assert "unsupported YAML tag 'tag:yaml.org,2002:python/object:os.system'" in found[0][2]


def test_several_documents_are_refused(load: Load) -> None:
    found = _problems(load, "scenarios: [{id: a, user: hi}]\n---\nscenarios: []\n")
    assert found == [(2, "", "holds several documents ('---'): keep one case per file")]


def test_an_alias_to_no_anchor_is_refused_at_its_line(load: Load) -> None:
    found = _problems(load, "scenarios:\n  - id: a\n    user: *greeting\n")
    assert found[0][0] == 3
    assert "names no anchor ('&greeting')" in found[0][2]


def test_a_problem_in_a_merged_block_points_at_the_merge(load: Load) -> None:
    found = _problems(
        load,
        """\
        x-shared: &shared
          user: hi
          trails: 3
        scenarios:
          - id: a
            <<: *shared
        """,
    )
    assert found[0][:2] == (6, "scenarios[0].trails")
    assert "unknown key 'trails'" in found[0][2]


def test_a_key_that_is_not_text_is_refused(load: Load) -> None:
    found = _problems(load, "scenarios:\n  - id: a\n    user: hi\n    ? [x, y]\n    : 1\n")
    assert found == [(4, "scenarios[0]", "a key must be plain text, not a list or a mapping")]


def test_aliases_that_multiply_are_refused_but_shared_defaults_are_not(load: Load) -> None:
    laughs = ['x-l0: &l0 ["ha", "ha", "ha", "ha", "ha", "ha", "ha", "ha", "ha", "ha"]']
    laughs += [f"x-l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 6)]
    text = "\n".join(laughs) + "\nscenarios:\n  - id: a\n    user: hi\n    vars: {many: *l5}\n"
    found = _problems(load, text)
    assert found[0][0] == 5  # the line where the count passes the bound
    assert "more than ten times" in found[0][2]
    shared = "x-defaults: &d {user: hi, trials: 2, env: {A: '1', B: '2', C: '3'}}\nscenarios:\n"
    shared += "".join(f"  - {{<<: *d, id: s{i}}}\n" for i in range(3000))
    assert len(load("case.yaml", shared).scenarios) == 3000
