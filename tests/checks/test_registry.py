"""The registry: each check type's traits are declared where it registers, and kept."""

from __future__ import annotations

import pytest

from sounding.checks import (
    CheckContext,
    CheckResult,
    NoParams,
    Reads,
    Registry,
    Role,
    UnknownCheckError,
    registry,
)


def _never(params: NoParams, context: CheckContext) -> CheckResult:
    """Never runs here."""
    raise AssertionError("not run")


def test_the_traits_a_check_declares_are_on_its_type() -> None:
    own = Registry()
    own.check("slow", NoParams, family="x", reads=Reads.SERVICES, costly=True, needs_judge=True)(
        _never
    )
    slow = own.get("slow")
    assert (slow.reads, slow.costly, slow.needs_judge, slow.family) == (
        Reads.SERVICES,
        True,
        True,
        "x",
    )
    assert slow.summary == "Never runs here."


def test_a_check_that_declares_nothing_reads_the_record_alone_and_is_cheap() -> None:
    own = Registry()
    own.check("plain", NoParams, family="x")(_never)
    plain = own.get("plain")
    assert plain.reads is Reads.RECORD
    assert Reads.WORKSPACE not in plain.reads and Reads.SERVICES not in plain.reads
    assert (plain.costly, plain.needs_judge, plain.in_suite) == (False, False, None)


def test_a_second_registration_and_an_unknown_shorthand_are_refused() -> None:
    own = Registry()
    own.check("once", NoParams, family="x")(_never)
    with pytest.raises(ValueError, match="registered twice"):
        own.check("once", NoParams, family="x")(_never)
    with pytest.raises(ValueError, match="shorthand 'nope' is not a param"):
        own.check("other", NoParams, family="x", shorthand="nope")(_never)


def test_an_unknown_name_says_the_known_ones_and_the_closest() -> None:
    own = Registry()
    own.check("tool_called", NoParams, family="x")(_never)
    with pytest.raises(UnknownCheckError, match="did you mean 'tool_called'"):
        own.get("tool_caled")


def test_only_the_judges_are_costly_and_only_llm_as_judge_needs_the_judge() -> None:
    costly = sorted(t.name for t in registry if t.costly)
    assert costly == ["grader", "llm_as_judge"]
    assert [t.name for t in registry if t.needs_judge] == ["llm_as_judge"]


def test_the_checks_that_read_the_workspace_folder_are_those_that_open_it() -> None:
    """The runner makes a callable's workspace before the agent runs for these alone."""
    reading = sorted(t.name for t in registry if Reads.WORKSPACE in t.reads)
    assert reading == [
        "command_exit",
        "custom",
        "file_absent",
        "file_content",
        "file_exists",
        "llm_as_judge",
    ]
    assert all(Reads.WORKSPACE not in t.reads for t in registry if t.role is Role.FORBIDDEN)


def test_the_suite_files_a_check_names_are_checked_by_its_registration() -> None:
    hooked = sorted(t.name for t in registry if t.in_suite is not None)
    assert hooked == ["custom", "grader"]
