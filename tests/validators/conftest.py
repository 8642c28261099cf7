"""A suite in a temporary folder, its validators as real executables, and finished trials."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sounding.checks import Evidence
from sounding.record import RunRecord
from sounding.spec import Case, load_case
from sounding.validators import FinishedTrial


@dataclass
class Bench:
    """A suite folder: case files, executable validators, trial folders, the real CLI."""

    root: Path

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    def script(self, relative: str, body: str) -> Path:
        """An executable Python script run by this interpreter (the one with sounding)."""
        path = self.write(relative, f"#!{sys.executable}\n" + textwrap.dedent(body).lstrip())
        path.chmod(0o755)
        return path

    def answering(self, relative: str, answer: Any) -> Path:
        """A validator that prints `answer` (a JSON-able value, or raw text) and exits 0."""
        text = answer if isinstance(answer, str) else json.dumps(answer)
        return self.script(relative, f"import sys\nsys.stdout.write({text!r})\n")

    def case(self, text: str, name: str = "c.yaml") -> Case:
        return load_case(self.write(f"cases/{name}", text), suite_dir=self.root)

    def trial(
        self,
        case: Case,
        *,
        answer: str | None = "done",
        touched: tuple[str, ...] = (),
        byproducts: tuple[str, ...] = (),
        diff: str = "",
        prompt: str = "do the task",
        number: int = 1,
        files: dict[str, str] | None = None,
    ) -> FinishedTrial:
        folder = self.root / "results" / "run" / str(number)
        workspace = folder / "workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        for name, text in (files or {}).items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_text(text)
        record = RunRecord(final_answer=answer, user_turns=[prompt])
        evidence = Evidence(
            record=record,
            workspace=workspace,
            touched=frozenset(touched),
            byproducts=frozenset(byproducts),
            diff=diff,
            cell="secret-cell-name",
        )
        return FinishedTrial(
            folder=folder,
            case=case,
            scenario=case.scenarios[0],
            cell="secret-cell-name",
            trial=number,
            prompt=prompt,
            evidence=evidence,
            suite_dir=self.root,
            record=record.to_json(),
        )

    def agent(self, body: str, extra_config: str = "") -> None:
        """A command agent: a Python script of the suite, run with this interpreter."""
        self.write("agent.py", body)
        self.write(
            "sounding.toml",
            f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n{extra_config}',
        )

    def sounding(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sounding.cli", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=env,
        )

    def run(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.sounding("run", str(self.root), *args, env=env)

    def only_run(self) -> Path:
        (run,) = sorted(p for p in (self.root / "results").iterdir() if p.is_dir())
        return run


@pytest.fixture
def bench(tmp_path: Path) -> Bench:
    root = tmp_path / "suite"
    root.mkdir()
    return Bench(root)
