"""Many small scenarios: the whole `sounding run` of 5,000 one-trial scenarios.

One case file of N scenarios (one trial each, three checks each: final_answer_contains,
final_answer_not_contains, final_answer_matches), a Python callable agent that answers at
once, every artifact written. `sounding run SUITE` runs in a child process: its wall time
and peak memory are measured. The floor, in the same run, is a plain Python script that
reads the same case file, evaluates the same three checks on the same answers and writes
the same trial folders (a trial.json as large as sounding's, under a temporary name renamed
into place). Both must find the same number of passing scenarios (one in ten fails).

    python benchmarks/bench_many.py [--scenarios 5000] [--keep]

Target: the whole command at most 4x the floor's time.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from _bench import (
    BenchError,
    figure,
    heading,
    python_child,
    run_child,
    sounding_argv,
    target,
    workdir,
)
from _many import write_floor, write_suite

RATIO_TARGET = 4.0
RUN_CODES = (0, 1)  # 1: some scenarios failed, as one in ten should


def run_folder(suite: Path) -> Path:
    """The folder of the run `sounding run` just made in the suite."""
    runs = sorted(p.parent for p in suite.glob("results/*/summary.json"))
    if not runs:
        raise FileNotFoundError(f"{suite}/results holds no run with a summary.json")
    return runs[-1]


def passed_scenarios(run: Path) -> int:
    return int(json.loads((run / "summary.json").read_text())["totals"]["pass"])


def benchmark(folder: Path, scenarios: int) -> int:
    heading(f"bench_many: {scenarios} scenarios x 1 trial x 3 checks, callable agent")
    suite = write_suite(folder / "suite", scenarios)
    ours = run_child([*sounding_argv(), "run", str(suite)], ok_codes=RUN_CODES)
    run = run_folder(suite)
    sample = next(run.glob("trials/*/*/*#1/trial.json"))
    floor = python_child(write_floor(folder), str(suite), str(sample), str(folder / "floor"))
    ours_passed, floor_passed = passed_scenarios(run), int(floor.result()["pass"])
    if ours_passed != floor_passed:
        print(f"passing scenarios differ: sounding {ours_passed}, floor {floor_passed}")
        return 1
    ratio = ours.seconds / floor.seconds
    figure("scenarios passed (both)", f"{floor_passed} of {scenarios}")
    figure("sounding run", f"{ours.seconds:.2f} s, peak {ours.peak_mb:.1f} MB")
    figure("floor: checks + trial folders", f"{floor.seconds:.2f} s, peak {floor.peak_mb:.1f} MB")
    target(
        "time ratio sounding / floor",
        ratio <= RATIO_TARGET,
        f"{ratio:.1f} (target <= {RATIO_TARGET:.0f})",
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=5000, help="scenarios in the case file")
    parser.add_argument("--keep", action="store_true", help="keep the suite and its results")
    args = parser.parse_args(argv)
    if args.scenarios < 1:
        parser.error("--scenarios must be at least 1")
    try:
        with workdir("many", args.keep) as folder:
            return benchmark(folder, args.scenarios)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
