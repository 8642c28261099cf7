"""A simulated user: the `[simulator]` model plays the user after the fixed turns, and its
failures are errors of the simulator, never failures of the agent."""

from __future__ import annotations

import json
from typing import Any

import pytest

AGENT = """
import json, os, sys
prompt = sys.stdin.read()
history = json.load(open(os.environ["SOUNDING_HISTORY"]))
if "ABC123" in prompt:
    print("Done: ABC123 moves to tomorrow, same cabin.")
else:
    print(f"Which reservation? (turn {os.environ['SOUNDING_TURN']}, {len(history)} before)")
"""

CASE = """
scenarios:
  - id: rebook
    user:
      - Hi, I need to change my flight.
      - simulate:
          persona: Impatient traveller
          goal: Move reservation ABC123 to the next day
          knows: {reservation_id: ABC123}
          max_turns: 3
    expect:
      - final_answer_contains: tomorrow
"""


@pytest.fixture
def simulated(suite: Any, llm_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    config = f'\n[simulator]\nmodel = "user-model"\nbase_url = "{llm_server.url}/v1"\n'
    suite.agent(AGENT, extra_config=config)
    suite.write("cases/trip.yaml", CASE)
    return suite


def _turn(llm_server: Any, message: str, done: bool = False) -> None:
    llm_server.openai_call({"message": message, "done": done}, name="user_turn")


def _trial(suite: Any) -> dict[str, Any]:
    (trial,) = suite.trials(suite.runs()[-1])
    return trial


def test_the_simulated_user_speaks_after_the_fixed_turns_until_done(
    simulated: Any, llm_server: Any
) -> None:
    _turn(llm_server, "It is ABC123, move it to tomorrow.")
    _turn(llm_server, "Thanks, that is all.", done=True)
    done = simulated.run()
    assert done.returncode == 0, done.stdout + done.stderr
    trial = _trial(simulated)
    assert trial["record"]["user_turns"] == [
        "Hi, I need to change my flight.",
        "It is ABC123, move it to tomorrow.",
    ]
    assert trial["simulated"]["ending"] == "done"
    said = trial["simulated"]["turns"]
    assert [(t["turn"], t["done"]) for t in said] == [(2, False), (3, True)]
    provenance = said[0]["provenance"]
    assert provenance["model"] == "user-model" and len(provenance["digest"]) == 64
    assert trial["simulator_usage"]["calls"] == 2 and "calls" not in trial["judge_usage"]
    # the simulator is forced to call user_turn, and reads the conversation so far
    asked = llm_server.received[1].body
    assert asked["tool_choice"]["function"]["name"] == "user_turn"
    assert "Move reservation ABC123" in asked["messages"][0]["content"]
    assert "ASSISTANT: Which reservation? (turn 0, 0 before)" in asked["messages"][1]["content"]
    assert "USER: It is ABC123" in asked["messages"][1]["content"]
    # the record keeps the whole conversation; the HTML report marks the simulated turns
    messages = trial["record"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    page = simulated.root / "report.html"
    run = str(simulated.runs()[-1])
    html = simulated.sounding("report", run, "--html", str(page))
    assert html.returncode == 0, html.stderr
    text = page.read_text()
    assert text.count("user (simulated)") == 1
    assert "said it was done: Thanks, that is all." in text


def test_a_user_done_at_once_leaves_the_fixed_turns(simulated: Any, llm_server: Any) -> None:
    _turn(llm_server, "", done=True)
    done = simulated.run()
    assert done.returncode == 1, done.stdout + done.stderr  # the agent never rebooked
    trial = _trial(simulated)
    assert trial["verdict"] == "fail" and trial["simulated"]["ending"] == "done"
    assert trial["record"]["user_turns"] == ["Hi, I need to change my flight."]


def test_a_user_never_done_stops_at_max_turns(simulated: Any, llm_server: Any) -> None:
    for _ in range(5):
        _turn(llm_server, "I am not sure, which one do you mean?")
    done = simulated.run()
    assert done.returncode == 1, done.stdout + done.stderr
    trial = _trial(simulated)
    assert trial["simulated"]["ending"] == "max_turns" and llm_server.hits == 3
    assert len(trial["record"]["user_turns"]) == 4  # the fixed turn and max_turns: 3


@pytest.mark.parametrize(
    ("script", "said"),
    [
        (lambda s: s.openai_text("Sure, my code is ABC123."), "answered without calling user_turn"),
        (lambda s: s.error(500, "overloaded"), "answered HTTP 500"),
        (lambda s: s.openai_call({"message": "hi"}, name="user_turn"), "missing: done"),
    ],
    ids=["prose", "http-500", "bad-arguments"],
)
def test_a_failing_simulator_is_an_error_of_the_simulator(
    simulated: Any, llm_server: Any, script: Any, said: str
) -> None:
    script(llm_server)
    done = simulated.run()
    assert done.returncode == 3, done.stdout + done.stderr  # an error, never a fail
    trial = _trial(simulated)
    assert trial["verdict"] == "error" and trial["error_kind"] == "simulator"
    assert trial["reason"].startswith("the simulated user gave no turn: the simulator")
    assert said in trial["reason"]
    assert trial["record"]["user_turns"] == ["Hi, I need to change my flight."]
    assert "1 simulator" in done.stdout


def test_a_replay_asks_the_simulator_nothing_and_a_new_turn_is_its_error(
    simulated: Any, llm_server: Any
) -> None:
    _turn(llm_server, "It is ABC123, move it to tomorrow.")
    _turn(llm_server, "Thanks.", done=True)
    assert simulated.run().returncode == 0
    replayed = simulated.run("--llm", "replay")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert llm_server.hits == 2  # the same conversation met the same user, from its cache
    assert all(t["cached"] for t in _trial(simulated)["simulated"]["turns"])
    assert _trial(simulated)["simulator_usage"] == {}  # and it cost nothing
    simulated.write("agent.py", "print('Which flight?')")  # the user now meets another answer
    _turn(llm_server, "It is ABC123.")
    changed = simulated.run("--llm", "replay")
    assert changed.returncode == 3, changed.stdout + changed.stderr
    assert llm_server.hits == 2  # still: a replay never asks
    trial = _trial(simulated)
    assert trial["error_kind"] == "simulator" and "no cached answer" in trial["reason"]


def test_a_callable_agent_meets_the_simulated_user_too(suite: Any, llm_server: Any) -> None:
    suite.callable_agent(
        "rebooking",
        """
        def answer(prompt, context):
            if "ABC123" in prompt:
                return "Moved to tomorrow."
            return f"Which one? ({len(context.history)} before)"
        """,
    )
    config = f'\n[simulator]\nmodel = "user-model"\nbase_url = "{llm_server.url}/v1"\n'
    config += 'api_key_env = "HOME"\n'  # a local server takes any key
    suite.write("sounding.toml", (suite.root / "sounding.toml").read_text() + config)
    suite.write("cases/trip.yaml", CASE.replace("      - Hi, I need to change my flight.\n", ""))
    _turn(llm_server, "Hello, I want to move my flight.")
    _turn(llm_server, "ABC123, please.")
    _turn(llm_server, "", done=True)
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    record = _trial(suite)["record"]
    assert record["user_turns"] == ["Hello, I want to move my flight.", "ABC123, please."]
    assert record["final_answer"] == "Moved to tomorrow."
    first = llm_server.received[0].body["messages"][1]["content"]
    assert "has not started" in first


def test_secrets_reach_the_simulator_as_markers(simulated: Any, llm_server: Any) -> None:
    simulated.write("agent.py", "import os; print('the key is', os.environ['SHOP_TOKEN'])")
    case = CASE.replace("    expect:", "    env: {SHOP_TOKEN: s3cr3t-t0ken-value}\n    expect:")
    simulated.write("cases/trip.yaml", case)
    _turn(llm_server, "", done=True)
    simulated.run()
    asked = json.dumps(llm_server.received[0].body)
    assert "s3cr3t-t0ken-value" not in asked and "SHOP_TOKEN" in asked
    cache = simulated.root / ".sounding" / "simulator-cache"
    assert not any("s3cr3t" in p.read_text() for p in cache.iterdir())


def test_a_simulated_user_without_a_simulator_is_refused_before_any_trial(suite: Any) -> None:
    suite.agent(AGENT)
    suite.write("cases/trip.yaml", CASE)
    done = suite.run()
    assert done.returncode == 2, done.stdout + done.stderr
    assert "trip.yaml:2: scenario 'rebook' simulates its user" in done.stderr
    assert "[simulator]" in done.stderr and not (suite.root / "results").exists()


def test_review_shows_apart_the_failures_the_simulated_user_caused(
    simulated: Any, llm_server: Any
) -> None:
    _turn(llm_server, "It is XYZ999.")  # a code it was never given
    _turn(llm_server, "Bye.", done=True)
    assert simulated.run().returncode == 1
    run = str(simulated.runs()[-1])
    shown = simulated.sounding("review", run, "--simulator")
    assert shown.returncode == 0, shown.stderr
    assert "1 trial with a simulated user failed, 1 of them flagged" in shown.stdout
    assert "turn 2 revealed: said 'XYZ999'" in shown.stdout
    document = json.loads(simulated.sounding("review", run, "--simulator", "--json").stdout)
    (trial,) = document["trials"]
    assert document["schema"] == "sounding.review/1" and trial["verdict"] == "fail"
    assert {f["kind"] for f in trial["flags"]} == {"revealed", "withheld"}


def test_an_agent_that_fails_a_turn_ends_the_conversation(
    simulated: Any, llm_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulated.write("agent.py", AGENT + "\nif 'ABC123' in prompt: sys.exit(1)\n")
    _turn(llm_server, "It is ABC123.")
    _turn(llm_server, "Hello?")
    monkeypatch.setenv("SOUNDING_SIMULATOR_MODEL", "another-user-model")
    price = '\n[prices."m"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n'
    simulated.write("sounding.toml", (simulated.root / "sounding.toml").read_text() + price)
    done = simulated.run()
    assert done.returncode == 1, done.stdout + done.stderr  # the agent failed its turn
    trial = _trial(simulated)
    assert trial["simulated"]["ending"] == "agent" and trial["error_kind"] is None
    assert llm_server.hits == 1 and llm_server.last()["model"] == "another-user-model"
    spent = {"input_tokens": 100, "output_tokens": 20, "cost_usd": 0.00014, "calls": 1}
    assert trial["simulator_usage"].pop("by_model")["m"]["cost_usd"] == pytest.approx(0.00014)
    assert trial["simulator_usage"] == pytest.approx(spent)  # priced as the model answered


def test_the_simulator_may_not_be_the_model_under_test(suite: Any) -> None:
    config = '\n[simulator]\nmodel = "gpt-4o"\nbase_url = "http://127.0.0.1:9/v1"\n'
    suite.agent(AGENT, extra_config=config)
    text = (suite.root / "sounding.toml").read_text()
    suite.write("sounding.toml", text.replace("[agent]\n", '[agent]\nmodel = "gpt-4o"\n'))
    suite.write("cases/trip.yaml", CASE)
    done = suite.run()
    assert done.returncode == 2, done.stdout + done.stderr
    assert "the simulator model 'gpt-4o' is also a model under test" in done.stderr
    assert "allow_same_model = true in [simulator]" in done.stderr


def test_retry_errors_runs_again_a_trial_the_simulator_failed_never_one_the_agent_did(
    simulated: Any, llm_server: Any
) -> None:
    llm_server.error(500, "overloaded")
    _turn(llm_server, "It is ABC123, move it to tomorrow.")
    _turn(llm_server, "Thanks.", done=True)
    done = simulated.run("--retry-errors", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 trial ran again after an error that was not the agent's (1 simulator)" in (
        done.stderr
    )
    run = simulated.runs()[-1]
    (kept,) = run.glob("retried/*/*/*/trial.json")
    assert kept.parent.name == "rebook#1.1"
    first = json.loads(kept.read_text())
    assert first["verdict"] == "error" and first["error_kind"] == "simulator"
    assert _trial(simulated)["verdict"] == "pass"
    # an error of the agent's own is its result: it never runs again
    simulated.write("agent.py", "import sys; sys.stdin.read(); raise SystemExit(-9)")
    again = simulated.run("--retry-errors", "2")
    assert "ran again" not in again.stderr and not list(simulated.runs()[-1].glob("retried"))
