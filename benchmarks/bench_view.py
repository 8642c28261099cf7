"""`sounding view` on a run of 5,000 trials: how long its run page and a trial page take.

Writes a results folder with the store's own writers (`write_plan`, `write_trial`,
`write_summary`, `write_measures`): N trials, ten per scenario, each with a conversation,
a tool call, three checks, stdout and a diff. Starts `sounding view FOLDER --port 0
--no-browser` as a user does and times requests through it, over loopback:

- the run page, first request (every trial.json read) and again (only their stat);
- the run page filtered to failing scenarios, a scenario page, the runs page;
- trial pages (the median of several trials, each asked once);
- the floor: this process reading the same N trial.json files with plain `json`.

    python benchmarks/bench_view.py [--trials 5000] [--keep]

Targets: the run page of N trials under 2 s on its first request, a trial page under
300 ms (median). Each time is also printed as a ratio to the floor measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from _bench import figure, heading, sounding_argv, target, workdir

from sounding.checks import CheckResult
from sounding.record import Message, RunRecord, ToolCall
from sounding.scoring import Kind, Measured, aggregate, score_trial
from sounding.store import (
    RunPlan,
    RunSummary,
    ScenarioSummary,
    Trial,
    TrialKey,
    write_measures,
    write_plan,
    write_summary,
    write_trial,
)

PER_SCENARIO = 10
RUN_PAGE_TARGET, TRIAL_PAGE_TARGET = 2.0, 0.300
RUN_ID = "20260101-000000"


def make_trial(key: TrialKey) -> Trial:
    """A trial as the runner stores one: ~1 in 5 fails its second check."""
    ok = (key.trial * 7 + hash(key.scenario) % 5) % 5 != 0
    checks = [
        Measured(
            name="expect[0] tool_called",
            kind=Kind.EXPECT,
            type="tool_called",
            result=CheckResult.passed("lookup was called"),
        ),
        Measured(
            name="expect[1] final_answer_contains",
            kind=Kind.EXPECT,
            type="final_answer_contains",
            result=CheckResult.verdict(
                ok, "the answer contains 'done'" if ok else "the answer does not contain 'done'"
            ),
        ),
        Measured(
            name="tone", kind=Kind.INVARIANT, type="regex", result=CheckResult.passed("polite")
        ),
    ]
    call = ToolCall(id="c1", name="lookup", args={"order": f"A-{key.trial}"}, result='{"ok": 1}')
    record = RunRecord(
        user_turns=[f"please handle {key.scenario}"],
        messages=[
            Message(role="user", content=f"please handle {key.scenario}"),
            Message(role="assistant", content="", tool_call_ids=["c1"]),
            Message(role="tool", content='{"ok": 1}', tool_call_id="c1"),
            Message(role="assistant", content="done" if ok else "sorry"),
        ],
        tool_calls=[call],
        final_answer="done" if ok else "sorry",
    )
    return Trial(
        cell=key.cell,
        case=key.case,
        scenario=key.scenario,
        trial=key.trial,
        reason="" if ok else "expect[1] final_answer_contains: the answer does not contain 'done'",
        duration_ms=120.0,
        usage={"input_tokens": 300, "output_tokens": 40, "cost_usd": 0.0004},
        score=score_trial(checks, 1.0),
        record=record,
    )


def write_run(root: Path, trials: int) -> list[TrialKey]:
    """The run folder, written by the store's own writers; its trial keys."""
    root.mkdir(parents=True)
    keys = [
        TrialKey("default", "bench", f"s{n:04d}", t)
        for n in range(max(trials // PER_SCENARIO, 1))
        for t in range(1, min(trials, PER_SCENARIO) + 1)
    ]
    plan = RunPlan(run_id=RUN_ID, suite=str(root.parent / "suite"), trials=keys)
    write_plan(root, plan)
    made = []
    for key in keys:
        folder = plan.layout(root).trial_dir(key)
        folder.mkdir(parents=True)
        (folder / "stdout.txt").write_text("done\n")
        (folder / "diff.patch").write_text("--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+x\n")
        trial = make_trial(key)
        write_trial(folder, trial)
        made.append(trial)
    write_measures(root, RUN_ID, made)
    write_summary(root, RunSummary(run_id=RUN_ID, scenarios=_lines(made)))
    return keys


def _lines(trials: list[Trial]) -> list[ScenarioSummary]:
    by: dict[tuple[str, str, str], list[Trial]] = {}
    for t in trials:
        by.setdefault((t.cell, t.case, t.scenario), []).append(t)
    lines = []
    for (cell, case, scenario), mine in by.items():
        result = aggregate([t.score for t in mine if t.score is not None])
        lines.append(
            ScenarioSummary(
                cell=cell,
                case=case,
                scenario=scenario,
                **result.model_dump(exclude={"pass_at", "pass_hat"}),
            )
        )
    return lines


def floor(root: Path) -> float:
    """Plain Python reading every trial.json of the run: the least a page of it costs."""
    started = time.perf_counter()
    for path in root.glob("trials/*/*/*/trial.json"):
        json.loads(path.read_bytes())
    return time.perf_counter() - started


def timed(client: httpx.Client, url: str) -> float:
    started = time.perf_counter()
    answer = client.get(url)
    seconds = time.perf_counter() - started
    if answer.status_code != 200:
        raise RuntimeError(f"{url}: status {answer.status_code}: {answer.text[:300]}")
    return seconds


def start(folder: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [*sounding_argv(), "view", str(folder), "--port", "0", "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    found = re.search(r"http://[\d.:]+/", process.stdout.readline())
    if found is None:
        process.kill()
        raise RuntimeError(f"sounding view printed no URL: {process.communicate()[1]}")
    return process, found[0]


def measure(folder: Path, keys: list[TrialKey]) -> None:
    base = floor(folder / RUN_ID)
    process, url = start(folder)
    try:
        with httpx.Client(base_url=url, timeout=120) as client:
            cold = timed(client, f"run/{RUN_ID}")
            warm = statistics.median(timed(client, f"run/{RUN_ID}") for _ in range(3))
            failing = timed(client, f"run/{RUN_ID}?verdict=failing")
            first = keys[0]
            scenario = timed(
                client, f"run/{RUN_ID}/scenario?cell=default&case=bench&scenario={first.scenario}"
            )
            runs = timed(client, "")
            step = max(len(keys) // 7, 1)
            trials = [
                timed(
                    client,
                    f"run/{RUN_ID}/trial?cell=default&case=bench&scenario={k.scenario}&n={k.trial}",
                )
                for k in keys[::step]
            ]
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    trial = statistics.median(trials)
    figure("floor: json.loads of every trial", f"{base:.3f} s")
    figure("run page, again (median of 3)", f"{warm:.3f} s ({warm / base:.1f}x floor)")
    figure("run page, failing scenarios", f"{failing:.3f} s")
    figure("scenario page", f"{scenario:.3f} s")
    figure("runs page", f"{runs:.3f} s")
    figure("trial page, slowest", f"{max(trials):.3f} s")
    target(
        "run page, first request",
        cold < RUN_PAGE_TARGET,
        f"{cold:.3f} s ({cold / base:.1f}x floor; target < {RUN_PAGE_TARGET:.0f} s)",
    )
    target(
        "trial page, median",
        trial < TRIAL_PAGE_TARGET,
        f"{trial * 1000:.0f} ms ({trial / base:.2f}x floor; target < "
        f"{TRIAL_PAGE_TARGET * 1000:.0f} ms)",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5000, help="trials in the run")
    parser.add_argument("--keep", action="store_true", help="keep the results folder")
    args = parser.parse_args(argv)
    if args.trials < 1:
        parser.error("--trials must be at least 1")
    with workdir("view", args.keep) as folder:
        heading(f"bench_view: a run of {args.trials} trials in sounding view")
        started = time.perf_counter()
        keys = write_run(folder / "results" / RUN_ID, args.trials)
        figure("written by the store (untimed)", f"{time.perf_counter() - started:.1f} s")
        measure(folder / "results", keys)
    return 0


if __name__ == "__main__":
    sys.exit(main())
