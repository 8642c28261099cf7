"""The resolved shape of a case file: what the loader hands to the runner and the scorer.

These models are the contract between `sounding.spec` and everything after it. Raw YAML or
TOML is validated into them by `sounding.spec.load_case`; nothing else builds them from
user input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from sounding.checks import CheckType, Params
from sounding.checks import Role as CheckRole
from sounding.spec._raw import Aggregation
from sounding.spec._validators import MetricKind, ValidatorSpec


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)


class CheckSpec(_Frozen):
    """A check type resolved against the registry, with its validated params."""

    type: str
    params: SerializeAsAny[Params]  # dumped by their own check's model, not the empty base
    role: CheckRole = CheckRole.CHECK
    line: int | None = None
    check_type: CheckType[Any] = Field(exclude=True, repr=False)


class Invariant(_Frozen):
    """A weighed check. `unvalidated_judge` is never written in a case file: a run sets it
    (why) on a judge check whose agreement with people does not allow it to gate."""

    name: str
    description: str
    weight: float = Field(default=1.0, ge=0.0)
    gate: bool = False
    check: CheckSpec
    unvalidated_judge: str = ""


class Assertion(_Frozen):
    """An `expect:` or `leads:` entry; `name` reads like `expect[2] tool_called`.
    `unvalidated_judge` as for an invariant."""

    name: str
    check: CheckSpec
    unvalidated_judge: str = ""


class Scoring(_Frozen):
    pass_threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    replica_aggregation: Aggregation = Aggregation.ALL
    k: int | None = Field(default=None, ge=1)


class Workspace(_Frozen):
    """Where a trial's workspace comes from, relative to the suite's folder."""

    fixture: str | None = None
    repo: str | None = None
    ref: str | None = None
    given: dict[str, str] = Field(default_factory=dict)
    byproducts: list[str] = Field(default_factory=list)  # globs of files checks ignore


class Simulation(_Frozen):
    """A user played by the `[simulator]` model once the fixed turns are said: who it is,
    what it wants, the facts it may give, and how many turns it may take."""

    persona: str = ""
    goal: str
    knows: dict[str, str | int | float | bool] = Field(default_factory=dict)
    max_turns: int = Field(default=10, ge=1, le=100)


class StandIn(_Frozen):
    """What plays the agent when `sounding audit` proves a scenario: a command (run as the
    suite's agent is), a Python callable `module:function`, or a stored record (a path of
    the suite folder, scored as `sounding score --record` scores it). One of the three."""

    command: str | None = None
    callable: str | None = None
    record: str | None = None
    line: int | None = None  # of its key in the case file

    @property
    def kind(self) -> str:
        """`command`, `callable` or `record`: the one it sets."""
        return "command" if self.command else "callable" if self.callable else "record"

    @property
    def target(self) -> str:
        """The command, the callable's name, or the record's path, as written."""
        return self.command or self.callable or self.record or ""

    def __str__(self) -> str:
        return f"{self.kind} {self.target}"


class Scenario(_Frozen):
    """One task and what to check, with case-level defaults already merged in."""

    id: str
    user: list[str]  # the fixed turns
    simulate: Simulation | None = None  # then a simulated user, when the scenario has one
    trials: int = Field(default=1, ge=1)
    timeout: float = Field(default=600.0, gt=0)
    check_timeout: float = Field(default=30.0, gt=0)
    invariants: list[Invariant] = Field(default_factory=list)
    expect: list[Assertion] = Field(default_factory=list)
    leads: list[Assertion] = Field(default_factory=list)
    forbidden: list[Assertion] = Field(default_factory=list)
    scoring: Scoring = Field(default_factory=Scoring)
    workspace: Workspace = Field(default_factory=Workspace)
    test_command: str | None = None
    prepare: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    resources: dict[str, float] = Field(default_factory=dict)  # held per trial on Ray
    allow_exit: list[int] = Field(default_factory=list)  # exit statuses that are no failure
    reference: StandIn | None = None  # what solves it, for `sounding audit`
    broken: list[StandIn] = Field(default_factory=list)  # what must fail it, for the audit
    line: int | None = None


class JudgeCheck(NamedTuple):
    """A judge verdict of a case that people can check on a form (`checks:` of a form
    validator names it): a check that asks the judge, or a judge validator's metric."""

    name: str  # the check's name (scenarios' checks of one name pooled), or the metric's
    validator: str | None = None  # the judge validator declaring the metric; None: a check
    kind: MetricKind | None = None  # the metric's kind; a check has pass/fail and a score


class Case(_Frozen):
    """One case file: scenarios that share defaults, services and a workspace."""

    path: Path
    name: str
    version: int = 1
    scenarios: list[Scenario]
    services: list[dict[str, Any]] = Field(default_factory=list)
    validators: list[ValidatorSpec] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # what loads but should be changed

    def scenario(self, scenario_id: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.id == scenario_id:
                return scenario
        known = ", ".join(s.id for s in self.scenarios)
        raise KeyError(f"{self.path}: no scenario '{scenario_id}' (scenarios: {known})")

    def judge_checks(self) -> dict[str, JudgeCheck]:
        """Every judge verdict of the case by name (see `judge_checks`)."""
        return judge_checks(self.scenarios, self.validators)


def judge_checks(
    scenarios: list[Scenario], validators: list[ValidatorSpec]
) -> dict[str, JudgeCheck]:
    """The checks that ask the judge (by their invariant or `expect` names), then the
    metrics of the judge validators."""
    found: dict[str, JudgeCheck] = {}
    for scenario in scenarios:
        items: list[Invariant | Assertion] = [*scenario.invariants, *scenario.expect]
        for item in items:
            if item.check.check_type.needs_judge:
                found.setdefault(item.name, JudgeCheck(item.name))
    for validator in validators:
        if validator.mode == "judge":
            for metric in validator.metrics:
                found.setdefault(metric, JudgeCheck(metric, validator.name, validator.kind(metric)))
    return found
