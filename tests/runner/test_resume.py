"""Atomic results and `--resume`: a run killed with SIGKILL loses nothing already recorded."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any


def _stalled_run(suite: Any, tmp_path: Path, *, stall_from: int, trials: int) -> Any:
    """`sounding run --parallel 1` of an agent that logs each trial it starts in
    tmp_path/calls and, from trial `stall_from` on, waits for tmp_path/go. Returns the
    process once the first stalled trial has started."""
    log = tmp_path / "calls"
    log.mkdir()
    suite.agent(
        f"""
        import os, sys, time
        sys.stdin.read()
        trial = int(os.environ["SOUNDING_TRIAL"])
        open(os.path.join({str(log)!r}, f"t{{trial}}"), "a").write("x")
        if trial >= {stall_from} and not os.path.exists({str(tmp_path / "go")!r}):
            time.sleep(60)
        print("done")
        """
    )
    suite.write("cases/long.yaml", f"scenarios:\n  - {{id: s, user: hi, trials: {trials}}}\n")
    process = suite.start("--parallel", "1")
    deadline = time.monotonic() + 30
    while not (log / f"t{stall_from}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return process


def test_a_killed_run_resumes_without_rerunning_finished_trials(suite: Any, tmp_path: Path) -> None:
    log = tmp_path / "calls"
    process = _stalled_run(suite, tmp_path, stall_from=4, trials=6)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate()
    (run,) = suite.runs()
    finished = suite.trials(run)
    assert [t["trial"] for t in finished] == [1, 2, 3]
    for path in run.rglob("*.json"):
        json.loads(path.read_text())  # no half-written file anywhere
    (tmp_path / "go").write_text("")
    done = suite.run("--resume", run.name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  long/s  6/6" in done.stdout
    counts = {p.name: len(p.read_text()) for p in log.iterdir()}
    assert counts == {"t1": 1, "t2": 1, "t3": 1, "t4": 2, "t5": 1, "t6": 1}
    assert len(suite.trials(run)) == 6


def test_a_run_an_older_sounding_left_resumes_in_its_own_layout(
    suite: Any, tmp_path: Path, as_older_run: Any
) -> None:
    process = _stalled_run(suite, tmp_path, stall_from=3, trials=4)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate()
    (run,) = suite.runs()
    as_older_run(run)  # a folder per scenario, a folder per trial inside it
    (tmp_path / "go").write_text("")
    done = suite.run("--resume", run.name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  long/s  4/4" in done.stdout
    finished = sorted(p.parent.name for p in run.glob("trials/default/long/s/*/trial.json"))
    assert finished == ["1", "2", "3", "4"]
    counts = {p.name: len(p.read_text()) for p in (tmp_path / "calls").iterdir()}
    assert counts == {"t1": 1, "t2": 1, "t3": 2, "t4": 1}


def test_resume_of_an_unknown_run_says_which_runs_exist(suite: Any) -> None:
    suite.agent("print('x')")
    suite.write("cases/a.yaml", "scenarios:\n  - {id: s, user: hi}\n")
    suite.run()
    done = suite.run("--resume", "nope")
    assert done.returncode == 2
    assert "nothing to resume" in done.stderr and suite.runs()[0].name in done.stderr


def test_ctrl_c_stops_at_once_keeps_finished_trials_and_resumes(suite: Any, tmp_path: Path) -> None:
    log = tmp_path / "calls"
    process = _stalled_run(suite, tmp_path, stall_from=3, trials=5)
    err = suite.interrupt(process)
    (run,) = suite.runs()
    assert f"--resume {run.name}" in err and "2 trials finished" in err
    assert [t["trial"] for t in suite.trials(run)] == [1, 2]
    (tmp_path / "go").write_text("")
    done = suite.run("--resume", run.name)
    assert done.returncode == 0, done.stdout + done.stderr
    counts = {p.name: len(p.read_text()) for p in log.iterdir()}
    assert counts == {"t1": 1, "t2": 1, "t3": 2, "t4": 1, "t5": 1}


def test_ctrl_c_at_any_moment_exits_130_without_a_traceback(suite: Any) -> None:
    """Interrupt a busy run of short trials at many different moments: every time, 130 and
    the resume hint, never a traceback (the run's main thread once died of a Ctrl-C that
    landed inside a pure-Python lock wait: `RuntimeError: release unlocked lock`)."""
    suite.callable_agent("quick", "def answer(prompt, context):\n    return 'ok'\n")
    suite.write("cases/c.yaml", "scenarios:\n  - {id: a, user: hi, trials: 20000}\n")
    for delay in (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8):
        process = suite.start("--parallel", "4")
        started = time.monotonic()
        while not list(suite.root.glob("results/*/run.json")) and time.monotonic() < started + 30:
            time.sleep(0.01)  # the run has loaded its cases and planned: trials are starting
        time.sleep(delay)
        err = suite.interrupt(process)
        assert "Traceback" not in err, err
        (run,) = suite.runs()
        assert f"--resume {run.name}" in err, err
        shutil.rmtree(run)
