"""A run with the LLM judge: configured in sounding.toml, refused early, skipped when moot."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

CASE = """
scoring: {pass_threshold: 0.8}
scenarios:
  - id: polite
    user: write a polite note
    invariants:
      tone:
        description: the note is polite
        check: {type: llm_as_judge, criteria: Is the note polite?}
"""


def _judge_config(url: str, **extra: str) -> str:
    lines = ["[judge]", 'provider = "openai"', f'base_url = "{url}/v1"', 'model = "judge-1"']
    lines += [f"{key} = {value}" for key, value in extra.items()]
    return "\n" + "\n".join(lines) + "\n"


def _run(suite: Any, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return suite.run(env={**os.environ, **env})


PRICED = '\n[prices."m"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n'


def test_the_judge_scores_a_trial_through_a_forced_tool_call(suite: Any, llm_server: Any) -> None:
    suite.agent(
        "import sys; sys.stdin.read(); print('Dear team, thank you kindly.')",
        extra_config=_judge_config(llm_server.url) + PRICED,
    )
    suite.write("cases/note.yaml", CASE)
    llm_server.openai_call({"score": 0.9, "passed": True, "reason": "courteous"})
    done = _run(suite, {"OPENAI_API_KEY": "local"})
    assert done.returncode == 0, done.stdout + done.stderr
    request = llm_server.last()
    assert request["model"] == "judge-1" and request["temperature"] == 0
    assert request["tool_choice"]["function"]["name"]
    assert "Dear team, thank you kindly." in json.dumps(request["messages"])
    assert "default" not in json.dumps(request["messages"])  # no cell name reaches the judge
    (trial,) = suite.trials(suite.runs()[0])
    (tone,) = trial["score"]["checks"]
    assert tone["result"]["score"] == 0.9
    assert tone["result"]["details"]["provenance"]["model"] == "judge-1"
    # what the judge spent is the trial's, kept apart from the agent's tokens
    spent = {"input_tokens": 100, "output_tokens": 20, "cost_usd": 0.00014, "calls": 1}
    by_model = trial["judge_usage"].pop("by_model")
    assert trial["judge_usage"] == pytest.approx(spent)
    assert by_model == {"m": pytest.approx({k: spent[k] for k in list(spent)[:3]})}
    assert trial["usage"]["input_tokens"] == 0 and "cost_usd" not in trial["usage"]
    # re-scoring reads the cached verdict: the judge is not asked again
    rescored = suite.sounding(
        "score", str(suite.runs()[0]), env={**os.environ, "OPENAI_API_KEY": "local"}
    )
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr
    assert "0 verdicts changed" in rescored.stdout
    assert "asked again" not in rescored.stderr
    assert llm_server.hits == 1


def test_re_scoring_with_another_judge_model_says_so(suite: Any, llm_server: Any) -> None:
    suite.agent(
        "import sys; sys.stdin.read(); print('Dear team, thank you kindly.')",
        extra_config=_judge_config(llm_server.url),
    )
    suite.write("cases/note.yaml", CASE)
    llm_server.openai_call({"score": 0.9, "passed": True, "reason": "courteous"})
    assert _run(suite, {"OPENAI_API_KEY": "local"}).returncode == 0
    llm_server.openai_call({"score": 0.1, "passed": False, "reason": "curt"})
    rescored = suite.sounding(
        "score",
        str(suite.runs()[0]),
        "--json",
        env={**os.environ, "OPENAI_API_KEY": "local", "SOUNDING_JUDGE_MODEL": "judge-2"},
    )
    assert rescored.returncode == 1, rescored.stdout + rescored.stderr
    assert llm_server.last()["model"] == "judge-2"
    document = json.loads(rescored.stdout)
    assert document["changed"][0]["before"] == "pass"
    assert document["judges_switched"] == [
        {"was": "openai/judge-1", "now": "openai/judge-2", "verdicts": 1}
    ]
    note = " ".join(rescored.stderr.split())
    assert (
        "1 judge verdict given by openai/judge-1 when the run was scored was asked again of "
        "openai/judge-2, the suite's judge today"
    ) in note


def test_another_judge_server_judges_again_instead_of_the_cache(
    suite: Any, llm_server: Any, other_llm_server: Any
) -> None:
    suite.agent(
        "import sys; sys.stdin.read(); print('Dear team, thank you kindly.')",
        extra_config=_judge_config(llm_server.url),
    )
    suite.write("cases/note.yaml", CASE)
    llm_server.openai_call({"score": 0.9, "passed": True, "reason": "courteous"})
    other_llm_server.openai_call({"score": 0.1, "passed": False, "reason": "curt"})
    assert _run(suite, {"OPENAI_API_KEY": "local"}).returncode == 0
    moved = {"OPENAI_API_KEY": "local", "SOUNDING_JUDGE_BASE_URL": f"{other_llm_server.url}/v1"}
    done = _run(suite, moved)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (llm_server.hits, other_llm_server.hits) == (1, 1)
    (trial,) = suite.trials(suite.runs()[-1])
    (tone,) = trial["score"]["checks"]
    assert tone["result"]["score"] == 0.1 and not tone["result"]["details"].get("cached")


def test_a_missing_key_is_refused_before_any_trial(suite: Any, llm_server: Any) -> None:
    suite.agent("print('x')", extra_config=_judge_config("http://judge.example"))
    suite.write("cases/note.yaml", CASE)
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = suite.run(env=env)
    assert done.returncode == 2
    assert "OPENAI_API_KEY" in done.stderr
    assert not (suite.root / "results").exists()
    assert llm_server.hits == 0


def test_a_judge_equal_to_the_model_under_test_is_refused(suite: Any, llm_server: Any) -> None:
    suite.agent("print('x')", extra_config=_judge_config(llm_server.url))
    toml = (
        (suite.root / "sounding.toml")
        .read_text()
        .replace("[agent]\n", '[agent]\nmodel = "judge-1"\n')
    )
    (suite.root / "sounding.toml").write_text(toml)
    suite.write("cases/note.yaml", CASE)
    done = _run(suite, {"OPENAI_API_KEY": "local"})
    assert done.returncode == 2 and "also a model under test" in done.stderr


def test_a_case_needing_a_judge_without_one_is_refused(suite: Any) -> None:
    suite.agent("print('x')")
    suite.write("cases/note.yaml", CASE)
    done = _run(suite, {})
    assert done.returncode == 2
    assert "needs a judge: add a [judge] table" in done.stderr


def test_the_judge_is_skipped_when_a_gate_already_failed(suite: Any, llm_server: Any) -> None:
    suite.agent(
        "import sys; sys.stdin.read(); print('rude')", extra_config=_judge_config(llm_server.url)
    )
    suite.write("cases/note.yaml", CASE + "    expect: [{final_answer_contains: Dear}]\n")
    done = _run(suite, {"OPENAI_API_KEY": "local"})
    assert done.returncode == 1
    assert llm_server.hits == 0, "no tokens are spent on a verdict that cannot change"
    (trial,) = suite.trials(suite.runs()[0])
    tone = next(c for c in trial["score"]["checks"] if c["name"] == "tone")
    assert tone["result"]["status"] == "skipped"


def test_a_checks_own_judge_model_may_not_be_the_model_under_test(
    suite: Any, llm_server: Any
) -> None:
    suite.agent("print('x')", extra_config=_judge_config(llm_server.url))
    toml = (suite.root / "sounding.toml").read_text()
    (suite.root / "sounding.toml").write_text(toml.replace("[agent]\n", '[agent]\nmodel = "m-9"\n'))
    suite.write(
        "cases/note.yaml",
        CASE.replace(
            "criteria: Is the note polite?}", "criteria: Is the note polite?, model: m-9}"
        ),
    )
    done = _run(suite, {"OPENAI_API_KEY": "local"})
    assert done.returncode == 2 and "'m-9' is also a model under test" in done.stderr
    assert llm_server.hits == 0


def test_no_secret_reaches_the_judge_or_its_cache(suite: Any, llm_server: Any) -> None:
    """The judge reads what is stored: the trial's secrets as markers. So its reasoning and
    its cache cannot hold one, and re-scoring the stored trial asks the same question."""
    token = "sk-live-77c0ffee11"
    suite.agent(
        "import os, sys; sys.stdin.read(); print('Dear team, the key is', os.environ['API_TOKEN'])",
        extra_config=f"env = {{API_TOKEN = '{token}'}}\n" + _judge_config(llm_server.url),
    )
    suite.write("cases/note.yaml", CASE)
    llm_server.openai_call({"score": 0.9, "passed": True, "reason": "courteous"})
    done = _run(suite, {"OPENAI_API_KEY": "local"})
    assert done.returncode == 0, done.stdout + done.stderr
    asked = json.dumps(llm_server.last()["messages"])
    assert token not in asked and "[secret API_TOKEN]" in asked
    cache = suite.root / ".sounding" / "judge-cache"
    assert [p for p in cache.iterdir() if token.encode() in p.read_bytes()] == []
    rescored = suite.sounding(
        "score", str(suite.runs()[0]), env={**os.environ, "OPENAI_API_KEY": "local"}
    )
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr
    assert llm_server.hits == 1  # the stored trial asks what the run asked: from the cache
