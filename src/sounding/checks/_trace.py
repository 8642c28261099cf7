"""Assertions on the run record: which tools were called, in what order, and the answer.

Positions of calls are counted from 1 in the order the calls were made (`call #2`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from sounding._words import counted
from sounding.checks._base import CheckContext, CheckResult, NoParams, Params, cut, numbered, shown
from sounding.checks._fields import Name, Names, Regex, matches
from sounding.checks._registry import registry
from sounding.record import RunRecord, ToolCall

FAMILY = "trace"
NO_ANSWER = "there was no final answer"
_ABSENT = object()  # an expected key the args lack


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _positions(record: RunRecord, name: str) -> list[int]:
    return [position for position, _ in numbered(record, name)]


def _at(positions: Sequence[int]) -> str:
    """`call #2` or `calls #1, #4`: where calls stood, for a reason."""
    numbers = ", ".join(f"#{p}" for p in positions[:5]) + (", ..." if len(positions) > 5 else "")
    return f"{'call' if len(positions) == 1 else 'calls'} {numbers}"


# ---- tool calls ------------------------------------------------------------------------


class ToolCalledParams(Params):
    """A tool, and optionally arguments its call must include (a subset match)."""

    name: Name
    args: dict[str, Any] | None = None


def _mismatch(expected: Any, actual: Any, path: str) -> str | None:
    """Where `actual` does not include `expected`, as `path: expected X, got Y`; None if it does.

    Mappings match when every expected key is present and matches; lists when they have the
    same length and match item by item; anything else when equal (a bool only equals a bool).
    """
    if actual is _ABSENT:
        return f"{path} is missing"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path} is {shown(actual)}, expected an object"
        inner = [(f"{path}.{k}", want, actual.get(k, _ABSENT)) for k, want in expected.items()]
    elif isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{path} is {shown(actual)}, expected {shown(expected)}"
        inner = [(f"{path}[{i}]", want, actual[i]) for i, want in enumerate(expected)]
    else:
        same = isinstance(expected, bool) == isinstance(actual, bool) and expected == actual
        return None if same else f"{path} is {shown(actual)}, expected {shown(expected)}"
    return next(filter(None, (_mismatch(want, got, where) for where, want, got in inner)), None)


@registry.check("tool_called", ToolCalledParams, family=FAMILY, shorthand="name")
def tool_called(params: ToolCalledParams, context: CheckContext) -> CheckResult:
    """The tool was called at least once, with arguments including `args` when given."""
    calls = numbered(context.evidence.record, params.name)
    if not calls:
        return CheckResult.failed(f"tool '{params.name}' was never called")
    expected = params.args
    if expected is None:
        return CheckResult.passed(f"tool '{params.name}' was called {_times(len(calls))}")
    if any(_mismatch(expected, call.args, "args") is None for _, call in calls):
        return CheckResult.passed(f"tool '{params.name}' was called with the expected args")
    where, closest = min(calls, key=lambda pair: _distance(expected, pair[1]))
    return CheckResult.failed(
        f"tool '{params.name}' was never called with the expected args: "
        f"on the closest call (#{where}) {_mismatch(expected, closest.args, 'args')}",
        closest_call=where,
    )


def _distance(expected: dict[str, Any], call: ToolCall) -> int:
    """How many expected top-level args the call got wrong (for naming the closest call)."""
    return sum(bool(_mismatch(want, call.args.get(key), "")) for key, want in expected.items())


class ToolNameParams(Params):
    name: Name


@registry.check("tool_not_called", ToolNameParams, family=FAMILY, shorthand="name")
def tool_not_called(params: ToolNameParams, context: CheckContext) -> CheckResult:
    """The tool was never called."""
    positions = _positions(context.evidence.record, params.name)
    if positions:
        return CheckResult.failed(
            f"tool '{params.name}' was called {_times(len(positions))} ({_at(positions)})"
        )
    return CheckResult.passed(f"tool '{params.name}' was never called")


class ToolOrderParams(Params):
    first: Name
    then: Name


@registry.check("tool_order", ToolOrderParams, family=FAMILY)
def tool_order(params: ToolOrderParams, context: CheckContext) -> CheckResult:
    """Some call of `first` came before some call of `then`."""
    record = context.evidence.record
    firsts, thens = _positions(record, params.first), _positions(record, params.then)
    for name, positions in ((params.first, firsts), (params.then, thens)):
        if not positions:
            return CheckResult.failed(f"tool '{name}' was never called")
    if firsts[0] < thens[-1]:
        return CheckResult.passed(
            f"tool '{params.first}' (#{firsts[0]}) was called before '{params.then}' (#{thens[-1]})"
        )
    return CheckResult.failed(
        f"tool '{params.then}' ({_at(thens)}) was never called after "
        f"'{params.first}' ({_at(firsts)})"
    )


class CountParams(Params):
    """A number of calls, of one tool or (without `name`) of all tools."""

    name: Name | None = None
    count: int = Field(ge=0)


def _counted(params: CountParams, record: RunRecord) -> tuple[int, str]:
    if params.name is None:
        n = len(record.tool_calls)
        return n, f"{counted(n, 'tool call')} {'was' if n == 1 else 'were'} made"
    n = len(record.calls(params.name))
    return n, f"tool '{params.name}' was called {_times(n)}"


@registry.check("min_tool_calls", CountParams, family=FAMILY)
def min_tool_calls(params: CountParams, context: CheckContext) -> CheckResult:
    """At least `count` calls were made (of `name`, or of any tool)."""
    n, said = _counted(params, context.evidence.record)
    return CheckResult.verdict(n >= params.count, f"{said}, at least {params.count} expected")


@registry.check("max_tool_calls", CountParams, family=FAMILY)
def max_tool_calls(params: CountParams, context: CheckContext) -> CheckResult:
    """At most `count` calls were made (of `name`, or of any tool)."""
    n, said = _counted(params, context.evidence.record)
    return CheckResult.verdict(n <= params.count, f"{said}, at most {params.count} allowed")


class ResultContainsParams(Params):
    name: Name
    substring: Name


@registry.check("result_contains", ResultContainsParams, family=FAMILY)
def result_contains(params: ResultContainsParams, context: CheckContext) -> CheckResult:
    """Some result of the tool contains the substring."""
    calls = numbered(context.evidence.record, params.name)
    if not calls:
        return CheckResult.failed(f"tool '{params.name}' was never called")
    for where, call in calls:
        if params.substring in (call.result or ""):
            return CheckResult.passed(
                f"the result of tool '{params.name}' (#{where}) contains '{params.substring}'"
            )
    return CheckResult.failed(
        f"no result of tool '{params.name}' (called {_times(len(calls))}) "
        f"contains '{params.substring}'"
    )


# ---- the final answer ------------------------------------------------------------------


class AnswerTextParams(Params):
    """One text, or a list of texts."""

    text: Names


@registry.check("final_answer_contains", AnswerTextParams, family=FAMILY, shorthand="text")
def final_answer_contains(params: AnswerTextParams, context: CheckContext) -> CheckResult:
    """The final answer contains every text given (case-sensitive)."""
    answer = context.evidence.record.final_answer
    if answer is None:
        return CheckResult.failed(NO_ANSWER)
    missing = [t for t in params.text if t not in answer]
    if missing:
        return CheckResult.failed(f"the answer does not contain '{missing[0]}'", missing=missing)
    return CheckResult.passed("the answer contains every expected text")


@registry.check("final_answer_not_contains", AnswerTextParams, family=FAMILY, shorthand="text")
def final_answer_not_contains(params: AnswerTextParams, context: CheckContext) -> CheckResult:
    """The final answer contains none of the texts given (case-sensitive)."""
    answer = context.evidence.record.final_answer or ""
    found = [t for t in params.text if t in answer]
    if found:
        return CheckResult.failed(f"the answer contains '{found[0]}'", found=found)
    return CheckResult.passed("the answer contains none of the unwanted texts")


class MaxCharsParams(Params):
    max: int = Field(ge=0)


@registry.check("final_answer_max_chars", MaxCharsParams, family=FAMILY, shorthand="max")
def final_answer_max_chars(params: MaxCharsParams, context: CheckContext) -> CheckResult:
    """The final answer is at most `max` characters long (no answer counts as 0)."""
    size = len(context.evidence.record.final_answer or "")
    return CheckResult.verdict(
        size <= params.max, f"the answer has {size} characters, at most {params.max} allowed"
    )


class MinCharsParams(Params):
    min: int = Field(ge=0)


@registry.check("final_answer_min_chars", MinCharsParams, family=FAMILY, shorthand="min")
def final_answer_min_chars(params: MinCharsParams, context: CheckContext) -> CheckResult:
    """The final answer is at least `min` characters long."""
    answer = context.evidence.record.final_answer
    if answer is None:
        return CheckResult.failed(NO_ANSWER)
    return CheckResult.verdict(
        len(answer) >= params.min,
        f"the answer has {len(answer)} characters, at least {params.min} expected",
    )


class PatternParams(Params):
    """A regular expression, searched anywhere in the text (`^`/`$` match at each line)."""

    pattern: Regex


@registry.check("final_answer_matches", PatternParams, family=FAMILY, shorthand="pattern")
def final_answer_matches(params: PatternParams, context: CheckContext) -> CheckResult:
    """The pattern is found in the final answer."""
    answer = context.evidence.record.final_answer
    if answer is None:
        return CheckResult.failed(NO_ANSWER)
    found = bool(matches(params.pattern, answer, context.timeout))
    said = "matches" if found else "has no match for"
    return CheckResult.verdict(found, f"the answer {said} pattern '{params.pattern}'")


# ---- hooks and errors ------------------------------------------------------------------


class HookParams(Params):
    """A hook that must have run, and optionally the decision it must have made once."""

    name: Name
    decision: Name | None = None


@registry.check("hook_called", HookParams, family=FAMILY, shorthand="name")
def hook_called(params: HookParams, context: CheckContext) -> CheckResult:
    """The hook ran, and when `decision` is given, decided that at least once."""
    runs = [h for h in context.evidence.record.hooks if h.name == params.name]
    if not runs:
        return CheckResult.failed(f"hook '{params.name}' never ran")
    if params.decision is None:
        return CheckResult.passed(f"hook '{params.name}' ran {_times(len(runs))}")
    decisions = [h.decision for h in runs]
    if params.decision in decisions:
        return CheckResult.passed(f"hook '{params.name}' decided '{params.decision}'")
    said = ", ".join(sorted({str(d) for d in decisions}))
    return CheckResult.failed(
        f"hook '{params.name}' ran {_times(len(runs))} but never decided "
        f"'{params.decision}' (decided: {said})"
    )


@registry.check("no_error", NoParams, family=FAMILY)
def no_error(params: NoParams, context: CheckContext) -> CheckResult:
    """The run finished without an error."""
    error = context.evidence.record.error
    if error is None:
        return CheckResult.passed("the run finished without an error")
    first = (error.strip().splitlines() or [""])[0]
    return CheckResult.failed(f"the run ended with an error: {cut(first, 120)}", error=error)
