"""Scoring production traces in bulk: `sounding score CASE --records records.jsonl`.

Writes N `sounding.run/1` records to one JSON Lines file (20 tool calls each, a 512-byte
final answer, each naming its scenario in `metadata.scenario`; some break one check each,
so about half pass) and the case file of bench_score.py (10 deterministic `expect` checks).
Then, each in a child process:

- `sounding score case.yaml --records records.jsonl --json` (the whole command: start, read,
  match, measure every record, tally, the intervals), at N and at a smaller size;
- the floors, on the same lines: `json.loads` of each line alone, and `json.loads` with the
  same 10 checks written by hand. The verdicts of sounding and of the hand checks must agree.

    python benchmarks/bench_bulk.py [--records 100000] [--small 10000] [--keep]

Targets: N = 100,000 records scored in under 60 s (the time is scaled to 100,000 records at
other sizes); peak memory flat (within 10 %) from the small size to N: records are
streamed, and only counts and the worst offenders are kept.
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
    per_second,
    python_child,
    run_child,
    sounding_argv,
    target,
    workdir,
)
from bench_score import CASE_YAML, TOOL_CALLS, plain_verdict, record_data

ANSWER_CHARS = 512
SECONDS_PER_100K = 60.0
SCENARIO = "order-status"


def record_line(i: int) -> str:
    """One stored record, as `RunRecord.to_json` writes it, on one line."""
    data = record_data(i)
    data["final_answer"] = data["final_answer"][:ANSWER_CHARS]
    return json.dumps({"schema": "sounding.run/1", **data, "metadata": {"scenario": SCENARIO}})


def generate(folder: Path, records: int, small: int) -> tuple[Path, Path, Path]:
    """The case file, the N records, and their first `small` in a file of their own."""
    folder.mkdir(parents=True, exist_ok=True)
    case = folder / "case.yaml"
    case.write_text(CASE_YAML, encoding="utf-8")
    full, first = folder / "records.jsonl", folder / "first.jsonl"
    with full.open("w", encoding="utf-8") as out, first.open("w", encoding="utf-8") as head:
        for i in range(records):
            line = record_line(i) + "\n"
            out.write(line)
            if i < small:
                head.write(line)
    return case, full, first


# ---- the floors (each runs in its own child process) -------------------------------------


def floor_json(path: Path) -> dict[str, Any]:
    started = time.perf_counter()
    with path.open("rb") as lines:
        count = sum(1 for line in lines if json.loads(line))
    return {"seconds": time.perf_counter() - started, "records": count}


def floor_checks(path: Path) -> dict[str, Any]:
    started = time.perf_counter()
    verdicts: dict[str, int] = {}
    with path.open("rb") as lines:
        for line in lines:
            verdict = plain_verdict(json.loads(line))
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
    return {"seconds": time.perf_counter() - started, "verdicts": verdicts}


FLOORS = {"json": floor_json, "checks": floor_checks}


# ---- the benchmark -----------------------------------------------------------------------


def score(case: Path, records: Path) -> tuple[Child, dict[str, int]]:
    """`sounding score --records` in a child; the verdict counts its --json document gives."""
    argv = [*sounding_argv(), "score", str(case), "--records", str(records), "--json"]
    child = run_child([*argv, "--min-pass-rate", "0"])
    (scenario,) = child.document()["scenarios"]
    verdicts = {"pass": scenario["passed"], "fail": scenario["failed"]}
    return child, {k: v for k, v in verdicts.items() if v}


def floor(name: str, records: Path) -> tuple[Child, dict[str, Any]]:
    child = python_child(Path(__file__), "--floor", name, "--inputs", str(records))
    return child, child.result()


def benchmark(records: int, small: int, keep: bool) -> int:
    heading(f"bench_bulk: {records:,} records x {TOOL_CALLS} tool calls, 10 checks, one JSONL")
    with workdir("bulk", keep) as folder:
        started = time.perf_counter()
        case, full, first = generate(folder, records, small)
        size = full.stat().st_size / 1e6
        figure("inputs written", f"{size:,.0f} MB in {time.perf_counter() - started:.1f} s")
        ours, verdicts = score(case, full)
        plain, plain_found = floor("checks", full)
        bare, _ = floor("json", full)
        small_run, _ = score(case, first)
    if verdicts != plain_found["verdicts"]:
        print(f"verdicts differ: sounding {verdicts}, floor {plain_found['verdicts']}")
        print("the floor no longer checks what the case file checks: fix the benchmark")
        return 1
    figure("verdicts (both)", json.dumps(verdicts, sort_keys=True))
    figure("sounding score --records", per_second(records, ours.seconds, "records"))
    figure("sounding CPU time (user + system)", f"{ours.cpu_seconds:.2f} s")
    figure("floor: json.loads + hand checks", per_second(records, plain.seconds, "records"))
    figure("floor: json.loads alone", per_second(records, bare.seconds, "records"))
    figure("ratio to json + hand checks", f"{ours.seconds / plain.seconds:.1f}x")
    figure("ratio to json.loads alone", f"{ours.seconds / bare.seconds:.1f}x")
    scaled = ours.seconds * 100_000 / records
    target(
        "time per 100,000 records",
        scaled < SECONDS_PER_100K,
        f"{scaled:.1f} s (target < {SECONDS_PER_100K:.0f} s)",
    )
    figure("floor peak memory (json + checks)", f"{plain.peak_mb:.1f} MB")
    target(
        f"sounding peak memory {small} -> {records}",
        flat(small_run.peak_mb, ours.peak_mb),
        f"{grew(small_run.peak_mb, ours.peak_mb)} (target: within 10 %)",
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000, help="records to score")
    parser.add_argument("--small", type=int, default=10_000, help="the smaller size, for memory")
    parser.add_argument("--keep", action="store_true", help="keep the generated inputs")
    parser.add_argument("--floor", choices=sorted(FLOORS), help=argparse.SUPPRESS)
    parser.add_argument("--inputs", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.floor:
        print(json.dumps(FLOORS[args.floor](args.inputs)))
        return 0
    if args.records < 2 or not 1 <= args.small < args.records:
        parser.error("--records must be at least 2, and --small between 1 and --records - 1")
    try:
        return benchmark(args.records, args.small, args.keep)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
