"""`[capture] otlp`: the agent's OpenTelemetry spans become its record, with no code change."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parents[1] / "fixtures"
CASE = """
scenarios:
  - id: s
    user: Where is my order A-1001?
    expect:
      - tool_called: {name: lookup_order, args: {order_id: A-1001}}
      - final_answer_contains: shipped
"""
POSTING_AGENT = """
import gzip, os, sys, urllib.error, urllib.request
sys.stdin.read()
here = os.path.dirname(os.path.abspath(__file__))
body, headers = open(os.path.join(here, "export.bin"), "rb").read(), {}
for line in open(os.path.join(here, "headers.txt")).read().splitlines():
    name, _, value = line.partition(": ")
    headers[name] = value
target = os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
try:
    print(urllib.request.urlopen(urllib.request.Request(target, body, headers)).status)
except urllib.error.HTTPError as exc:
    print(exc.code, exc.read().decode())
"""


def _posting(suite: Any, body: bytes, headers: str, case: str) -> None:
    """An agent that posts `body` with `headers` to its receiver and prints the status."""
    _capturing(suite, POSTING_AGENT)
    (suite.root / "export.bin").write_bytes(body)
    suite.write("headers.txt", headers)
    suite.write("cases/c.yaml", case)


def _capturing(suite: Any, agent: str, extra: str = "") -> None:
    suite.write("agent.py", agent)
    suite.write(
        "sounding.toml",
        f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n{extra}'
        "[capture]\notlp = true\n",
    )
    suite.write("cases/c.yaml", CASE)


def _sandboxes() -> list[str]:
    needed = os.environ.get("SOUNDING_REQUIRE_SERVICES") == "1"
    return ["none", "bwrap"] if shutil.which("bwrap") or needed else ["none"]


@pytest.mark.parametrize("sandbox", _sandboxes())
def test_spans_from_the_opentelemetry_sdk_are_the_trials_record(suite: Any, sandbox: str) -> None:
    agent = (FIXTURES / "agents" / "otel_sdk_agent.py").read_text()
    _capturing(suite, agent, f'sandbox = "{sandbox}"\n')
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    (trial,) = suite.trials(suite.runs()[0])
    record: dict[str, Any] = trial["record"]  # type: ignore[assignment]
    assert record["source_format"] == "otel"
    assert [call["name"] for call in record["tool_calls"]] == ["lookup_order"]
    assert record["usage"]["input_tokens"] == 50
    (spans,) = suite.runs()[0].glob("trials/*/*/*/spans.json")
    assert json.loads(spans.read_text())["resourceSpans"]  # kept as they came


def test_an_otlp_json_export_gzipped_is_read_too(suite: Any) -> None:
    export = gzip.compress((FIXTURES / "otel" / "tool_agent.json").read_bytes())
    case = (
        "scenarios:\n  - id: s\n    user: Where is A-1001?\n"
        "    expect: [{tool_called: {name: track_shipment}}, {final_answer_contains: DHL}]\n"
    )
    _posting(suite, export, "Content-Type: application/json\nContent-Encoding: gzip", case)
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_export_that_is_not_otlp_is_refused_to_the_exporter(suite: Any) -> None:
    case = (
        "scenarios:\n  - id: s\n    user: hi\n"
        "    expect: [{final_answer_contains: '400 cannot read the export'}]\n"
    )
    _posting(suite, b"not protobuf", "Content-Type: application/x-protobuf", case)
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr


def test_without_capture_the_agent_gets_no_exporter_settings(suite: Any) -> None:
    suite.agent(
        "import os, sys\nsys.stdin.read()\n"
        "print(sorted(k for k in os.environ if k.startswith('OTEL_EXPORTER')))\n"
    )
    suite.write(
        "cases/c.yaml",
        "scenarios:\n  - id: s\n    user: hi\n    expect: [{final_answer_contains: '[]'}]\n",
    )
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr


WITHOUT_PROTO = """
import runpy, sys
sys.modules["opentelemetry.proto"] = None
sys.argv = ["sounding", *sys.argv[1:]]
runpy.run_module("sounding.cli", run_name="__main__")
"""


def test_capture_without_the_otel_extra_is_refused_before_any_trial(suite: Any) -> None:
    _capturing(suite, "print('ran')\n")
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_PROTO, "run", str(suite.root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "pip install 'sounding[otel]'" in " ".join(done.stderr.split())
    assert not (suite.root / "results").exists()


SECRET_KEY = "sk-test-do-not-keep-7f3a"


def _proxied(suite: Any, agent: str, upstream: str, args: str = "") -> None:
    suite.write("agent.py", (FIXTURES / "agents" / agent).read_text())
    suite.write(
        "sounding.toml",
        f'[agent]\ncommand = "{sys.executable} {{suite}}/agent.py {args}"\n'
        f'env = {{OPENAI_API_KEY = "{SECRET_KEY}", ANTHROPIC_API_KEY = "{SECRET_KEY}"}}\n'
        f'[capture]\nllm = true\nopenai_upstream = "{upstream}/v1"\n'
        f'anthropic_upstream = "{upstream}"\n',
    )
    suite.write("cases/c.yaml", CASE)


def _shipping(llm_server: Any, suite: Any, args: str = "") -> None:
    """An OpenAI-client agent whose model asks for one lookup, then answers."""
    llm_server.openai_call({"order_id": "A-1001"}, name="lookup_order")
    llm_server.openai_text("It has shipped, it arrives on Friday.")
    _proxied(suite, "openai_sdk_agent.py", llm_server.url, args)


def _captured(suite: Any) -> dict[str, Any]:
    (trial,) = suite.trials(suite.runs()[0])
    for path in suite.runs()[0].rglob("*"):
        assert not path.is_file() or SECRET_KEY.encode() not in path.read_bytes(), path
    return trial  # type: ignore[no-any-return]


@pytest.mark.parametrize("args", ["", "stream"], ids=["plain", "streamed"])
def test_an_openai_sdk_agent_is_recorded_through_the_proxy(
    suite: Any, llm_server: Any, args: str
) -> None:
    _shipping(llm_server, suite, args)
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    trial = _captured(suite)
    record = trial["record"]
    assert record["source_format"] == "openai"
    assert record["tool_calls"][0]["result"] == '{"order_id": "A-1001", "status": "shipped"}'
    assert [r.path for r in llm_server.received] == ["/v1/chat/completions"] * 2
    (calls,) = suite.runs()[0].glob("trials/*/*/*/llm-calls.json")
    assert [c["status"] for c in json.loads(calls.read_text())] == [200, 200]


@pytest.mark.parametrize(("priced", "cost"), [("m", 0.006), ("other-model", None)])
def test_an_anthropic_sdk_agent_is_recorded_through_the_proxy_with_its_cost(
    suite: Any, llm_server: Any, priced: str, cost: float | None
) -> None:
    llm_server.anthropic_call({"order_id": "A-1001"}, name="lookup_order")
    llm_server.anthropic_text("It has shipped.")
    _proxied(suite, "anthropic_sdk_agent.py", llm_server.url)
    price = f'[prices."{priced}"]\ninput_per_mtok = 1000\noutput_per_mtok = 2000\n'
    suite.write("sounding.toml", (suite.root / "sounding.toml").read_text() + price)
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    record = _captured(suite)["record"]
    assert record["source_format"] == "anthropic"
    usage = record["usage"]  # one token in and one out in each of the two scripted answers
    assert (usage["input_tokens"], usage["output_tokens"]) == (2, 2)
    assert usage["cost_usd"] == (pytest.approx(cost) if cost else None)  # never a guess


def test_an_upstream_that_cannot_be_reached_is_told_to_the_agent(suite: Any) -> None:
    _proxied(suite, "openai_sdk_agent.py", "http://127.0.0.1:9")  # nothing listens there
    done = suite.run()
    assert done.returncode == 1, done.stdout + done.stderr  # the agent failed: its trial fails
    stderr = next(suite.runs()[0].glob("trials/*/*/*/stderr.txt")).read_text()
    assert "sounding's proxy could not reach http://127.0.0.1:9/v1/chat/completions" in stderr


@pytest.mark.parametrize("args", ["", "stream"], ids=["plain", "streamed"])
def test_a_recorded_run_replays_with_the_same_verdicts_and_no_model(
    suite: Any, llm_server: Any, args: str
) -> None:
    _shipping(llm_server, suite, args)
    recorded = suite.run("--llm", "record")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    (cassette,) = (suite.root / "cassettes").rglob("*.json")
    assert cassette.relative_to(suite.root).as_posix() == "cassettes/default/c/s/1.json"
    assert SECRET_KEY not in cassette.read_text()
    asked = llm_server.hits

    replayed = suite.run("--llm", "replay")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert llm_server.hits == asked  # not one call reached the model
    first, second = (suite.trials(run)[0] for run in suite.runs())
    assert first["record"]["tool_calls"] == second["record"]["tool_calls"]


def test_a_request_the_cassette_cannot_answer_is_an_error_naming_both(
    suite: Any, llm_server: Any
) -> None:
    _shipping(llm_server, suite)
    assert suite.run("--llm", "record").returncode == 0
    asked = llm_server.hits
    suite.write("cases/c.yaml", CASE.replace("Where is my order", "Where is order"))
    done = suite.run("--llm", "replay")
    assert done.returncode == 3, done.stdout + done.stderr  # an error, never a fail
    trial = suite.trials(suite.runs()[-1])[0]
    assert "cassettes/default/c/s/1.json holds no answer to the agent's openai request" in str(
        trial["reason"]
    )
    assert "POST /chat/completions (key " in str(trial["reason"])
    assert llm_server.hits == asked


def test_a_trial_over_its_token_budget_is_refused_further_calls_and_is_an_error(
    suite: Any, llm_server: Any
) -> None:
    llm_server.anthropic_call({"order_id": "A-1001"}, name="lookup_order")
    llm_server.anthropic_text("It has shipped.")
    _proxied(suite, "anthropic_sdk_agent.py", llm_server.url)
    budget = "[defaults]\nmax_tokens = 1\n"
    suite.write("sounding.toml", budget + (suite.root / "sounding.toml").read_text())
    done = suite.run()
    assert done.returncode == 3, done.stdout + done.stderr  # an error, not a fail
    trial = suite.trials(suite.runs()[0])[0]
    assert trial["reason"] == "over its budget: 2 tokens, over [defaults] max_tokens = 1"
    assert trial["error_kind"] == "budget"
    assert llm_server.hits == 1  # the second call never reached the model
    stderr = next(suite.runs()[0].glob("trials/*/*/*/stderr.txt")).read_text()
    assert "the trial is over its budget" in stderr  # what the agent's client was told


def test_a_run_past_its_max_cost_starts_no_new_trial_and_resumes(
    suite: Any, llm_server: Any
) -> None:
    for _ in range(2):  # two trials, two calls each
        llm_server.anthropic_call({"order_id": "A-1001"}, name="lookup_order")
        llm_server.anthropic_text("It has shipped.")
    _proxied(suite, "anthropic_sdk_agent.py", llm_server.url)
    price = "[prices.m]\ninput_per_mtok = 1000\noutput_per_mtok = 2000\n"  # 0.006 a trial
    suite.write("sounding.toml", (suite.root / "sounding.toml").read_text() + price)
    suite.write("cases/c.yaml", CASE.replace("  - id: s\n", "  - id: s\n    trials: 2\n"))
    stopped = suite.run("--parallel", "1", "--max-cost", "0.005", "--llm", "record")
    assert stopped.returncode == 130, stopped.stdout + stopped.stderr
    assert "the run spent 0.0060 USD, over --max-cost 0.005" in stopped.stderr
    assert llm_server.hits == 2
    (run,) = suite.runs()
    other = suite.run("--resume", run.name, "--llm", "replay")
    assert other.returncode == 2 and "started with --llm record" in other.stderr
    resumed = suite.run("--resume", run.name)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "PASS  c/s  2/2" in resumed.stdout
    # the resumed run went on recording, as it started
    cassettes = suite.root / "cassettes" / "default" / "c" / "s"
    assert sorted(p.name for p in cassettes.iterdir()) == ["1.json", "2.json"]


def _response(*output: dict[str, Any]) -> dict[str, Any]:
    """A Responses API answer, as the scripted model gives it."""
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    head = {"id": "resp_1", "object": "response", "created_at": 0, "model": "m"}
    rest = {"status": "completed", "parallel_tool_calls": True, "tool_choice": "auto"}
    return {**head, **rest, "tools": [], "output": list(output), "usage": usage}


def test_an_agent_on_the_responses_api_is_recorded_through_the_proxy(
    suite: Any, llm_server: Any
) -> None:
    arguments = json.dumps({"order_id": "A-1001"})
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup_order"}
    said = {"type": "output_text", "text": "It has shipped.", "annotations": []}
    text = {"type": "message", "id": "msg_1", "role": "assistant", "content": [said]}
    llm_server.answer(_response({**call, "arguments": arguments}))
    llm_server.answer(_response({**text, "status": "completed"}))
    _proxied(suite, "openai_responses_agent.py", llm_server.url)
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    record = _captured(suite)["record"]
    assert [r.path for r in llm_server.received] == ["/v1/responses"] * 2
    assert record["tool_calls"][0]["result"] == '{"order_id": "A-1001", "status": "shipped"}'
    assert (record["usage"]["input_tokens"], record["usage"]["output_tokens"]) == (20, 10)


def test_a_cassette_that_is_not_one_is_an_error_naming_it(suite: Any, llm_server: Any) -> None:
    _shipping(llm_server, suite)
    cassette = suite.root / "cassettes/default/c/s/1.json"
    cassette.parent.mkdir(parents=True)
    cassette.write_text('{"schema": "sounding.cassette/1", "calls": "truncated')
    done = suite.run("--llm", "replay")
    assert done.returncode == 3, done.stdout + done.stderr
    trial = suite.trials(suite.runs()[0])[0]
    assert str(trial["reason"]).startswith(f"{cassette} is not JSON")
    assert "record it again with `sounding run --llm record`" in str(trial["reason"])
    assert not list(suite.runs()[0].glob("trials/*/*/*/harness-error.txt"))
    assert llm_server.hits == 0
