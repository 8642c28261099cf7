"""Helpers to write a suite in a temporary folder and run the real `sounding` command."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class SuiteDir:
    root: Path
    sounding: Any  # the `sounding` fixture: the command line, run in this process

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    def agent(self, body: str, *, extra_config: str = "") -> None:
        """A command agent: a Python script in the suite, run with this interpreter."""
        self.write("agent.py", body)
        self.write(
            "sounding.toml",
            f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n{extra_config}',
        )

    def callable_agent(self, module: str, body: str) -> None:
        """A Python callable agent: `answer` in module `module` of the suite."""
        self.write(f"{module}.py", body)
        self.write("sounding.toml", f'[agent]\ncallable = "{module}:answer"\n')

    def run(
        self, *args: str, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`sounding run` of the suite, in this process; `env`, when given, is the whole
        environment."""
        return self.sounding("run", str(self.root), *args, env=env)

    def audit(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`sounding audit` of the suite, in this process."""
        return self.sounding("audit", str(self.root), *args)

    def start(self, *args: str) -> subprocess.Popen[str]:
        """`sounding run` in the background, in a session of its own (signals reach it alone)."""
        return subprocess.Popen(
            [sys.executable, "-m", "sounding.cli", "run", str(self.root), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def interrupt(self, process: subprocess.Popen[str]) -> str:
        """Ctrl-C, as the terminal sends it to sounding; it must stop at once. Its stderr."""
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=30)
        assert time.monotonic() - started < 15, "Ctrl-C waited for the agent to finish"
        assert process.returncode == 130, err
        return err

    def runs(self) -> list[Path]:
        return sorted(p for p in (self.root / "results").iterdir() if p.is_dir())

    def trials(self, run: Path) -> list[dict[str, object]]:
        return [json.loads(p.read_text()) for p in sorted(run.glob("trials/*/*/*/trial.json"))]


@pytest.fixture
def suite(tmp_path: Path, sounding: Any) -> SuiteDir:
    return SuiteDir(tmp_path / "suite", sounding)
