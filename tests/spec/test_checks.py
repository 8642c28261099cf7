"""Checks resolved the same way wherever and however often they are written."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sounding.spec import Case, SpecError

Load = Callable[[str, str], Case]


def test_free_form_params_are_not_taken_for_workspace_paths(load: Load) -> None:
    """Only a field typed `WorkspacePath` holds a path of the workspace: a tool's `path`
    argument is what the agent was to pass, compared as written, whatever its key."""
    text = """\
scenarios:
  - id: a
    user: hi
    expect:
      - tool_called: {name: read, args: {path: /etc/passwd}}
      - tool_called: {name: read, args: {log_path: ../notes/today.txt}}
"""
    expect = load("args.yaml", text).scenarios[0].expect
    assert [entry.check.params.model_dump()["args"] for entry in expect] == [
        {"path": "/etc/passwd"},
        {"log_path": "../notes/today.txt"},
    ]


def test_a_check_written_alike_in_many_scenarios_is_refused_at_each_line(load: Load) -> None:
    scenarios = "".join(
        f"  - id: s{n}\n    user: hi\n    expect:\n      - file_exists: /tmp/out.json\n"
        for n in range(3)
    )
    with pytest.raises(SpecError) as caught:
        load("alike.yaml", f"scenarios:\n{scenarios}")
    found = [(p.line, p.key) for p in caught.value.problems]
    assert found == [(5 + 4 * n, f"scenarios[{n}].expect[0].file_exists") for n in range(3)]


def test_a_check_written_alike_in_many_scenarios_keeps_each_line(load: Load) -> None:
    scenarios = "".join(
        f"  - id: s{n}\n    user: hi\n    expect:\n      - final_answer_contains: done\n"
        for n in range(3)
    )
    case = load("alike.yaml", f"scenarios:\n{scenarios}")
    specs = [scenario.expect[0].check for scenario in case.scenarios]
    assert [spec.line for spec in specs] == [5, 9, 13]
    assert [spec.params.model_dump() for spec in specs] == [{"text": "done"}] * 3
    assert [scenario.expect[0].name for scenario in case.scenarios] == [
        "expect[0] final_answer_contains"
    ] * 3
