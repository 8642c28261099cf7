"""Many trials of a callable agent run in forked worker processes (docs/runner.md)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from sounding._fork import cores

pytestmark = pytest.mark.skipif(cores() < 2, reason="worker processes need two cores or more")

AGENT = """
import os, pathlib, time

def answer(prompt, context):
    trial = int(context.env["SOUNDING_TRIAL"])
    marker = pathlib.Path(context.env["MARKER"])
    if trial == 100 and not marker.exists() and "die" in prompt:
        os._exit(3)
    if trial >= 150 and not marker.exists() and "hang" in prompt:
        time.sleep(60)
    return f"pid {os.getpid()} " + ("no" if trial % 7 == 0 else "ok")
"""


def _write(suite: Any, tmp_path: Path, prompt: str, *, processes: bool = True) -> None:
    suite.write("agent.py", AGENT)
    flag = "" if processes else "processes = false\n"
    marker = tmp_path / "marker"
    suite.write(
        "sounding.toml",
        f'[agent]\ncallable = "agent:answer"\nenv = {{MARKER = "{marker}"}}\n{flag}',
    )
    suite.write(
        "cases/c.yaml",
        f"""
        scenarios:
          - {{id: a, user: {prompt}, trials: 200, expect: [{{final_answer_contains: ok}}]}}
        """,
    )


def _answers(run: Path) -> list[str]:
    return [
        json.loads(p.read_text())["record"]["final_answer"]
        for p in run.glob("trials/*/*/*/trial.json")
    ]


def test_processes_give_the_verdicts_threads_give(suite: Any, tmp_path: Path) -> None:
    _write(suite, tmp_path, "answer")
    forked = suite.run("--parallel", "2")
    _write(suite, tmp_path, "answer", processes=False)
    threaded = suite.run("--parallel", "2")
    assert forked.returncode == threaded.returncode == 1, forked.stdout + forked.stderr
    assert "FLAKY c/a  172/200" in forked.stdout and "FLAKY c/a  172/200" in threaded.stdout
    first, second = suite.runs()
    pids = [answer.split()[1] for answer in _answers(first)]
    # the first trial in sounding's own process, the other 199 in two workers, which take
    # batches as they go (one that starts late may find none left)
    counts = sorted(pids.count(pid) for pid in set(pids))
    assert counts[0] == 1 and sum(counts) == 200 and len(counts) in (2, 3), counts
    assert len({answer.split()[1] for answer in _answers(second)}) == 1  # one process
    assert len(suite.trials(first)) == len(suite.trials(second)) == 200


SLOW_WORKER = """
import os, pathlib, time

def answer(prompt, context):
    if context.env["SOUNDING_TRIAL"] != "1":  # trial 1 runs in sounding's own process
        marker = pathlib.Path(context.env["MARKER"])
        if not marker.exists():  # the worker named in it last is the slow one
            marker.write_text(str(os.getpid()))
        if marker.read_text() == str(os.getpid()):
            time.sleep(0.02)
    return f"pid {os.getpid()} ok"
"""


def test_a_worker_held_up_by_slow_trials_takes_fewer_of_them(suite: Any, tmp_path: Path) -> None:
    """Workers take batches as they run out, rather than half the trials each up front."""
    _write(suite, tmp_path, "answer")
    suite.write("agent.py", SLOW_WORKER)
    done = suite.run("--parallel", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = suite.runs()
    pids = [answer.split()[1] for answer in _answers(run)]
    slow = (tmp_path / "marker").read_text()
    assert len(pids) == 200
    assert pids.count(slow) < 60, sorted(pids.count(pid) for pid in set(pids))


def test_a_worker_process_that_dies_leaves_the_rest_of_its_batch_to_resume(
    suite: Any, tmp_path: Path
) -> None:
    _write(suite, tmp_path, "die")
    died = suite.run("--parallel", "2")
    assert died.returncode == 3, died.stdout + died.stderr
    (run,) = suite.runs()
    unfinished = 200 - len(suite.trials(run))
    assert 0 < unfinished <= 50  # trial 100 and the rest of its batch (of 50 at most)
    assert f"({unfinished} error{'s' * (unfinished != 1)})" in died.stdout
    measures = json.loads((run / "measures.json").read_text())["trials"]
    errors = [m["reason"] for m in measures if m["state"] == "error"]
    assert len(errors) == unfinished
    assert all("worker process ended (exit status 3)" in reason for reason in errors)
    (tmp_path / "marker").write_text("")
    done = suite.run("--resume", run.name)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FLAKY c/a  172/200" in done.stdout
    assert len(suite.trials(run)) == 200


def test_ctrl_c_stops_the_worker_processes_and_the_run_resumes(suite: Any, tmp_path: Path) -> None:
    _write(suite, tmp_path, "hang")
    process = suite.start("--parallel", "2")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        runs = list((suite.root / "results").glob("*/trials/*/*/*/trial.json"))
        if len(runs) >= 140:
            break
        time.sleep(0.05)
    time.sleep(0.3)  # both workers are now stuck in trials 150 and up
    err = suite.interrupt(process)
    (run,) = suite.runs()
    assert f"--resume {run.name}" in err
    kept = len(suite.trials(run))
    assert 140 <= kept < 200
    (tmp_path / "marker").write_text("")
    done = suite.run("--resume", run.name)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FLAKY c/a  172/200" in done.stdout


def test_no_worker_outlives_a_run_that_failed(suite: Any, tmp_path: Path) -> None:
    from sounding.runner._config import load_suite
    from sounding.runner._run import RunOptions, run_suite
    from sounding.runner._setup import prepare_run

    _write(suite, tmp_path, "answer")
    slow = "def answer(prompt, context):\n    time.sleep(0.05)\n    return 'ok'\n"
    suite.write("stray_agent.py", f"import time\n\n\n{slow}")  # 200 trials: 5 s at least
    config = suite.root / "sounding.toml"
    config.write_text(config.read_text().replace("agent:answer", "stray_agent:answer"))
    loaded = load_suite(suite.root)
    options = RunOptions(parallel=2)
    agent, extra = prepare_run(loaded, options)
    seen: list[object] = []

    def progress(outcome: object) -> None:  # a display that breaks mid-run
        seen.append(outcome)
        if len(seen) == 20:
            raise RuntimeError("the progress display broke")

    with pytest.raises(RuntimeError, match="display broke"):
        run_suite(loaded, options, agent=agent, settings_extra=extra, on_trial=progress)
    (run,) = suite.runs()
    stored = len(suite.trials(run))
    time.sleep(1.0)
    assert len(suite.trials(run)) == stored < 200  # nothing went on running behind the run
