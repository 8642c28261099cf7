"""The case file as written: every key it may hold, before defaults are merged in.

Each model refuses unknown keys. Numbers, booleans and counts are strict (`trials: "3"` or
`gate: 1` are refused rather than guessed at); durations go through `parse_duration`.
Check params stay raw here: they are validated against the check registry on resolution.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from sounding.spec._duration import parse_duration


def _one_or_many(value: object) -> object:
    """`user: "hi"` and `prepare: "make"` mean a list of one."""
    return [value] if isinstance(value, str) else value


Count = Annotated[int, Field(strict=True, ge=1)]
Weight = Annotated[float, Field(strict=True, ge=0.0)]
Fraction = Annotated[float, Field(strict=True, ge=0.0, le=1.0)]
Flag = Annotated[bool, Field(strict=True)]
Duration = Annotated[float, BeforeValidator(parse_duration), Field(gt=0.0)]
Amount = Annotated[float, Field(gt=0.0)]  # of a resource a trial holds while it runs
Texts = Annotated[list[str], BeforeValidator(_one_or_many)]


class Aggregation(StrEnum):
    """What gates a scenario (`scoring.replica_aggregation`)."""

    ALL = "all"  # every trial passed: pass^k
    ANY = "any"  # at least one passed: pass@k
    MAJORITY = "majority"  # more than half passed
    MEAN = "mean"  # the mean composite reaches the pass threshold


class _Raw(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RawDefaults(_Raw):
    """`defaults:` for every scenario of the case; a scenario may set each of them too."""

    trials: Count | None = None
    timeout: Duration | None = None
    check_timeout: Duration | None = None


class RawWorkspace(_Raw):
    fixture: str | None = None
    repo: str | None = None
    ref: str | None = None
    given: dict[str, str] | None = None
    byproducts: list[str] | None = None
    artefacts: list[str] | None = None  # the old name of `byproducts`


class RawScoring(_Raw):
    pass_threshold: Fraction | None = None
    replica_aggregation: Aggregation | None = None
    k: Count | None = None


class RawInvariant(_Raw):
    description: str | None = None
    weight: Weight = 1.0
    gate: Flag = False
    check: dict[str, Any]


class RawService(BaseModel):
    """A service is kept as written for the services layer; only its name and type are read."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    type: str


class RawStandIn(_Raw):
    """`reference:` or an item of `broken:`: what plays the agent in `sounding audit` (a
    command, a Python callable `module:function`, or a stored record), one of them."""

    command: str | None = None
    callable: str | None = None
    record: str | None = None


class RawBlock(_Raw):
    """What a case and each of its scenarios may both say; the scenario's wins or adds."""

    workspace: RawWorkspace | None = None
    scoring: RawScoring | None = None
    invariants: dict[str, RawInvariant] = Field(default_factory=dict)
    expect: list[Any] = Field(default_factory=list)
    leads: list[Any] = Field(default_factory=list)
    forbidden: dict[str, Any] = Field(default_factory=dict)
    test_command: str | None = None
    prepare: Texts | None = None
    env: dict[str, str] = Field(default_factory=dict)
    resources: dict[str, Amount] = Field(default_factory=dict)  # on Ray: `GPU`, a licence...
    allow_exit: list[int] | None = None
    reference: RawStandIn | None = None
    broken: list[RawStandIn] = Field(default_factory=list)


class RawSimulation(_Raw):
    """`simulate:` a user played by the `[simulator]` model, after the fixed turns."""

    persona: str = ""
    goal: str
    knows: dict[str, str | int | float | bool] = Field(default_factory=dict)
    max_turns: Annotated[int, Field(strict=True, ge=1, le=100)] = 10


class RawTurn(_Raw):
    """One item of `user`: a fixed turn (`"text"`, short for `say: text`), or `simulate:`."""

    say: str | None = None
    simulate: RawSimulation | None = None

    @model_validator(mode="before")
    @classmethod
    def _text(cls, value: object) -> object:
        return {"say": value} if isinstance(value, str) else value


Turns = Annotated[list[RawTurn], BeforeValidator(_one_or_many)]


class RawScenario(RawBlock, RawDefaults):
    id: str
    user: Turns | None = None


class RawCase(RawBlock):
    version: int = 1
    defaults: RawDefaults = Field(default_factory=RawDefaults)
    services: list[RawService] = Field(default_factory=list)
    validators: list[dict[str, Any]] = Field(default_factory=list)
    scenarios: list[RawScenario]
