"""One registry resolves every check name: invariant checks, assertions and rules alike."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Flag, StrEnum, auto
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from sounding._words import closest_match
from sounding.checks._base import CheckContext, CheckResult, Params

P = TypeVar("P", bound=Params)
CheckFunction = Callable[[P, CheckContext], CheckResult]
InSuite = Callable[[Path], Callable[[P], None]]
"""A load-time check of params against the suite folder: given the folder, a function that
raises `Refused` for params that cannot work there (a grader the suite does not hold)."""


class Role(StrEnum):
    """Where a check type may stand in a case file."""

    CHECK = "check"  # an invariant's `check:` and an `expect:` / `leads:` entry
    FORBIDDEN = "forbidden"  # a key of `forbidden:`


class Reads(Flag):
    """The evidence a check reads besides the record; the runner makes a callable agent's
    empty workspace before it runs only for a check that reads the workspace folder."""

    RECORD = 0  # the record alone: the run record, stdout, stderr, touched files, metrics
    SERVICES = auto()  # what the trial's services recorded
    WORKSPACE = auto()  # the final workspace folder: its files, or a command run in it


@dataclass
class Refused(ValueError):
    """Params that cannot work in the suite they were loaded from, found when it loads:
    the param at fault (`field`), what it could name (`allowed`) and the name given."""

    message: str
    field: str | None = None
    allowed: Sequence[str] = ()
    typo: str | None = None

    def __str__(self) -> str:
        return self.message


class UnknownCheckError(LookupError):
    """A check name that no family registered; says what is known and the closest name."""

    def __init__(self, name: str, role: Role, known: list[str]) -> None:
        self.name, self.role, self.known = name, role, known
        self.closest = closest_match(name, known)
        hint = f"; did you mean '{self.closest}'?" if self.closest else ""
        kind = "check type" if role is Role.CHECK else "forbidden rule"
        super().__init__(f"unknown {kind} '{name}'{hint} (known: {', '.join(known)})")


@dataclass(frozen=True)
class CheckType(Generic[P]):
    """A registered check: its name, its params model, the function that measures, and
    the traits the loader, the runner and the scorer go by."""

    name: str
    params: type[P]
    function: CheckFunction[P]
    family: str
    role: Role
    shorthand: str | None
    summary: str
    reads: Reads = Reads.RECORD
    costly: bool = False  # run only when its verdict can still change the trial's
    needs_judge: bool = False  # a run without a judge is refused before any trial
    in_suite: InSuite[P] | None = None
    graded: bool = False  # its score may lie anywhere from 0 to 1, not only at 0 or 1

    def parse(self, raw: Any) -> P:
        """Validate raw params; a scalar goes to the `shorthand` field."""
        if isinstance(raw, Mapping):
            return self.params.model_validate(raw)
        if self.shorthand is not None:
            return self.params.model_validate({self.shorthand: raw})
        if raw is True or raw is None:
            return self.params.model_validate({})
        raise ValidationError.from_exception_data(
            self.params.__name__, [{"type": "dict_type", "loc": (), "input": raw}]
        )

    def run(self, params: P, context: CheckContext) -> CheckResult:
        return self.function(params, context)


class Registry:
    """The one place check names resolve. Families register with `@registry.check(...)`."""

    def __init__(self) -> None:
        self._types: dict[tuple[Role, str], CheckType[Any]] = {}

    def check(
        self,
        name: str,
        params: type[P],
        *,
        family: str,
        reads: Reads = Reads.RECORD,
        costly: bool = False,
        needs_judge: bool = False,
        role: Role = Role.CHECK,
        shorthand: str | None = None,
        in_suite: InSuite[P] | None = None,
        graded: bool = False,
    ) -> Callable[[CheckFunction[P]], CheckFunction[P]]:
        """Register a check function under `name` with its traits; a second registration is
        refused. `reads` says what evidence it reads, `costly` that it runs last and only
        when it can still change the verdict, `needs_judge` that it cannot run without one,
        `in_suite` what to check against the suite folder when the suite loads, `graded`
        that its score may lie between 0 and 1 (a judge's score)."""

        def register(function: CheckFunction[P]) -> CheckFunction[P]:
            key = (role, name)
            if key in self._types:
                raise ValueError(f"check '{name}' is registered twice")
            if shorthand is not None and shorthand not in params.model_fields:
                raise ValueError(f"check '{name}': shorthand '{shorthand}' is not a param")
            summary = (function.__doc__ or "").strip().partition("\n")[0]
            traits = (reads, costly, needs_judge, in_suite, graded)
            self._types[key] = CheckType(
                name, params, function, family, role, shorthand, summary, *traits
            )
            return function

        return register

    def get(self, name: str, role: Role = Role.CHECK) -> CheckType[Any]:
        try:
            return self._types[(role, name)]
        except KeyError:
            raise UnknownCheckError(name, role, self.names(role)) from None

    def names(self, role: Role = Role.CHECK) -> list[str]:
        return sorted(n for r, n in self._types if r is role)

    def __iter__(self) -> Iterator[CheckType[Any]]:
        return iter(sorted(self._types.values(), key=lambda t: (t.role, t.name)))


registry = Registry()
"""The registry every family registers into and every case file resolves against."""
