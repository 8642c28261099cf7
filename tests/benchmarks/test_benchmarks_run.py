"""Every benchmark script runs end to end at tiny sizes, so none can rot unnoticed.

No timing is asserted anywhere: at these sizes the figures mean nothing, and a target
missed is information, not a failure. What is asserted is that each script finishes,
reports each of its targets, and that its own safeguards hold (the same verdicts as its
floor; peak memory measured per child process, not inherited from the benchmark).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench  # not in the default run: `python -m pytest -m bench`

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
RESULT_LINE = re.compile(r"^  (?P<label>\S.*?)\s{2,}(?P<value>.*)$", re.MULTILINE)
OUTCOME = re.compile(r"  -> target (met|missed)$")

TINY = {
    "bench_score.py": ["--records", "40", "--repeat", "1"],
    "bench_bulk.py": ["--records", "40", "--small", "10"],
    "bench_harness.py": ["--trials", "3", "--files", "3", "--sleep", "0.01", "--sleep-trials", "2"],
    "bench_many.py": ["--scenarios", "20"],
    "bench_memory.py": ["--scenarios", "10", "--trials", "2"],
    "bench_rescore.py": ["--trials", "20"],
    "count_many.py": ["--scenarios", "3"],
    "probe_hostile.py": ["--trials", "40", "--kills", "2"],
    "bench_proxy.py": ["--calls", "5", "--cassette", "5"],
    "bench_ray.py": ["--trials", "4", "--sleep", "0.01"],
    "simulate_adaptive.py": ["--scenarios", "200"],
    "bench_report.py": ["--scenarios", "2", "--trials", "3", "--checks", "4"],
    "bench_view.py": ["--trials", "30"],
}
TARGETS = {
    "bench_score.py": ["time ratio sounding / floor", "sounding peak memory 10 -> 40"],
    "bench_bulk.py": ["time per 100,000 records", "sounding peak memory 10 -> 40"],
    "bench_harness.py": ["overhead per trial", "ratio --parallel 2 / --parallel 1"],
    "bench_many.py": ["time ratio sounding / floor"],
    "bench_memory.py": ["peak memory, largest run", "flat in the trials (x10)"],
    "bench_rescore.py": ["time ratio rescore_run / floor", "score peak memory 5 -> 20"],
    "count_many.py": [],  # counts, no targets
    "bench_proxy.py": ["added by the proxy, median", "replayed in"],
    "bench_ray.py": ["time ratio ray / local", "throughput per doubling"],
    "simulate_adaptive.py": ["rate 1.0 or 0.0 called flaky", "trials adaptive / fixed"],
    "bench_report.py": ["CPU of the report of 6 trials"],
    "bench_view.py": ["run page, first request", "trial page, median"],
    "probe_hostile.py": [
        "false passes",
        "trials unaccounted for",
        "hangs past the timeout + 2 s",
        "processes left running",
        "agents alive after a kill",
        "stored files that do not parse",
        "finished trials run again",
        "trials missing from the summary",
    ],
}
AGREEMENT = {
    "bench_score.py": "verdicts (both)",
    "bench_bulk.py": "verdicts (both)",
    "bench_many.py": "scenarios passed (both)",
    "bench_rescore.py": "verdicts (both)",
}

Script = subprocess.CompletedProcess[str]


def start_script(name: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(BENCHMARKS / name), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> Script:
    try:
        stdout, stderr = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.fixture(scope="module")
def tiny_runs() -> dict[str, Script]:
    """Each script run once at its tiny size, all at once; every test here reads those runs."""
    started = {name: start_script(name, *args) for name, args in TINY.items()}
    return {name: finish(process) for name, process in started.items()}


def results(done: Script) -> dict[str, str]:
    """`label -> value` of every figure and target line the script printed."""
    return {m["label"]: m["value"] for m in RESULT_LINE.finditer(done.stdout)}


@pytest.mark.parametrize("name", sorted(TINY))
def test_benchmark_finishes_and_reports_every_target(
    tiny_runs: dict[str, Script], name: str
) -> None:
    done = tiny_runs[name]
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    reported = [label for label, value in results(done).items() if OUTCOME.search(value)]
    assert reported == TARGETS[name], done.stdout


@pytest.mark.parametrize("name", sorted(AGREEMENT))
def test_benchmark_agrees_with_its_floor(tiny_runs: dict[str, Script], name: str) -> None:
    """The script printed its agreement line, so it compared its verdicts with the floor's
    (it exits 1 without it when they differ)."""
    done = tiny_runs[name]
    assert AGREEMENT[name] in results(done), done.stdout + done.stderr


def test_the_hostile_probe_counts_zero(tiny_runs: dict[str, Script]) -> None:
    """Its counts are of wrong verdicts, lost trials and survivors, not times: each must
    be 0 even at a tiny size (the one timing figure, hangs past the deadline, is left to
    the full probe on a quiet machine)."""
    found = results(tiny_runs["probe_hostile.py"])
    counts = {k: v for k, v in found.items() if OUTCOME.search(v) and "past the timeout" not in k}
    assert counts and all(v.startswith("0 ") for v in counts.values()), found


def test_peak_memory_is_the_measured_program_s_own(tiny_runs: dict[str, Script]) -> None:
    """The plain-json floor is measured from a benchmark that has imported sounding and
    written records; had it inherited its parent's size, its peak would match sounding's."""
    found = results(tiny_runs["bench_score.py"])
    floor = float(found["floor peak memory"].split()[0])
    ours = float(found["sounding peak memory 10 -> 40"].split()[3])
    assert floor < 0.6 * ours, found


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("bench_score.py", ["--records", "0"]),
        ("bench_bulk.py", ["--records", "1"]),
        ("bench_harness.py", ["--sleep", "0"]),
        ("bench_many.py", ["--scenarios", "0"]),
        ("bench_memory.py", ["--scenarios", "1"]),
        ("bench_rescore.py", ["--trials", "0"]),
        ("count_many.py", ["--scenarios", "0"]),
        ("probe_hostile.py", ["--trials", "0"]),
        ("bench_proxy.py", ["--calls", "0"]),
        ("bench_ray.py", ["--trials", "0"]),
        ("simulate_adaptive.py", ["--scenarios", "0"]),
        ("bench_view.py", ["--trials", "0"]),
    ],
)
def test_a_size_that_cannot_run_is_refused(name: str, args: list[str]) -> None:
    done = finish(start_script(name, *args))
    assert done.returncode == 2
    assert "error: --" in done.stderr, done.stderr
