"""Verdicts over trials: pass@k, pass^k, pass / flaky / fail / error."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from math import comb
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from sounding.scoring._trial import TrialVerdict, reaches
from sounding.spec import Aggregation


class ScenarioVerdict(StrEnum):
    PASS = "pass"
    FLAKY = "flaky"
    FAIL = "fail"
    ERROR = "error"


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k trials drawn from n (c passing) passed: 1 − C(n−c,k)/C(n,k)."""
    _check(n, c, k)
    total = comb(n, k)
    return (total - comb(n - c, k)) / total


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Chance that all k trials drawn from n (c passing) passed: C(c,k)/C(n,k)."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


class ScenarioResult(BaseModel):
    """A scenario over its trials. Rates count judged trials only; errors stand apart."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trials: int
    passed: int
    failed: int
    errors: int
    k: int | None
    pass_at_k: float | None
    pass_hat_k: float | None
    verdict: ScenarioVerdict
    gate: bool
    aggregation: Aggregation
    mean_composite: float | None


def _verdict(n: int, c: int) -> ScenarioVerdict:
    if n == 0:
        return ScenarioVerdict.ERROR
    if c == n:
        return ScenarioVerdict.PASS
    return ScenarioVerdict.FAIL if c == 0 else ScenarioVerdict.FLAKY


def _gate(aggregation: Aggregation, n: int, c: int, mean: float | None, threshold: float) -> bool:
    if n == 0:
        return False
    if aggregation is Aggregation.ALL:
        return c == n
    if aggregation is Aggregation.ANY:
        return c >= 1
    if aggregation is Aggregation.MAJORITY:
        return 2 * c > n
    return mean is not None and reaches(mean, threshold)


class Scored(Protocol):
    """A trial as its scenario's verdict reads it: its verdict, and its composite."""

    @property
    def verdict(self) -> TrialVerdict: ...

    @property
    def composite(self) -> float | None: ...


def aggregate(
    scores: Sequence[Scored],
    *,
    aggregation: Aggregation = Aggregation.ALL,
    threshold: float = 1.0,
    k: int | None = None,
) -> ScenarioResult:
    """Combine trial verdicts. An error trial leaves the verdict open unless it could not
    change it (the verdict is the same whether the errored trials passed or failed)."""
    judged = [s for s in scores if s.verdict is not TrialVerdict.ERROR]
    n, c = len(judged), sum(s.verdict is TrialVerdict.PASS for s in judged)
    errors = len(scores) - n
    size = min(k or n, n) if n else None
    composites = [s.composite for s in judged if s.composite is not None]
    mean = sum(composites) / len(composites) if composites else None
    verdict = _verdict(n, c)
    if errors and _verdict(n + errors, c) is not _verdict(n + errors, c + errors):
        verdict = ScenarioVerdict.ERROR
    gate = errors == 0 and _gate(aggregation, n, c, mean, threshold)
    return ScenarioResult(
        trials=len(scores),
        passed=c,
        failed=n - c,
        errors=errors,
        k=size,
        pass_at_k=pass_at_k(n, c, size) if size else None,
        pass_hat_k=pass_hat_k(n, c, size) if size else None,
        verdict=verdict,
        gate=gate,
        aggregation=aggregation,
        mean_composite=mean,
    )
