"""What every check shares: its result, the evidence it reads, the context it runs in, and
how its reasons quote values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from sounding._secrets import redact
from sounding.record import RunRecord, ToolCall
from sounding.services import ServiceEvidence

if TYPE_CHECKING:
    from sounding.judge import Verdict, VerdictRequest


class Status(StrEnum):
    """The four outcomes of a check, never conflated, and `skipped` for a check not run."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    UNJUDGED = "unjudged"
    SKIPPED = "skipped"


class CheckResult(BaseModel):
    """What one check found. `score` is in [0, 1]; it means nothing unless judged."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Status
    score: float = Field(default=0.0, ge=0.0, le=1.0)
    reason: str = ""
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def judged(self) -> bool:
        return self.status in (Status.PASSED, Status.FAILED)

    @classmethod
    def passed(cls, reason: str = "", score: float = 1.0, **details: Any) -> CheckResult:
        return cls(status=Status.PASSED, score=score, reason=reason, details=details)

    @classmethod
    def failed(cls, reason: str, score: float = 0.0, **details: Any) -> CheckResult:
        return cls(status=Status.FAILED, score=score, reason=reason, details=details)

    @classmethod
    def verdict(cls, ok: bool, reason: str, **details: Any) -> CheckResult:
        """Pass or fail a yes/no check; the reason is kept either way."""
        return cls.passed(reason, **details) if ok else cls.failed(reason, **details)

    @classmethod
    def error(cls, reason: str, **details: Any) -> CheckResult:
        return cls(status=Status.ERROR, reason=reason, details=details)

    @classmethod
    def unjudged(cls, reason: str, **details: Any) -> CheckResult:
        return cls(status=Status.UNJUDGED, reason=reason, details=details)

    @classmethod
    def skipped(cls, reason: str) -> CheckResult:
        return cls(status=Status.SKIPPED, reason=reason)


class Params(BaseModel):
    """Base of every check's parameters: unknown keys are refused when the suite loads."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoParams(Params):
    """For checks that take nothing (`no_error: true`)."""


@dataclass(frozen=True)
class Evidence:
    """Everything a check may read about one trial. Checks never change any of it."""

    record: RunRecord
    workspace: Path | None = None
    touched: frozenset[str] | None = None
    byproducts: frozenset[str] = frozenset()
    diff: str | None = None
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None  # the agent's last exit status; None when not known
    services: Mapping[str, ServiceEvidence] = field(default_factory=dict)
    scenario_id: str = ""
    trial: int = 0
    cell: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    secrets: Mapping[str, str] = field(default_factory=dict)  # name -> value, see `blind`

    def blind(self, text: str) -> str:
        """`text` as a judge may read it: the trial's secrets as their markers, as the stored
        trial holds them. Its reasoning and its cache cannot hold one, and re-scoring the
        stored trial asks the judge the same question."""
        return redact(text, self.secrets)


class Judge(Protocol):
    """The judge model as checks see it; `sounding.judge.JudgeClient` is the real one."""

    def verdict(self, request: VerdictRequest) -> Verdict:
        """One forced call of the request's verdict tool; JudgeError when none comes back."""
        ...

    def text(self, prompt: str) -> str:
        """A plain-text answer to `prompt` (what a grader's `t.llm` asks)."""
        ...


@dataclass(frozen=True)
class CheckContext:
    """How a check runs: its evidence, its name in the case, its time limit, the suite."""

    evidence: Evidence
    name: str = ""
    timeout: float = 30.0
    suite_dir: Path | None = None
    judge: Judge | None = None
    expect: Sequence[tuple[str, Params]] = ()  # the scenario's expect checks, for graders


def cut(text: str, limit: int) -> str:
    """`text`, shortened to `limit` characters and marked `...` when longer."""
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def shown(value: Any, limit: int = 60) -> str:
    """A value as a reason quotes it: its repr, shortened."""
    return cut(repr(value), limit)


def numbered(record: RunRecord, name: str) -> list[tuple[int, ToolCall]]:
    """The calls of tool `name` with their positions among all calls, counted from 1."""
    return [(i, call) for i, call in enumerate(record.tool_calls, start=1) if call.name == name]


def service_of(evidence: Evidence, name: str, kind: str) -> ServiceEvidence | CheckResult:
    """The trial's `kind` service called `name`, or the error that names those it has."""
    service = evidence.services.get(name)
    if service is not None and service.type == kind:
        return service
    known = ", ".join(sorted(n for n, s in evidence.services.items() if s.type == kind))
    return CheckResult.error(
        f"no {kind} service '{name}' in this trial ({kind} services: {known or 'none'}); "
        "declare it under services: or fix the name"
    )
