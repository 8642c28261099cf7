"""The judge client through the real `openai` and `anthropic` clients, on a local server."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from sounding.judge import (
    JudgeClient,
    JudgeConfig,
    JudgeError,
    VerdictRequest,
    judge_request,
    verdict_tool,
)

KEY = {"OPENAI_API_KEY": "test-key", "ANTHROPIC_API_KEY": "test-key"}
TOOL = verdict_tool(
    {"score": "number", "passed": "bool", "reason": "string"}, bounds={"score": (0.0, 1.0)}
)
ScriptedLLM = Any  # the `llm_server` fixture of conftest.py
GOOD = {"score": 0.8, "passed": True, "reason": "polite and complete"}


def _client(server: ScriptedLLM, tmp_path: Path | None = None, **config: Any) -> JudgeClient:
    settings: dict[str, Any] = {"model": "judge-model", "base_url": f"{server.url}/v1"}
    settings |= {"seed": 7, "timeout": 5.0}
    if tmp_path is not None:
        settings["cache_dir"] = tmp_path / "cache"
    rejudge = bool(config.pop("rejudge", False))
    return JudgeClient(JudgeConfig(**(settings | config)), rejudge=rejudge, environ=KEY)


def _request(material: str = "Dear customer, your refund is on its way.") -> VerdictRequest:
    return judge_request(criteria="Is the reply polite?", material=material, tool=TOOL)


# ---- OpenAI-compatible ------------------------------------------------------------------


def test_a_forced_tool_call_is_the_verdict(llm_server: ScriptedLLM) -> None:
    llm_server.openai_call(GOOD)
    verdict = _client(llm_server).verdict(_request())
    assert verdict.values == GOOD
    assert not verdict.cached
    assert verdict.provenance.model_dump(exclude={"digest"}) == {
        "provider": "openai",
        "model": "judge-model",
        "temperature": 0.0,
        "seed": 7,
    }


def test_the_request_forces_the_tool_and_pins_sampling(llm_server: ScriptedLLM) -> None:
    llm_server.openai_call(GOOD)
    _client(llm_server, temperature=0.2, max_tokens=300).verdict(_request())
    sent = llm_server.last()
    assert llm_server.received[0].path == "/v1/chat/completions"
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "record_verdict"}}
    assert [t["function"]["name"] for t in sent["tools"]] == ["record_verdict"]
    parameters = sent["tools"][0]["function"]["parameters"]
    assert parameters["required"] == ["score", "passed", "reason"]
    assert parameters["additionalProperties"] is False
    assert (sent["temperature"], sent["seed"], sent["max_tokens"]) == (0.2, 7, 300)
    assert sent["model"] == "judge-model"
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]


def test_a_request_may_override_model_and_temperature(llm_server: ScriptedLLM) -> None:
    llm_server.openai_call(GOOD)
    request = _request().model_copy(update={"model": "other-judge", "temperature": 0.5})
    verdict = _client(llm_server).verdict(request)
    assert (llm_server.last()["model"], llm_server.last()["temperature"]) == ("other-judge", 0.5)
    assert (verdict.provenance.model, verdict.provenance.temperature) == ("other-judge", 0.5)


def test_no_seed_configured_sends_none(llm_server: ScriptedLLM) -> None:
    llm_server.openai_call(GOOD)
    _client(llm_server, seed=None).verdict(_request())
    assert "seed" not in llm_server.last()
    assert "max_tokens" not in llm_server.last()


def test_prose_instead_of_a_call_is_an_error(llm_server: ScriptedLLM) -> None:
    llm_server.openai_text("I would say 0.9, it is polite.")
    with pytest.raises(JudgeError, match=r"without calling record_verdict.*0\.9, it is polite"):
        _client(llm_server).verdict(_request())


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"score": 0.8, "passed": tru', "not JSON"),
        ({"score": 0.8, "passed": True}, "missing: reason"),
        ({**GOOD, "confidence": 0.9}, "unexpected: confidence"),
        ({**GOOD, "score": 1.5}, r"score=1.5, outside \[0.0, 1.0\]"),
        ({**GOOD, "score": "0.8"}, "not a number"),
        ({**GOOD, "passed": "yes"}, "not a boolean"),
        ('[0.8, true, "ok"]', "list arguments, not an object"),
    ],
)
def test_a_malformed_call_is_an_error(
    llm_server: ScriptedLLM, arguments: str | dict[str, Any], problem: str
) -> None:
    llm_server.openai_call(arguments)
    with pytest.raises(JudgeError, match=problem):
        _client(llm_server).verdict(_request())


def test_a_call_of_another_tool_is_an_error(llm_server: ScriptedLLM) -> None:
    llm_server.openai_call(GOOD, name="search")
    with pytest.raises(JudgeError, match=r"\(search\) instead of exactly one call"):
        _client(llm_server).verdict(_request())


def test_a_judge_that_does_not_answer_in_time_is_an_error(llm_server: ScriptedLLM) -> None:
    llm_server.openai_text("late", delay=3.0)
    with pytest.raises(JudgeError, match="did not answer within 1 s"):
        _client(llm_server, timeout=1.0).verdict(_request())
    assert llm_server.hits == 1  # no retry: one call, one vote


def test_an_http_error_is_an_error_that_says_the_status(llm_server: ScriptedLLM) -> None:
    llm_server.error(429, "slow down")
    with pytest.raises(JudgeError, match="HTTP 429"):
        _client(llm_server).verdict(_request())
    assert llm_server.hits == 1


def test_an_unreachable_server_is_an_error(tmp_path: Path) -> None:
    config = JudgeConfig(model="m", base_url="http://127.0.0.1:9/v1", timeout=2.0)
    with pytest.raises(JudgeError, match="could not be reached"):
        JudgeClient(config, environ=KEY).verdict(_request())


def test_a_missing_key_is_refused_when_the_client_is_built() -> None:
    with pytest.raises(JudgeError, match=r"\$OPENAI_API_KEY"):
        JudgeClient(JudgeConfig(model="m"), environ={})


# ---- cache and provenance -----------------------------------------------------------------


def test_a_second_identical_request_is_answered_from_the_cache(
    llm_server: ScriptedLLM, tmp_path: Path
) -> None:
    llm_server.openai_call(GOOD)
    first = _client(llm_server, tmp_path).verdict(_request())
    again = _client(llm_server, tmp_path).verdict(_request())
    assert llm_server.hits == 1
    assert again.cached and again.values == first.values
    assert again.provenance == first.provenance
    stored = json.loads((tmp_path / "cache" / f"{first.provenance.digest}.json").read_text())
    assert stored["values"] == GOOD and stored["provenance"]["model"] == "judge-model"


def test_a_verdict_counts_the_tokens_its_call_spent_and_a_cached_one_none(
    llm_server: ScriptedLLM, tmp_path: Path
) -> None:
    llm_server.openai_call(GOOD)
    client = _client(llm_server, tmp_path)
    trial, other = client.metered(), client.metered()
    first = trial.verdict(_request())
    assert first.usage is not None
    assert (first.usage.input_tokens, first.usage.output_tokens, first.usage.model) == (
        100,
        20,
        "m",  # the model that answered, as the server named it
    )
    assert trial.spent == [first.usage] and other.spent == [] and client.spent == []
    again = other.verdict(_request())
    assert again.cached and again.usage is None and other.spent == []


def test_rejudge_asks_again_and_replaces_the_cached_verdict(
    llm_server: ScriptedLLM, tmp_path: Path
) -> None:
    llm_server.openai_call(GOOD)
    llm_server.openai_call({**GOOD, "score": 0.3, "passed": False})
    _client(llm_server, tmp_path).verdict(_request())
    fresh = _client(llm_server, tmp_path, rejudge=True).verdict(_request())
    assert llm_server.hits == 2
    assert not fresh.cached and fresh.values["score"] == 0.3
    assert _client(llm_server, tmp_path).verdict(_request()).values["score"] == 0.3


def test_a_different_request_is_not_served_from_the_cache(
    llm_server: ScriptedLLM, tmp_path: Path
) -> None:
    llm_server.openai_call(GOOD)
    llm_server.openai_call(GOOD)
    llm_server.openai_call(GOOD)
    _client(llm_server, tmp_path).verdict(_request("one reply"))
    _client(llm_server, tmp_path).verdict(_request("another reply"))
    _client(llm_server, tmp_path, temperature=0.7).verdict(_request("one reply"))
    assert llm_server.hits == 3


def test_another_judge_server_is_not_served_from_the_cache(
    llm_server: ScriptedLLM, other_llm_server: ScriptedLLM, tmp_path: Path
) -> None:
    llm_server.openai_call(GOOD)
    other_llm_server.openai_call({**GOOD, "score": 0.2, "passed": False})
    other_llm_server.openai_text("from the other server")
    llm_server.openai_text("from the first server")
    first = _client(llm_server, tmp_path).verdict(_request())
    other = _client(other_llm_server, tmp_path).verdict(_request())
    assert not other.cached and other.values["score"] == 0.2
    assert other.provenance.digest != first.provenance.digest
    assert _client(other_llm_server, tmp_path).text("Rate this") == "from the other server"
    assert _client(llm_server, tmp_path).text("Rate this") == "from the first server"
    assert (llm_server.hits, other_llm_server.hits) == (2, 2)
    assert _client(llm_server, tmp_path).verdict(_request()).cached  # each keeps its own


def test_a_trailing_slash_names_the_same_server(llm_server: ScriptedLLM, tmp_path: Path) -> None:
    llm_server.openai_call(GOOD)
    _client(llm_server, tmp_path).verdict(_request())
    again = _client(llm_server, tmp_path, base_url=f"{llm_server.url}/v1/").verdict(_request())
    assert again.cached and llm_server.hits == 1


def test_an_unreadable_cache_file_is_asked_again(llm_server: ScriptedLLM, tmp_path: Path) -> None:
    llm_server.openai_call(GOOD)
    llm_server.openai_call(GOOD)
    digest = _client(llm_server, tmp_path).verdict(_request()).provenance.digest
    (tmp_path / "cache" / f"{digest}.json").write_text('{"schema": "sounding.judge-ca')
    assert not _client(llm_server, tmp_path).verdict(_request()).cached
    assert llm_server.hits == 2


def test_the_digest_is_the_sha256_of_the_exact_request(llm_server: ScriptedLLM) -> None:
    llm_server.openai_call(GOOD)
    llm_server.openai_call(GOOD)
    request = _request()
    digest = _client(llm_server).verdict(request).provenance.digest
    sent = {
        "provider": "openai",
        "base_url": f"{llm_server.url}/v1",
        "model": "judge-model",
        "temperature": 0.0,
        "seed": 7,
        "max_tokens": None,
        "messages": llm_server.last()["messages"],
        "tool": {"name": TOOL.name, "description": TOOL.description, "parameters": TOOL.parameters},
    }
    canonical = json.dumps(sent, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert digest == hashlib.sha256(canonical.encode()).hexdigest()
    assert digest != _client(llm_server, seed=8).verdict(request).provenance.digest


def test_text_answers_in_prose_and_is_cached(llm_server: ScriptedLLM, tmp_path: Path) -> None:
    llm_server.openai_text("0.9 - it answers the question")
    assert _client(llm_server, tmp_path).text("Rate this") == "0.9 - it answers the question"
    assert _client(llm_server, tmp_path).text("Rate this") == "0.9 - it answers the question"
    assert llm_server.hits == 1
    assert "tools" not in llm_server.last() and "tool_choice" not in llm_server.last()
    assert llm_server.last()["messages"] == [{"role": "user", "content": "Rate this"}]


# ---- Anthropic ----------------------------------------------------------------------------


def _anthropic(server: ScriptedLLM) -> JudgeClient:
    config = JudgeConfig(provider="anthropic", model="claude-judge", base_url=server.url, seed=3)
    return JudgeClient(config, environ=KEY)


def test_anthropic_tool_use_is_the_verdict(llm_server: ScriptedLLM) -> None:
    llm_server.anthropic_call(GOOD)
    verdict = _anthropic(llm_server).verdict(_request())
    assert verdict.values == GOOD
    assert verdict.provenance.provider == "anthropic"
    assert (verdict.provenance.temperature, verdict.provenance.seed) == (None, None)


def test_anthropic_request_forces_the_tool_without_sampling(llm_server: ScriptedLLM) -> None:
    llm_server.anthropic_call(GOOD)
    _anthropic(llm_server).verdict(_request())
    sent = llm_server.last()
    assert llm_server.received[0].path == "/v1/messages"
    assert sent["tool_choice"] == {
        "type": "tool",
        "name": "record_verdict",
        "disable_parallel_tool_use": True,
    }
    assert sent["tools"][0]["input_schema"]["required"] == ["score", "passed", "reason"]
    assert "temperature" not in sent and "seed" not in sent
    assert sent["max_tokens"] == 1024
    assert "Is the reply polite?" in sent["system"]
    assert [m["role"] for m in sent["messages"]] == ["user"]


def test_anthropic_text_only_is_an_error(llm_server: ScriptedLLM) -> None:
    llm_server.anthropic_text("Score: 0.8")
    with pytest.raises(JudgeError, match=r"without calling record_verdict.*Score: 0.8"):
        _anthropic(llm_server).verdict(_request())


def test_anthropic_malformed_input_is_an_error(llm_server: ScriptedLLM) -> None:
    llm_server.anthropic_call({"score": 0.8})
    with pytest.raises(JudgeError, match="missing: passed, reason"):
        _anthropic(llm_server).verdict(_request())


def test_anthropic_text_for_graders(llm_server: ScriptedLLM) -> None:
    llm_server.anthropic_text("0.7 because it is short")
    client = _anthropic(llm_server).metered()
    assert client.text("Rate it") == "0.7 because it is short"
    assert "system" not in llm_server.last()
    assert [(u.input_tokens, u.output_tokens, u.model) for u in client.spent] == [(1, 1, "m")]
