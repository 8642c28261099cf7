"""A suite in a temporary folder, its validators as real executables, and finished trials."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tomllib
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
    sounding: Any  # the `sounding` fixture: `sounding(*args, env=...)`, in this process

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

    def run(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.sounding("run", str(self.root), *args, env=env)

    def judged_agent(self, judge_url: str, judge_extra: str = "") -> None:
        """An agent whose note differs by trial (so no judge verdict is another's, cached),
        and a `[judge]` on the scripted server at `judge_url`."""
        agent = "import os, sys; sys.stdin.read(); print('note ' + os.environ['SOUNDING_TRIAL'])"
        self.agent(
            agent,
            f'\n[judge]\nbase_url = "{judge_url}/v1"\nmodel = "judge-1"\n{judge_extra}',
        )

    def fill_form(self, run: Path, values: dict[str, list[Any]]) -> None:
        """Export the run's form, fill `values` (metric → a value per trial number), import."""
        exported = self.sounding("form", "export", str(run))
        assert exported.returncode == 0, exported.stderr
        run_id = tomllib.loads((run / "form.toml").read_text())["run"]
        folders = json.loads((run / "form-key.json").read_text())["trials"]
        lines = ['schema = "sounding.form/1"', f'run = "{run_id}"']
        for token, folder in folders.items():
            number = int(folder.rsplit("#", 1)[1])
            lines += ["[[trial]]", f'token = "{token}"', "[trial.metrics]"]
            lines += [f"{name} = {json.dumps(said[number - 1])}" for name, said in values.items()]
        (run / "filled.toml").write_text("\n".join(lines) + "\n")
        imported = self.sounding("form", "import", str(run), str(run / "filled.toml"))
        assert imported.returncode == 0, imported.stdout + imported.stderr

    def only_run(self) -> Path:
        (run,) = sorted(p for p in (self.root / "results").iterdir() if p.is_dir())
        return run


@pytest.fixture
def bench(tmp_path: Path, sounding: Any) -> Bench:
    root = tmp_path / "suite"
    root.mkdir()
    return Bench(root, sounding)
