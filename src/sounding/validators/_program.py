"""`@validator`: a function of a `Run` that returns metrics, made into a program.

The function returns `{name: value}`. A value is a bare value (bool, number, anything
JSON), a `Metric(value, reason)`, `Metric.unjudged(reason)`, or a function of no arguments
that returns one of those. The decorator calls such a function itself, so a `CannotJudge`
it raises makes only that metric unjudged — write `"tests": run.tests`, not
`"tests": run.tests()`, and one unanswerable metric does not take the others with it.
"""

from __future__ import annotations

import functools
import json
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from sounding.validators._run import CannotJudge, ContextError, Run

Produce = Callable[[Run], Mapping[str, Any]]


@dataclass(frozen=True)
class Metric:
    """A metric's value with the reason it has it; `Metric.unjudged(reason)` when none can.

    An empty reason is dropped: attach one where it explains something (a failure).
    """

    value: Any = None
    reason: str = ""
    judged: bool = True

    @classmethod
    def unjudged(cls, reason: str) -> Metric:
        """This run cannot answer the metric; `reason` (required) says why."""
        if not reason.strip():
            raise ValueError("Metric.unjudged needs a reason: say why the run cannot be judged")
        return cls(None, reason, judged=False)


class ValidatorProgram:
    """What `@validator` makes of a function: call it on a `Run`, or run `.cli()`."""

    def __init__(self, function: Produce) -> None:
        self.function = function
        functools.update_wrapper(self, function)

    def __call__(self, run: Run) -> dict[str, Any]:
        """The answer, as the contract prints it: metrics, reasons, unjudged."""
        try:
            produced = self.function(run)
        except CannotJudge as exc:
            reason = _reason(exc, "the whole run")
            return {"metrics": {}, "reasons": {}, "unjudged": dict.fromkeys(run.declared, reason)}
        if not isinstance(produced, Mapping):
            raise TypeError(
                f"{self.function.__name__} returned {type(produced).__name__}: return a dict "
                "of metric names to values"
            )
        return _answer(produced)

    def cli(self, argv: Sequence[str] | None = None) -> int:
        """Read the context named by argv[1], print the answer as JSON; the exit code.

        0 answered; 1 the context could not be read or the function crashed (the
        traceback goes to stderr); 2 not called with exactly one argument.
        """
        args = list(sys.argv if argv is None else argv)
        program = args[0] if args else self.function.__name__
        if len(args) != 2:
            print(f"usage: {program} CONTEXT_JSON", file=sys.stderr)
            return 2
        try:
            text = json.dumps(self(Run(args[1])), default=_jsonable)
        except ContextError as exc:
            print(f"{program}: {exc}", file=sys.stderr)
            return 1
        except Exception:
            traceback.print_exc()
            return 1
        sys.stdout.write(text + "\n")
        return 0


def validator(function: Produce) -> ValidatorProgram:
    """Make `function(run) -> {metric: value}` a validator program (see `ValidatorProgram`)."""
    return ValidatorProgram(function)


def _answer(produced: Mapping[str, Any]) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    unjudged: dict[str, str] = {}
    for name, value in produced.items():
        try:
            found = value() if callable(value) else value
        except CannotJudge as exc:
            unjudged[name] = _reason(exc, f"metric '{name}'")
            continue
        if isinstance(found, Metric) and not found.judged:
            unjudged[name] = found.reason
            continue
        if isinstance(found, Metric):
            found, said = found.value, found.reason
            if said:
                reasons[name] = said
        metrics[name] = _plain(found)
    return {"metrics": metrics, "reasons": reasons, "unjudged": unjudged}


def _reason(exc: CannotJudge, what: str) -> str:
    return str(exc).strip() or f"{what} could not be judged (CannotJudge gave no reason)"


def _plain(value: Any) -> Any:
    """Sets become sorted lists, paths strings: a metric is printed as JSON."""
    if isinstance(value, set | frozenset):
        return sorted(_plain(item) for item in value)
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, PurePath):
        return str(value)
    return value


def _jsonable(value: Any) -> Any:
    plain = _plain(value)
    if plain is value:
        raise TypeError(f"a metric value of type {type(value).__name__} is not JSON")
    return plain
