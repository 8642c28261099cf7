"""Many small scenarios: the whole `sounding run` of 5,000 one-trial scenarios.

One case file of N scenarios (one trial each, three checks each: final_answer_contains,
final_answer_not_contains, final_answer_matches), a Python callable agent that answers at
once, every artifact written. `sounding run SUITE` runs in a child process: its wall time
and peak memory are measured. The floor, in the same run, is a plain Python script that
reads the same case file, evaluates the same three checks on the same answers and writes
one JSON file. Both must find the same number of passing scenarios (one in ten fails). For
information it also times plain Python writing the same trial folders and files: what
this machine's disk costs by itself.

    python benchmarks/bench_many.py [--scenarios 5000] [--keep]

Targets: under 2 s wall time and under 150 MB peak memory for the whole command.
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

SECONDS_TARGET = 2.0
MEMORY_TARGET_MB = 150.0
RUN_CODES = (0, 1)  # 1: some scenarios failed, as one in ten should

# Not the floor of the ratio: what writing the same trial folders costs this disk alone.
ARTIFACTS_PY = """\
import os
import sys
from pathlib import Path

sample, dest, count = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
folders = [p.relative_to(sample) for p in sample.rglob("*") if p.is_dir()]
files = {p.relative_to(sample): p.read_bytes() for p in sample.rglob("*") if p.is_file()}
dest.mkdir(parents=True)
for n in range(count):
    trial = dest / f"s{n:05d}#1"
    trial.mkdir()
    for folder in folders:
        (trial / folder).mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        tmp = trial / f".tmp-{name.name}"
        tmp.write_bytes(data)
        os.replace(tmp, trial / name)
"""


def run_folder(suite: Path) -> Path:
    """The folder of the run `sounding run` just made in the suite."""
    runs = sorted(p.parent for p in suite.glob("results/*/summary.json"))
    if not runs:
        raise FileNotFoundError(f"{suite}/results holds no run with a summary.json")
    return runs[-1]


def passed_scenarios(run: Path) -> int:
    return int(json.loads((run / "summary.json").read_text())["totals"]["pass"])


def artifacts_floor(folder: Path, run: Path, count: int) -> float:
    """Seconds plain Python takes to write `count` trial folders like the run's first one."""
    sample = next(run.glob("trials/*/*/*#1"))
    script = folder / "artifacts.py"
    script.write_text(ARTIFACTS_PY, encoding="utf-8")
    return python_child(script, str(sample), str(folder / "artifacts"), str(count)).seconds


def benchmark(folder: Path, scenarios: int) -> int:
    heading(f"bench_many: {scenarios} scenarios x 1 trial x 3 checks, callable agent")
    suite = write_suite(folder / "suite", scenarios)
    ours = run_child([*sounding_argv(), "run", str(suite)], ok_codes=RUN_CODES)
    floor = python_child(write_floor(folder), str(suite), str(folder / "floor.json"))
    run = run_folder(suite)
    ours_passed, floor_passed = passed_scenarios(run), int(floor.result()["pass"])
    if ours_passed != floor_passed:
        print(f"passing scenarios differ: sounding {ours_passed}, floor {floor_passed}")
        return 1
    figure("scenarios passed (both)", f"{floor_passed} of {scenarios}")
    figure("sounding run", f"{ours.seconds:.2f} s, peak {ours.peak_mb:.1f} MB")
    figure("floor: plain script, one JSON", f"{floor.seconds:.2f} s, peak {floor.peak_mb:.1f} MB")
    figure("time ratio sounding / floor", f"{ours.seconds / floor.seconds:.1f}")
    writing = artifacts_floor(folder, run, scenarios)
    figure("the same trial folders, plain", f"{writing:.2f} s (the disk's own cost)")
    target(
        "sounding run wall time",
        ours.seconds < SECONDS_TARGET,
        f"{ours.seconds:.2f} s (target < {SECONDS_TARGET:.0f} s)",
    )
    target(
        "sounding run peak memory",
        ours.peak_mb < MEMORY_TARGET_MB,
        f"{ours.peak_mb:.1f} MB (target < {MEMORY_TARGET_MB:.0f} MB)",
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
