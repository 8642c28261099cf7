"""Re-scoring a stored run: `sounding score RESULTS_DIR` on 5,000 stored trials.

Builds the suite of bench_many.py (N one-trial scenarios, three answer checks each) and
runs it once, untimed, to get a results folder. Then times, each in a child process:

- `sounding score RESULTS_DIR` (the whole command: start, load the case file, re-measure);
- a small driver that imports `sounding.runner` and times `rescore_run(run_dir)` alone,
  and, apart, the `load_cases` it starts with;
- the floor: a plain script that reads the same case file and the same trial.json files
  (each holds its run record) and evaluates the same three checks. Both must reach the
  same verdicts.

    python benchmarks/bench_rescore.py [--trials 5000] [--repeat 3] [--keep]

`rescore_run` and the floor take turns, `--repeat` times; the figure is the median of the
ratios of the runs taken in turn. Targets: re-scoring (`rescore_run`: load the case file,
read and measure every trial) at most 2x the floor's time, which includes its
interpreter's start; peak memory of
`sounding score` not growing from N/4 to N stored trials. The whole command's ratio is
printed beside it: it adds sounding's start (imports, about half a second). For the memory,
one case file of N/4 scenarios is run (untimed) with 1 and with 4 trials each, so that only
the number of stored trials differs, not the size of the case file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from _bench import (
    BenchError,
    Child,
    figure,
    flat,
    grew,
    heading,
    paired_ratio,
    python_child,
    run_child,
    sounding_argv,
    target,
    workdir,
)
from _many import RESCORE_FLOOR_PY, write_floor, write_suite

RATIO_TARGET = 2.0
SCORE_CODES = (0, 1)  # 1: some trials failed, as one in ten should


def drive(run_dir: Path) -> dict[str, Any]:
    """In this (child) process: the time of `rescore_run` alone, and of loading the cases."""
    from sounding.runner import rescore_run
    from sounding.spec import load_cases

    started = time.perf_counter()
    found = rescore_run(run_dir)
    seconds = time.perf_counter() - started
    suite = Path(json.loads((run_dir / "run.json").read_text())["suite"])
    started = time.perf_counter()
    load_cases(suite / "cases", suite_dir=suite)
    loading = time.perf_counter() - started
    return {
        "seconds": seconds,
        "load_cases": loading,
        "verdicts": {v.value: n for v, n in found.verdicts.items()},
    }


def stored_run(suite: Path, trials_each: int = 1) -> Path:
    """Run the suite once (untimed) with `trials_each` trials per scenario; its run folder."""
    argv = [*sounding_argv(), "run", str(suite), "--trials", str(trials_each)]
    before = set(suite.glob("results/*/run.json"))
    run_child(argv, ok_codes=SCORE_CODES)
    made = sorted(set(suite.glob("results/*/run.json")) - before)
    if not made:
        raise FileNotFoundError(f"{suite}/results holds no new run: `sounding run` made none")
    return made[-1].parent


def score_command(run_dir: Path) -> Child:
    """`sounding score RUN_DIR --json`; today's rules are the run's, so nothing may change."""
    child = run_child([*sounding_argv(), "score", str(run_dir), "--json"], ok_codes=SCORE_CODES)
    changed = child.document().get("changed")
    if changed:
        raise BenchError(child, f"found {len(changed)} changed verdicts, not 0")
    return child


def _counted(verdicts: dict[str, int]) -> dict[str, int]:
    return {verdict: n for verdict, n in sorted(verdicts.items()) if n}


def timing(folder: Path, trials: int, repeat: int) -> int:
    """N one-trial scenarios: the command, then `rescore_run` inside and the floor, taking
    turns `repeat` times."""
    suite = write_suite(folder / "suite", trials)
    run_dir = stored_run(suite)
    command = score_command(run_dir)
    floor_script = write_floor(folder, RESCORE_FLOOR_PY)
    inside: list[dict[str, Any]] = []
    floors: list[Child] = []
    for _ in range(repeat):
        inside.append(python_child(Path(__file__), "--drive", str(run_dir)).result())
        floors.append(python_child(floor_script, str(suite), str(run_dir)))
    counted = {json.dumps(_counted(run["verdicts"])) for run in inside}
    counted |= {json.dumps(_counted(floor.result())) for floor in floors}
    if len(counted) != 1:
        print(f"verdicts differ: {sorted(counted)}")
        return 1
    figure("verdicts (both)", counted.pop())
    figure(
        "sounding score (whole command)", f"{command.seconds:.2f} s, peak {command.peak_mb:.1f} MB"
    )
    floor = min(floors, key=lambda child: child.seconds)
    best = min(inside, key=lambda run: run["seconds"])
    figure(
        f"floor: json + hand checks (best of {repeat})",
        f"{floor.seconds:.2f} s (with interpreter start)",
    )
    figure(f"rescore_run (in-process, best of {repeat})", f"{best['seconds']:.2f} s")
    figure("rescore_run: its load_cases alone", f"{best['load_cases']:.2f} s")
    figure("time ratio command / floor", f"{command.seconds / floor.seconds:.1f}")
    ratio = paired_ratio([run["seconds"] for run in inside], [child.seconds for child in floors])
    target(
        "time ratio rescore_run / floor",
        ratio <= RATIO_TARGET,
        f"{ratio:.2f}, the median of {repeat} taken in turn (target <= {RATIO_TARGET:.0f})",
    )
    return 0


def memory(folder: Path, trials: int) -> None:
    """The same case file (N/4 scenarios) run with 1 and with 4 trials each: only the
    number of stored trials differs between the two `sounding score` peaks."""
    scenarios = max(trials // 4, 1)
    suite = write_suite(folder / "suite-memory", scenarios)
    small = score_command(stored_run(suite, 1))
    large = score_command(stored_run(suite, 4))
    target(
        f"score peak memory {scenarios} -> {scenarios * 4}",
        flat(small.peak_mb, large.peak_mb),
        f"{grew(small.peak_mb, large.peak_mb)} (target: not growing)",
    )


def benchmark(folder: Path, trials: int, repeat: int) -> int:
    heading(f"bench_rescore: {trials} stored trials x 3 checks")
    if timing(folder, trials, repeat):
        return 1
    memory(folder, trials)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5000, help="stored trials to re-score")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each, in turn")
    parser.add_argument("--keep", action="store_true", help="keep the suites and their results")
    parser.add_argument("--drive", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive:
        print(json.dumps(drive(args.drive)))
        return 0
    if args.trials < 1 or args.repeat < 1:
        parser.error("--trials and --repeat must be at least 1")
    try:
        with workdir("rescore", args.keep) as folder:
            return benchmark(folder, args.trials, args.repeat)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
