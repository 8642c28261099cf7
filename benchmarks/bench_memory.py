"""A run's memory in its number of trials: `sounding run` of 1,000 to 50,000 trials.

The suite of bench_many.py (one case file, three answer checks per scenario, a Python
callable agent that answers at once), run three times in child processes whose peak
resident memory is measured:

- 1,000 scenarios x 1 trial;
- 5,000 scenarios x 1 trial;
- 5,000 scenarios x 10 trials: ten times the trials of the run before, on the same case
  file, so that only the number of trials differs.

    python benchmarks/bench_memory.py [--scenarios 5000] [--trials 10] [--keep]

Targets: the peak of the largest run under 200 MB, and flat in the trials (the largest
run's peak within 10 % of the run with a tenth of its trials).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _bench import (
    BenchError,
    figure,
    flat,
    grew,
    heading,
    run_child,
    sounding_argv,
    target,
    workdir,
)
from _many import write_suite

MEMORY_TARGET_MB = 200.0
RUN_CODES = (0, 1)  # 1: some scenarios failed, as one in ten should


def peak(folder: Path, scenarios: int, trials: int) -> float:
    """The peak resident memory (MB) of `sounding run` on `scenarios` x `trials`."""
    suite = write_suite(folder / f"suite-{scenarios}x{trials}", scenarios, trials)
    ours = run_child([*sounding_argv(), "run", str(suite)], ok_codes=RUN_CODES)
    figure(
        f"{scenarios * trials:,} trials ({scenarios} x {trials})",
        f"{ours.peak_mb:.1f} MB, {ours.seconds:.1f} s",
    )
    return ours.peak_mb


def benchmark(folder: Path, scenarios: int, trials: int) -> int:
    heading(f"bench_memory: sounding run, {scenarios // 5:,} to {scenarios * trials:,} trials")
    peak(folder, scenarios // 5, 1)
    fewer = peak(folder, scenarios, 1)
    most = peak(folder, scenarios, trials)
    target(
        "peak memory, largest run",
        most < MEMORY_TARGET_MB,
        f"{most:.1f} MB (target < {MEMORY_TARGET_MB:.0f} MB)",
    )
    target("flat in the trials (x10)", flat(fewer, most), grew(fewer, most))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=5000, help="scenarios of the large runs")
    parser.add_argument("--trials", type=int, default=10, help="trials each in the largest run")
    parser.add_argument("--keep", action="store_true", help="keep the suites and their results")
    args = parser.parse_args(argv)
    if args.scenarios < 5 or args.trials < 1:
        parser.error("--scenarios must be at least 5 and --trials at least 1")
    try:
        with workdir("memory", args.keep) as folder:
            return benchmark(folder, args.scenarios, args.trials)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
