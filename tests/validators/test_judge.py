"""Judge mode: one forced tool call per trial, on a local OpenAI-compatible server."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sounding.judge import JudgeClient, JudgeConfig
from sounding.validators import blinding_note, blinding_notes, run_validators

Bench = Any  # the `bench` fixture of conftest.py
ScriptedLLM = Any  # the `llm_server` fixture of tests/conftest.py
KEY = {"OPENAI_API_KEY": "local"}

CASE = """
validators:
  - mode: judge
    name: note
    rubric: rubrics/note.md
    pieces: [prompt, response, diff]
    metrics: [note_usable, cites_paths, coverage]
    types: {coverage: number}
scenarios:
  - {id: s, user: write the note}
"""
VERDICT = {"note_usable": True, "cites_paths": False, "coverage": 0.5}


def judge(server: ScriptedLLM, cache: Path | None = None) -> JudgeClient:
    config = JudgeConfig(model="judge-1", base_url=f"{server.url}/v1", timeout=5.0, cache_dir=cache)
    return JudgeClient(config, environ=KEY)


def setup(bench: Bench) -> Any:
    bench.write("rubrics/note.md", "Is the note usable? Fail it when it cites no path.")
    return bench.case(CASE)


def test_one_call_returns_every_declared_metric(bench: Bench, llm_server: ScriptedLLM) -> None:
    case = setup(bench)
    llm_server.openai_call(VERDICT)
    trial = bench.trial(case, answer="See src/a.py.", diff="+x = 1", prompt="Write a note")
    found = run_validators(trial, judge=judge(llm_server))
    assert found.valid, found.reason
    assert dict(found.metrics) == VERDICT
    assert llm_server.hits == 1
    sent = llm_server.last()
    parameters = sent["tools"][0]["function"]["parameters"]
    assert parameters["properties"] == {
        "note_usable": {"type": "boolean"},
        "cites_paths": {"type": "boolean"},
        "coverage": {"type": "number"},
    }
    assert sent["tool_choice"]["function"]["name"] == "record_verdict"
    messages = json.dumps(sent["messages"])
    for piece in ("Write a note", "See src/a.py.", "+x = 1", "Fail it when it cites no path."):
        assert piece in messages
    assert "secret-cell-name" not in messages  # the judge never reads the cell
    kept = json.loads((trial.folder / "validation/note.json").read_text())
    assert kept["metrics"] == VERDICT and kept["provenance"]["model"] == "judge-1"


def test_only_the_declared_pieces_reach_the_judge(bench: Bench, llm_server: ScriptedLLM) -> None:
    bench.write("rubrics/note.md", "Usable?")
    case = bench.case(CASE.replace("[prompt, response, diff]", "[response]"))
    llm_server.openai_call(VERDICT)
    trial = bench.trial(case, answer="the final note", diff="+secret diff", prompt="the task text")
    run_validators(trial, judge=judge(llm_server))
    messages = json.dumps(llm_server.last()["messages"])
    assert "the final note" in messages
    assert "secret diff" not in messages and "the task text" not in messages


def test_a_judge_that_never_calls_the_tool_leaves_the_trial_invalid(
    bench: Bench, llm_server: ScriptedLLM
) -> None:
    case = setup(bench)
    llm_server.openai_text("The note looks usable to me.")
    found = run_validators(bench.trial(case), judge=judge(llm_server))
    assert not found.valid
    assert found.reason.startswith(
        "invalid: judge validator 'note' the judge gave no verdict: the judge answered without "
        "calling record_verdict"
    )
    assert dict(found.metrics) == {}
    assert found.kind == "judge"  # the trial is an error of the judge, not of the agent


def test_no_judge_configured_leaves_the_trial_invalid(bench: Bench) -> None:
    found = run_validators(bench.trial(setup(bench)), judge=None)
    assert found.problems == (
        "judge validator 'note' no judge is configured: add a [judge] table (provider, model) "
        "to sounding.toml, or set SOUNDING_JUDGE_MODEL (see docs/judge.md)",
    )


def test_the_same_request_is_answered_from_the_cache(
    bench: Bench, llm_server: ScriptedLLM, tmp_path: Path
) -> None:
    case = setup(bench)
    llm_server.openai_call(VERDICT)
    client = judge(llm_server, cache=tmp_path / "cache")
    first = run_validators(bench.trial(case, number=1), judge=client)
    second = run_validators(bench.trial(case, number=2), judge=client)
    assert first.metrics == second.metrics == VERDICT
    assert llm_server.hits == 1
    kept = json.loads((bench.root / "results/run/2/validation/note.json").read_text())
    assert kept["cached"] is True


@dataclass(frozen=True)
class Cell:
    name: str
    prefix: str | None = None

    def turns(self, turns: list[str]) -> list[str]:
        return [f"{self.prefix}\n\n{turns[0]}", *turns[1:]] if self.prefix else turns


def test_the_blinding_note_says_when_the_prompt_tells_the_cells_apart() -> None:
    same = [Cell("a"), Cell("b")]
    differ = [Cell("a"), Cell("b", prefix="Think step by step.")]
    assert blinding_note(["prompt", "response"], same) is None
    assert blinding_note(["response", "diff"], differ) is None  # the prompt is not read
    assert blinding_note(["prompt"], [Cell("a", prefix="x")]) is None  # one cell
    assert blinding_note(["prompt", "response"], differ) == (
        "judge is only partially blind: the prompt varies between cells, so the judge can "
        "identify the treatment"
    )


def test_blinding_notes_name_each_judge_validator_once(bench: Bench) -> None:
    case = setup(bench)
    differ = [Cell("a"), Cell("b", prefix="Think step by step.")]
    (note,) = blinding_notes([case], differ)
    assert note.endswith("(validator 'note' of case 'c')")
    assert blinding_notes([case], [Cell("a"), Cell("b")]) == []


def test_sounding_run_asks_the_configured_judge_and_keeps_its_metrics(
    bench: Bench, llm_server: ScriptedLLM
) -> None:
    judge_table = f'[judge]\nbase_url = "{llm_server.url}/v1"\nmodel = "judge-1"\n'
    bench.agent("import sys; sys.stdin.read(); print('See src/a.py.')", extra_config=judge_table)
    bench.write("rubrics/note.md", "Is the note usable?")
    gated = "invariants: {usable: {check: {type: metric, metric: note_usable}}}\n"
    bench.write("cases/c.yaml", gated + CASE.lstrip())
    llm_server.openai_call(VERDICT)
    done = bench.run(env={**os.environ, **KEY})
    assert done.returncode == 0, done.stdout + done.stderr
    trial = json.loads(next(bench.only_run().glob("trials/*/*/*#1/trial.json")).read_text())
    assert trial["metrics"] == VERDICT
    assert llm_server.hits == 1
