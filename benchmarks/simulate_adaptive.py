"""Simulation: how often `--until-decided` gives a wrong verdict, and the trials it spends,
against a fixed run of `--max-trials` trials.

    python benchmarks/simulate_adaptive.py [--scenarios 10000] [--max-trials 10]
        [--confidence 0.95] [--min-rate 0.7] [--seed 20260729]

For each true pass rate (1.0, 0.95, 0.8, 0.5, 0.2, 0.05, 0.0) it draws N scenarios, each
trial passing with that chance, and stops each scenario by `sounding.scoring.decide`, the
function the runner's schedule calls. The right verdict is PASS at 1.0, FAIL at 0.0, and
FLAKY in between; any other is wrong: PASS at 0.95 is flakiness missed. The fixed run
draws `--max-trials` trials of each scenario and calls it as its trials say. Beside each
simulated figure, the exact one, found by walking every path of outcomes `decide` allows.

Targets: a scenario at 1.0 or 0.0 is never called flaky (no differing outcome exists);
the adaptive run spends no more trials than the fixed one. No time is measured.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, field
from functools import cache

from _bench import figure, heading, target

from sounding.scoring import StopRule, decide

RATES = (1.0, 0.95, 0.8, 0.5, 0.2, 0.05, 0.0)
VERDICTS = ("pass", "flaky", "fail")


@dataclass
class Tally:
    """Verdicts and trials over the scenarios drawn at one rate."""

    verdicts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    trials: int = 0
    scenarios: int = 0

    def add(self, passed: int, failed: int) -> None:
        self.verdicts[verdict(passed, failed)] += 1
        self.trials += passed + failed
        self.scenarios += 1

    def share(self, name: str) -> float:
        return self.verdicts[name] / self.scenarios

    @property
    def mean_trials(self) -> float:
        return self.trials / self.scenarios


def verdict(passed: int, failed: int) -> str:
    return "flaky" if passed and failed else ("pass" if passed else "fail")


def right(rate: float) -> str:
    return "pass" if rate == 1.0 else "fail" if rate == 0.0 else "flaky"


def adaptive(rule: StopRule, rate: float, draw: random.Random) -> tuple[int, int]:
    """One scenario stopped by the runner's rule: its passes and fails."""
    passed = failed = 0
    while decide(rule, passed, failed) is None:
        if draw.random() < rate:
            passed += 1
        else:
            failed += 1
    return passed, failed


def fixed(trials: int, rate: float, draw: random.Random) -> tuple[int, int]:
    passed = sum(draw.random() < rate for _ in range(trials))
    return passed, trials - passed


def exact(rule: StopRule, rate: float) -> tuple[dict[str, float], float]:
    """The exact chance of each verdict under the rule, and the mean trials it takes."""

    @cache
    def walk(passed: int, failed: int) -> tuple[dict[str, float], float]:
        if decide(rule, passed, failed) is not None:
            return {verdict(passed, failed): 1.0}, float(passed + failed)
        chances: dict[str, float] = dict.fromkeys(VERDICTS, 0.0)
        mean = 0.0
        for weight, step in ((rate, (passed + 1, failed)), (1 - rate, (passed, failed + 1))):
            if weight:
                found, trials = walk(*step)
                for name, chance in found.items():
                    chances[name] += weight * chance
                mean += weight * trials
        return chances, mean

    chances, mean = walk(0, 0)
    return {name: chances.get(name, 0.0) for name in VERDICTS}, mean


def simulate(rule: StopRule, scenarios: int, seed: int) -> tuple[float, float, int]:
    """Print the table; the mean trials of both runs, and the scenarios at 1.0 or 0.0
    called flaky."""
    draw = random.Random(seed)
    print(
        f"  {'rate':>5}  {'right':<6} {'PASS':>7} {'FLAKY':>7} {'FAIL':>7} {'wrong':>7} "
        f"{'(exact)':>8} {'trials':>7} {'(exact)':>8}  {'fixed: wrong':>13} {'trials':>7}"
    )
    spent = [0.0, 0.0]
    impossible = 0
    for rate in RATES:
        ours, theirs = Tally(), Tally()
        for _ in range(scenarios):
            ours.add(*adaptive(rule, rate, draw))
            theirs.add(*fixed(rule.most, rate, draw))
        chances, mean = exact(rule, rate)
        good = right(rate)
        print(
            f"  {rate:>5.2f}  {good:<6} {ours.share('pass'):>7.1%} {ours.share('flaky'):>7.1%} "
            f"{ours.share('fail'):>7.1%} {1 - ours.share(good):>7.1%} {1 - chances[good]:>8.1%} "
            f"{ours.mean_trials:>7.2f} {mean:>8.2f}  {1 - theirs.share(good):>13.1%} "
            f"{theirs.mean_trials:>7.2f}"
        )
        spent[0] += ours.mean_trials
        spent[1] += theirs.mean_trials
        impossible += ours.verdicts["flaky"] if rate in (0.0, 1.0) else 0
    return spent[0] / len(RATES), spent[1] / len(RATES), impossible


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=10_000, help="scenarios per rate")
    parser.add_argument("--max-trials", type=int, default=StopRule.most)
    parser.add_argument("--confidence", type=float, default=StopRule.confidence)
    parser.add_argument("--min-rate", type=float, default=StopRule.rate)
    parser.add_argument("--seed", type=int, default=20260729)
    args = parser.parse_args(argv)
    if args.scenarios < 1:
        parser.error("--scenarios must be at least 1")
    try:
        rule = StopRule(most=args.max_trials, confidence=args.confidence, rate=args.min_rate)
    except ValueError as exc:
        parser.error(f"--max-trials, --confidence, --min-rate: {exc}")
    heading(
        f"--until-decided ({rule.confidence:.0%} sure of a {rule.rate:.0%} rate, "
        f"{rule.least} to {rule.most} trials) against a fixed {rule.most}, "
        f"{args.scenarios:,} scenarios per rate, seed {args.seed}"
    )
    ours, theirs, impossible = simulate(rule, args.scenarios, args.seed)
    print()
    figure("mean trials, adaptive", f"{ours:.2f}")
    figure("mean trials, fixed", f"{theirs:.2f}")
    target("rate 1.0 or 0.0 called flaky", impossible == 0, f"{impossible} scenarios")
    target("trials adaptive / fixed", ours <= theirs, f"{ours / theirs:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
