"""Harness overhead per trial, and what `--parallel` buys.

1. Overhead: a suite whose agent is `true`, a fixture workspace of 50 small files, one
   scenario of 200 trials checked with `no_error`, run by `sounding run SUITE --parallel 1`
   in a child process. The floor is the same trials done in plain Python: for each, a
   folder, a fresh copy of the fixture, `true` spawned in it, a small JSON file written and
   the copy removed. Copying a fixture is work any fresh workspace needs, and its cost is
   the disk's, which drifts from minute to minute on this machine; so the floor is measured
   right before and right after the run, and the run is set against their mean.
   Overhead per trial = (run - floor) / trials.
2. Parallelism: an agent that sleeps 0.2 s, 8 trials, `--parallel 1` against `--parallel 2`.

    python benchmarks/bench_harness.py [--trials 200] [--files 50]
                                       [--sleep 0.2] [--sleep-trials 8] [--keep]

Targets: overhead under 15 ms per trial; `--parallel 2` takes about half the time of
`--parallel 1` (a ratio of at most 0.6).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _bench import BenchError, figure, heading, run_child, sounding_argv, target, workdir

OVERHEAD_TARGET_MS = 15.0
PARALLEL_TARGET = 0.6


def write_suite(root: Path, command: str, trials: int, files: int) -> Path:
    """A suite of one case with one scenario of `trials` trials, and a fixture of `files`."""
    fixture = root / "fixtures" / "workspace"
    fixture.mkdir(parents=True)
    for n in range(files):
        (fixture / f"file-{n:03d}.txt").write_text(f"small file {n}\n" * 4, encoding="utf-8")
    (root / "cases").mkdir()
    workspace = "workspace: {fixture: fixtures/workspace}\n" if files else ""
    (root / "cases" / "bench.yaml").write_text(
        f"{workspace}scenarios:\n"
        f"  - id: agent-runs\n"
        f"    user: do the task\n"
        f"    trials: {trials}\n"
        f"    expect: [{{no_error: true}}]\n",
        encoding="utf-8",
    )
    (root / "sounding.toml").write_text(f'[agent]\ncommand = "{command}"\n', encoding="utf-8")
    return root


def sounding_run(suite: Path, parallel: int) -> float:
    """Wall time of `sounding run SUITE --parallel N`; exit code 0 says every trial passed."""
    return run_child([*sounding_argv(), "run", str(suite), "--parallel", str(parallel)]).seconds


def plain_floor(fixture: Path, into: Path, trials: int) -> float:
    """The trials' own work in plain Python: a folder, a fresh copy of the fixture, `true`
    spawned in it, a small JSON file beside it, the copy removed. Creating a file costs
    from 0.04 ms to 0.9 ms on this machine's disk, from one minute and folder to the next,
    and this floor pays it as the run does."""
    started = time.perf_counter()
    for n in range(trials):
        trial = into / str(n)
        trial.mkdir(parents=True)
        shutil.copytree(fixture, trial / "workspace")
        subprocess.run(["true"], cwd=trial / "workspace", check=True)
        (trial / "trial.json").write_text(json.dumps({"trial": n, "status": "pass"}))
        shutil.rmtree(trial / "workspace")
    return time.perf_counter() - started


def startup(suite: Path) -> float:
    """Wall time of `sounding validate SUITE`: interpreter start, imports and loading the
    case files, which every `sounding run` pays once whatever its number of trials."""
    return run_child([*sounding_argv(), "validate", str(suite)]).seconds


def overhead(folder: Path, trials: int, files: int) -> float:
    """Report the overhead per trial; return the fixed cost of a command, for `parallelism`."""
    heading(f"bench_harness: overhead, {trials} trials of `true`, fixture of {files} files")
    suite = write_suite(folder / "overhead", "true", trials, files)
    fixture = suite / "fixtures" / "workspace"
    before = plain_floor(fixture, folder / "floor-before", trials)
    run = sounding_run(suite, 1)
    after = plain_floor(fixture, folder / "floor-after", trials)
    fixed = startup(suite)
    floor = (before + after) / 2
    per_trial = (run - floor) / trials * 1000
    figure("sounding run --parallel 1", f"{run:.2f} s ({run / trials * 1000:.1f} ms per trial)")
    figure(
        "floor: the same trials in Python",
        f"{before / trials * 1000:.1f} ms per trial before the run, "
        f"{after / trials * 1000:.1f} ms after",
    )
    figure("fixed cost (sounding validate)", f"{fixed:.2f} s, included in the run")
    figure("overhead per trial, fixed cost out", f"{(run - fixed - floor) / trials * 1000:.1f} ms")
    target(
        "overhead per trial",
        per_trial < OVERHEAD_TARGET_MS,
        f"{per_trial:.1f} ms (target < {OVERHEAD_TARGET_MS:.0f} ms)",
    )
    return fixed


def parallelism(folder: Path, sleep: float, trials: int, fixed: float) -> None:
    heading(f"bench_harness: parallelism, {trials} trials of `sleep {sleep}`")
    suite = write_suite(folder / "sleep", f"sleep {sleep}", trials, 0)
    one = sounding_run(suite, 1)
    two = sounding_run(suite, 2)
    figure("--parallel 1", f"{one:.2f} s (the agent alone: {sleep * trials:.2f} s)")
    figure("--parallel 2", f"{two:.2f} s (the agent alone: {sleep * trials / 2:.2f} s)")
    if one > fixed and two > fixed:
        figure("ratio with the fixed cost out", f"{(two - fixed) / (one - fixed):.2f}")
    ratio = two / one
    target(
        "ratio --parallel 2 / --parallel 1",
        ratio <= PARALLEL_TARGET,
        f"{ratio:.2f} (target: about 0.5, at most {PARALLEL_TARGET})",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200, help="trials of the `true` agent")
    parser.add_argument("--files", type=int, default=50, help="files in the fixture workspace")
    parser.add_argument("--sleep", type=float, default=0.2, help="seconds the sleeping agent takes")
    parser.add_argument("--sleep-trials", type=int, default=8, help="trials of the sleeping agent")
    parser.add_argument("--keep", action="store_true", help="keep the generated suites")
    args = parser.parse_args(argv)
    if min(args.trials, args.sleep_trials) < 1 or args.files < 0 or args.sleep <= 0:
        parser.error("--trials and --sleep-trials need at least 1, --sleep more than 0")
    try:
        with workdir("harness", args.keep) as folder:
            fixed = overhead(folder, args.trials, args.files)
            parallelism(folder, args.sleep, args.sleep_trials, fixed)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
