"""Atomic results and `--resume`: a run killed with SIGKILL loses nothing already recorded."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest


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
    for delay in (0.0, 0.05, 0.2, 0.5):
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


def test_a_run_folder_has_one_writer(suite: Any, sounding_process: Any, tmp_path: Path) -> None:
    """Two `--resume` of one run at once, each a process: the second is refused, naming the
    first."""
    first = _stalled_run(suite, tmp_path, stall_from=2, trials=3)
    (run,) = suite.runs()
    try:
        second = sounding_process("run", str(suite.root), "--resume", run.name)
        assert second.returncode == 2, second.stdout + second.stderr
        message = " ".join(second.stderr.split())
        assert "is being written by another sounding" in message
        assert f"pid {first.pid}" in message and "one run folder has one writer" in message
    finally:
        suite.interrupt(first)
    (tmp_path / "go").write_text("")
    done = suite.run("--resume", run.name)  # the first holder is gone: the lock went with it
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    """A 2 MB file system of its own (tmpfs), for a run that fills it up."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root; CI runs as root")
    where = tmp_path / "disk"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], check=True)
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_stops_the_run_cleanly_and_resume_finishes_it(
    suite: Any, small_disk: Path
) -> None:
    suite.agent(
        "import sys\nsys.stdin.read()\nprint('x' * 20_000)\n",
        extra_config=f'[output]\ndir = "{small_disk}"\n',
    )
    suite.write("cases/big.yaml", "scenarios:\n  - {id: s, user: hi, trials: 20}\n")
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * 1_850_000)  # leaves room for a few trials only
    done = suite.run("--parallel", "1")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    message = " ".join(done.stderr.split())
    assert "no space left on the device writing" in message and "--resume" in message
    (run,) = [p for p in small_disk.iterdir() if p.is_dir()]
    for path in run.rglob("*.json"):
        json.loads(path.read_text())  # no half-written file
    filler.unlink()
    resumed = suite.run("--resume", run.name)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "PASS  big/s  20/20" in resumed.stdout
