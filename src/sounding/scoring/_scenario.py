"""Verdicts over trials: pass@k, pass^k (at one k and at every k), pass / flaky / fail / error."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from math import comb, fsum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, computed_field, model_validator

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


def pass_at_curve(n: int, c: int) -> list[float]:
    """pass@k for every k from 1 to n (item k−1 is pass@k); empty when n is 0.

    Exact integer binomials, one `pass_at_k` per k: no sampling, O(n) per k."""
    return [pass_at_k(n, c, k) for k in range(1, n + 1)]


def pass_hat_curve(n: int, c: int) -> list[float]:
    """pass^k for every k from 1 to n (item k−1 is pass^k); empty when n is 0."""
    return [pass_hat_k(n, c, k) for k in range(1, n + 1)]


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

    @model_validator(mode="before")
    @classmethod
    def _without_curves(cls, data: Any) -> Any:
        """The curves are derived from the counts, never read: a dumped result reads back."""
        if isinstance(data, dict):
            return {key: v for key, v in data.items() if key not in ("pass_at", "pass_hat")}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def pass_at(self) -> list[float]:
        """pass@k for k = 1 … n judged trials, item k−1 being pass@k. Derived from `passed`
        and `failed`, so a summary written before it existed reads with it all the same."""
        return pass_at_curve(self.passed + self.failed, self.passed)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def pass_hat(self) -> list[float]:
        """pass^k for k = 1 … n judged trials, item k−1 being pass^k."""
        return pass_hat_curve(self.passed + self.failed, self.passed)


class CurvePoint(BaseModel):
    """One k of a curve over several scenarios: the mean pass@k and pass^k over the
    `scenarios` that had at least k judged trials."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k: int
    scenarios: int
    pass_at: float
    pass_hat: float


def mean_curve(results: Iterable[ScenarioResult]) -> list[CurvePoint]:
    """The mean pass@k and pass^k over scenarios, for every k some scenario reached: each
    scenario counts at the k its judged trials allow, so a point averages only the scenarios
    with at least k judged trials (tau-bench's pass^k is this mean)."""
    curves = [(r.pass_at, r.pass_hat) for r in results]
    longest = max((len(at) for at, _ in curves), default=0)
    return [_point(k, [c for c in curves if len(c[0]) >= k]) for k in range(1, longest + 1)]


def _point(k: int, curves: list[tuple[list[float], list[float]]]) -> CurvePoint:
    return CurvePoint(
        k=k,
        scenarios=len(curves),
        pass_at=fsum(at[k - 1] for at, _ in curves) / len(curves),
        pass_hat=fsum(hat[k - 1] for _, hat in curves) / len(curves),
    )


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
    scores: Iterable[Scored],
    *,
    aggregation: Aggregation = Aggregation.ALL,
    threshold: float = 1.0,
    k: int | None = None,
) -> ScenarioResult:
    """Combine trial verdicts. An error trial leaves the verdict open unless it could not
    change it (the verdict is the same whether the errored trials passed or failed)."""
    tally = Tally()
    for score in scores:
        tally.add(score.verdict, score.composite)
    return tally.result(aggregation=aggregation, threshold=threshold, k=k)


@dataclass
class Tally:
    """A scenario's trials counted as they finish: all that its verdict needs of them."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    composite_sum: float = 0.0
    composites: int = 0

    def add(self, verdict: TrialVerdict, composite: float | None) -> None:
        if verdict is TrialVerdict.ERROR:
            self.errors += 1
            return
        self.passed += verdict is TrialVerdict.PASS
        self.failed += verdict is not TrialVerdict.PASS
        if composite is not None:
            self.composite_sum += composite
            self.composites += 1

    def result(
        self, *, aggregation: Aggregation = Aggregation.ALL, threshold: float = 1.0, k: int | None
    ) -> ScenarioResult:
        n, c, errors = self.passed + self.failed, self.passed, self.errors
        size = min(k or n, n) if n else None
        mean = self.composite_sum / self.composites if self.composites else None
        verdict = _verdict(n, c)
        if errors and _verdict(n + errors, c) is not _verdict(n + errors, c + errors):
            verdict = ScenarioVerdict.ERROR
        return ScenarioResult(
            trials=n + errors,
            passed=c,
            failed=n - c,
            errors=errors,
            k=size,
            pass_at_k=pass_at_k(n, c, size) if size else None,
            pass_hat_k=pass_hat_k(n, c, size) if size else None,
            verdict=verdict,
            gate=errors == 0 and _gate(aggregation, n, c, mean, threshold),
            aggregation=aggregation,
            mean_composite=mean,
        )
