"""Real runs for the viewer, made once per session by `sounding run` on a small suite whose
agent calls a tool, asks an HTTP mock, changes its workspace and prints hostile text; and
`sounding view` itself, started as a user starts it, on a folder holding copies of them.

Tests must not change the session's runs: one that needs a run in progress builds its own
from copies of the finished one's files (`live_run`).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

AGENT = """
import json, os, sys, urllib.request
prompt = sys.stdin.read()
scenario = os.environ["SOUNDING_SCENARIO"]
trial = int(os.environ["SOUNDING_TRIAL"])

def event(**fields):
    with open(os.environ["SOUNDING_TRACE"], "a") as trace:
        trace.write(json.dumps(fields) + "\\n")

url = os.environ["SOUNDING_SHOP_URL"] + "/refunds?order=A-7"
asked = urllib.request.Request(url, data=b'{"order": "A-7"}', method="POST")
reply = urllib.request.urlopen(asked, timeout=10).read().decode()
event(type="tool_call", id="c1", name="issue_refund", args={"order": "A-7", "note": "<b>x</b>"})
event(type="tool_result", id="c1", result=reply)
event(type="usage", input_tokens=100 + trial, output_tokens=20, cost_usd=0.001 * trial)
with open("notes.txt", "w") as notes:
    notes.write("refund noted for " + scenario + "\\n")
print("<script>alert(1)</script>")
good = scenario == "steady" or (scenario == "wobbly" and trial % 2 == 1)
print("refunded" if good else "sorry")
"""

CASE = """
defaults: {trials: 3, timeout: 20s}
services:
  - name: shop
    type: http_mock
    record: true
    routes:
      - {method: POST, path: /refunds, json: {refund: r-1, status: done}}
scenarios:
  - id: steady
    user: refund order A-7
    expect: [{final_answer_contains: refunded}]
  - id: wobbly
    user: refund order A-7 please
    expect: [{final_answer_contains: refunded}]
  - id: broken
    user: refund it now
    expect: [{final_answer_contains: refunded}]
"""

SCRIPT_TAG = "<script>alert(1)</script>"


def make_suite(root: Path) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "agent.py").write_text(textwrap.dedent(AGENT).lstrip(), encoding="utf-8")
    (root / "sounding.toml").write_text(
        f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n', encoding="utf-8"
    )
    (root / "cases" / "shop.yaml").write_text(textwrap.dedent(CASE).lstrip(), encoding="utf-8")
    return root


def run_suite(suite: Path, sounding: Any) -> Path:
    """Run the real `sounding run`; the folder of the run it made."""
    before = set((suite / "results").glob("*")) if (suite / "results").is_dir() else set()
    done = sounding("run", str(suite), "--parallel", "3")
    assert done.returncode == 1, done.stdout + done.stderr  # a flaky and a failing scenario
    (run,) = set((suite / "results").glob("*")) - before
    return run


@pytest.fixture(scope="session")
def results(tmp_path_factory: pytest.TempPathFactory, sounding: Any) -> Path:
    """A results folder with a finished run of the suite twice: `base` and `cand` (one real
    run, copied: what a comparison shows does not need two)."""
    suite = make_suite(tmp_path_factory.mktemp("view") / "suite")
    folder = tmp_path_factory.mktemp("view-results")
    run = run_suite(suite, sounding)
    for name in ("base", "cand"):
        shutil.copytree(run, folder / name)
    return folder


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under `folder`, with its size and modification time."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        found[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns)
    return found


@dataclass
class LiveRun:
    """A run in progress made from a finished one: its plan, then its trials one by one."""

    source: Path
    root: Path

    def trials(self) -> list[Path]:
        return sorted(p.parent for p in self.source.glob("trials/*/*/*/trial.json"))

    def land(self, folder: Path) -> None:
        """Put one finished trial in place the way the runner does: its files first, its
        trial.json last."""
        target = self.root / folder.relative_to(self.source)
        shutil.copytree(folder, target, ignore=shutil.ignore_patterns("trial.json"))
        shutil.copy2(folder / "trial.json", target / "trial.json")

    def finish(self) -> None:
        shutil.copy2(self.source / "summary.json", self.root / "summary.json")


def live_run(source: Path, root: Path) -> LiveRun:
    root.mkdir(parents=True)
    for name in ("run.json", "origins"):
        if (source / name).is_dir():
            shutil.copytree(source / name, root / name)
        elif (source / name).exists():
            shutil.copy2(source / name, root / name)
    return LiveRun(source, root)


@dataclass
class Viewer:
    url: str
    process: subprocess.Popen[str]


def start_viewer(folder: Path, *args: str) -> Viewer:
    """`sounding view FOLDER --port 0 --no-browser`, and the URL it printed."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sounding.cli",
            "view",
            str(folder),
            "--port",
            "0",
            "--no-browser",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"http://\S+", line)
    if found is None:
        process.kill()
        raise AssertionError(f"no URL printed: {line!r} {process.communicate()[1]}")
    return Viewer(found[0], process)


def stop_viewer(viewer: Viewer) -> int:
    """Ctrl-C, as a user stops it; its exit code (130, as every command interrupted)."""
    viewer.process.send_signal(signal.SIGINT)
    try:
        viewer.process.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        viewer.process.kill()
        viewer.process.communicate()
        raise AssertionError("sounding view did not stop on Ctrl-C") from None
    return viewer.process.returncode


@pytest.fixture(scope="module")
def viewer(results: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    """`sounding view` on a copy of the session's results folder (tests add runs to it)."""
    folder = tmp_path_factory.mktemp("served") / "results"
    shutil.copytree(results, folder)
    served = start_viewer(folder)
    served.folder = folder  # type: ignore[attr-defined]
    yield served
    assert stop_viewer(served) == 130  # interrupted, as every command stopped by Ctrl-C


@pytest.fixture(scope="module")
def chromium() -> Path:
    """Debian's chromium, or a skip saying how to get it (a failure where CI requires it)."""
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        reason = f"{chromium} is absent: apt-get install -y chromium to run the page tests"
        if os.environ.get("SOUNDING_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"SOUNDING_REQUIRE_CHROMIUM=1 but {reason}")
        pytest.skip(reason)
    return chromium


@pytest.fixture
def fresh_suite(tmp_path: Path) -> Path:
    """The session's suite, made again for a test that runs it its own way."""
    return make_suite(tmp_path / "suite")


@pytest.fixture
def make_live() -> object:
    """`live_run(source, root)`: a run in progress, made from a finished one."""
    return live_run


@pytest.fixture
def files_of() -> object:
    """`snapshot(folder)`: every file under a folder with its size and mtime."""
    return snapshot


@pytest.fixture
def start() -> object:
    """`start_viewer(folder, *args)`: `sounding view` started, with the URL it printed."""
    return start_viewer


@pytest.fixture
def stop() -> object:
    """`stop_viewer(viewer)`: Ctrl-C, and its exit code."""
    return stop_viewer
