"""Counts that do not move with the machine: the work of one run of many small scenarios.

Runs `sounding run` on the suite of bench_many.py twice: under valgrind's callgrind, which
counts the instructions every process executes, and under strace, which counts the
file-system calls. On a machine whose CPU speed and disk latency change from minute to
minute, these counts show what a change to sounding did where wall times cannot.

    python benchmarks/count_many.py [--scenarios 1000] [--source SRC] [--keep]

`--source` runs the sounding found in SRC (a `src` folder, put first on PYTHONPATH) in
place of the installed one: a `git worktree` of an earlier commit gives before and after.
A tool that is not installed is reported as such; the other count still runs.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from _bench import figure, heading, workdir
from _many import write_suite

RUN = "import sys; from sounding.cli import main; main()"
COLLECTED = re.compile(r"^==(\d+)== Collected : (\d+)$", re.MULTILINE)
FILE_CALLS = ("mkdir", "openat", "rename", "newfstatat", "unlinkat")
RUN_CODES = (0, 1)  # 1: some scenarios failed, as one in ten should


def _run(tool: list[str], suite: Path, source: Path | None) -> str:
    """stderr of `sounding run SUITE` under `tool`; the run itself must have finished."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(source), env.get("PYTHONPATH")) if p)
    argv = [*tool, sys.executable, "-c", RUN, "run", str(suite)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode not in RUN_CODES:
        raise SystemExit(f"error: {' '.join(argv[:3])} … exited {done.returncode}:\n{done.stderr}")
    shutil.rmtree(suite / "results")
    return done.stderr


def instructions(suite: Path, source: Path | None) -> dict[int, int]:
    """Instructions by process id. A forked worker's count starts from its parent's at the
    fork, so what it did itself is its count less the parent's work before the fork."""
    tool = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    return {int(pid): int(n) for pid, n in COLLECTED.findall(_run(tool, suite, source))}


def file_calls(suite: Path, source: Path | None, folder: Path) -> dict[str, int]:
    """How many times each file-system call was made, over every process of the run."""
    out = folder / "strace.txt"
    calls = ",".join(FILE_CALLS)
    _run(["strace", "-f", "-c", "-e", f"trace={calls}", "-o", str(out)], suite, source)
    counted: dict[str, int] = {}
    for line in out.read_text().splitlines():
        parts = line.split()
        if parts and parts[-1] in FILE_CALLS:
            counted[parts[-1]] = int(parts[3])
    return counted


def benchmark(folder: Path, scenarios: int, source: Path | None) -> int:
    which = f"sounding from {source}" if source else "the installed sounding"
    heading(f"count_many: {scenarios} scenarios x 1 trial x 3 checks, {which}")
    suite = write_suite(folder / "suite", scenarios)
    if shutil.which("valgrind"):
        counts = instructions(suite, source)
        parent = min(counts)  # the first process started; the workers' ids come after it
        figure("processes", str(len(counts)))
        figure("instructions, parent", f"{counts[parent] / 1e9:.3f} G")
        workers = [n for pid, n in counts.items() if pid != parent]
        if workers:
            figure("instructions, each worker", ", ".join(f"{n / 1e9:.3f} G" for n in workers))
    else:
        figure("instructions", "valgrind is not installed")
    if shutil.which("strace"):
        for call, count in file_calls(suite, source, folder).items():
            figure(f"{call} calls", f"{count:,} ({count / scenarios:.2f} per scenario)")
    else:
        figure("file-system calls", "strace is not installed")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=1000, help="scenarios in the case file")
    parser.add_argument("--source", type=Path, help="run the sounding in this src folder")
    parser.add_argument("--keep", action="store_true", help="keep the suite")
    args = parser.parse_args(argv)
    if args.scenarios < 1:
        parser.error("--scenarios must be at least 1")
    if args.source is not None and not (args.source / "sounding").is_dir():
        parser.error(f"--source {args.source}: no sounding package there (give a src folder)")
    with workdir("count", args.keep) as folder:
        return benchmark(folder, args.scenarios, args.source)


if __name__ == "__main__":
    sys.exit(main())
