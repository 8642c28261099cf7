"""TOML specifics: the scanner finds lines through every way TOML can write a table."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from sounding.spec import Case, SpecError

Load = Callable[[str, str], Case]


def _only(load: Load, text: str) -> tuple[int | None, str]:
    with pytest.raises(SpecError) as caught:
        load("case.toml", textwrap.dedent(text))
    (problem,) = caught.value.problems
    return problem.line, problem.key


def test_lines_survive_multiline_strings_and_comments(load: Load) -> None:
    text = '''\
        # a comment with [brackets] and key = "value"
        [[scenarios]]
        id = "a"
        user = """
        First line of a long task,
        with "quotes" and [brackets] = inside.
        """
        test_command = 'pytest -q'  # trailing comment

        [[scenarios]]
        id = "b"
        user = \'\'\'
        literal
        \'\'\'
        trials = 0
        '''
    assert _only(load, text) == (15, "scenarios[1].trials")


def test_tables_under_the_second_array_item_are_found(load: Load) -> None:
    text = """\
        [[scenarios]]
        id = "a"
        user = "hi"

        [[scenarios]]
        id = "b"
        user = "hi"

        [[scenarios.expect]]
        no_error = true

        [[scenarios.expect]]
        tool_called = { name = "lookup" }

        [[scenarios.expect]]
        file_exists = { path = "../x" }
        """
    assert _only(load, text) == (16, "scenarios[1].expect[2].file_exists.path")


def test_dotted_and_quoted_keys_are_followed(load: Load) -> None:
    text = """\
        [[scenarios]]
        id = "a"
        user = "hi"
        scoring.pass_threshold = 0.5
        "scoring".k = 0
        """
    assert _only(load, text) == (5, "scenarios[0].scoring.k")


def test_items_of_a_multiline_array_have_their_own_lines(load: Load) -> None:
    text = """\
        [[scenarios]]
        id = "a"
        user = [
          "first turn",
          "second turn",
          "",
        ]
        """
    assert _only(load, text) == (6, "scenarios[0].user[2]")


def test_a_key_inside_a_multiline_inline_value_is_found(load: Load) -> None:
    text = """\
        [[scenarios]]
        id = "a"
        user = "hi"
        expect = [
          { tool_called = { name = "lookup", args = { id = 7 } } },
          { tool_called = { name = "lookup", argz = { id = 8 } } },
        ]
        """
    assert _only(load, text) == (6, "scenarios[0].expect[1].tool_called.argz")


def test_a_sub_table_of_a_named_invariant_is_found(load: Load) -> None:
    text = """\
        [[scenarios]]
        id = "a"
        user = "hi"

        [invariants."tests pass"]
        weight = 1

        [invariants."tests pass".check]
        type = "command_exit"
        command = "make test"
        exit_code = "zero"
        """
    assert _only(load, text) == (11, 'invariants["tests pass"].check.exit_code')
