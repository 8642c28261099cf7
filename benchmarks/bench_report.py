"""The static HTML report of a run: `sounding report RUN --html` on 48 trials.

Builds a suite of 4 scenarios x 12 trials, each scenario with 25 answer checks that pass
on some trials and fail on others (the agent, a callable, says each word with a chance
fixed by the word and the trial), runs it once, untimed, and measures in a child process
the CPU seconds of `html_report` on the stored run (its reading of the run included). The
floor, in the same child: reading the same trial.json files and writing each escaped into
a page, with plain Python.

    python benchmarks/bench_report.py [--scenarios 4] [--trials 12] [--checks 25] [--keep]

Target: at most 1 s of CPU for 48 trials. The ratio to the floor is printed beside it, so
that a figure from a slow day can be told from a regression.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import time
from pathlib import Path
from typing import Any

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

CPU_TARGET = 1.0

AGENT_PY = '''\
"""Says each word w0..wN with a chance fixed by the word and the trial."""

import random


def answer(prompt, context):
    trial = int(context.env["SOUNDING_TRIAL"])
    words = int(prompt.split()[-1])
    rng = random.Random(f"{prompt}/{trial}")
    return " ".join(f"w{n}" for n in range(words) if rng.random() < 0.6 + 0.4 * (n % 3) / 2)
'''


def write_suite(root: Path, scenarios: int, trials: int, checks: int) -> Path:
    """4 scenarios (by default) of `trials` trials, each with `checks` answer checks."""
    (root / "cases").mkdir(parents=True)
    (root / "sounding.toml").write_text('[agent]\ncallable = "agent:answer"\n', encoding="utf-8")
    (root / "agent.py").write_text(AGENT_PY, encoding="utf-8")
    expect = "".join(f"      - final_answer_contains: w{n}\n" for n in range(checks))
    body = "".join(
        f"  - id: s{s}\n    user: say the words of {checks}\n    expect:\n{expect}"
        for s in range(scenarios)
    )
    text = f"defaults: {{trials: {trials}}}\nscenarios:\n{body}"
    (root / "cases" / "words.yaml").write_text(text, encoding="utf-8")
    return root


def drive(run_dir: Path) -> dict[str, Any]:
    """In this (child) process: the CPU of the HTML report, then of the floor."""
    from sounding.report import html_report
    from sounding.store import load_results

    started = time.process_time()
    page = html_report(load_results(run_dir))
    cpu = time.process_time() - started
    started = time.process_time()
    floor = _floor(run_dir)
    floor_cpu = time.process_time() - started
    return {"cpu": cpu, "bytes": len(page), "floor_cpu": floor_cpu, "floor_bytes": floor}


def _floor(run_dir: Path) -> int:
    """Every trial.json read and written, escaped, into one page: what any report does."""
    parts = []
    for path in sorted(run_dir.glob("trials/*/*/*/trial.json")):
        trial = json.loads(path.read_bytes())
        parts.append(f"<pre>{html.escape(json.dumps(trial, indent=1))}</pre>")
    return len("".join(parts))


def benchmark(folder: Path, scenarios: int, trials: int, checks: int) -> int:
    count = scenarios * trials
    heading(f"bench_report: the HTML report of {count} trials x {checks} checks")
    suite = write_suite(folder / "suite", scenarios, trials, checks)
    run_child([*sounding_argv(), "run", str(suite)], ok_codes=(0, 1))
    run_dir = next(suite.glob("results/*/run.json")).parent
    found = python_child(Path(__file__), "--drive", str(run_dir)).result()
    figure("html_report", f"{found['cpu']:.3f} s CPU, {found['bytes']:,} bytes")
    floor = f"{found['floor_cpu']:.3f} s CPU, {found['floor_bytes']:,} bytes"
    figure("floor: read + escape", floor)
    figure("ratio html_report / floor", f"{found['cpu'] / max(found['floor_cpu'], 1e-6):.1f}")
    target(
        f"CPU of the report of {count} trials",
        found["cpu"] <= CPU_TARGET,
        f"{found['cpu']:.2f} s (target <= {CPU_TARGET:.0f} s)",
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=4, help="scenarios in the suite")
    parser.add_argument("--trials", type=int, default=12, help="trials of each scenario")
    parser.add_argument("--checks", type=int, default=25, help="answer checks of each")
    parser.add_argument("--keep", action="store_true", help="keep the suite and its results")
    parser.add_argument("--drive", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive:
        print(json.dumps(drive(args.drive)))
        return 0
    if min(args.scenarios, args.trials, args.checks) < 1:
        parser.error("--scenarios, --trials and --checks must be at least 1")
    try:
        with workdir("report", args.keep) as folder:
            return benchmark(folder, args.scenarios, args.trials, args.checks)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
