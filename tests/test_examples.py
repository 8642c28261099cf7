"""The shipped examples work as their READMEs say, so they cannot rot."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "examples/support-records"
EXPECTED = {
    "refund-ok.jsonl": ("pass", None),
    "refund-ok-openai.json": ("pass", None),
    "refund-over-ceiling-approved.jsonl": ("pass", None),
    "refund-twice.jsonl": ("fail", "expect[1] once_per_arg"),
    "refund-over-ceiling.jsonl": ("fail", "expect[2] arg_ceiling"),
    "invented-order-id.jsonl": ("fail", "expect[3] provenance"),
    "cites-unretrieved-clause.jsonl": ("fail", "expect[4] citations"),
    "leaks-other-buyer.jsonl": ("fail", "expect[5] no_foreign_data"),
    "offers-replacement.jsonl": ("fail", "forbidden tools_forbidden"),
}


@pytest.mark.parametrize("record", sorted(EXPECTED))
def test_each_support_record_gets_its_verdict_for_the_right_reason(
    record: str, sounding: Any
) -> None:
    verdict, failing = EXPECTED[record]
    done = sounding(
        "score",
        str(RECORDS / "cases/refunds.yaml"),
        "--record",
        str(RECORDS / "records" / record),
        "--json",
    )
    result = json.loads(done.stdout)
    assert result["schema"] == "sounding.score/1"
    assert result["verdict"] == verdict
    assert done.returncode == (0 if verdict == "pass" else 1)
    failed = [
        c["name"] for c in result["checks"] if c["status"] == "failed" and c["kind"] != "lead"
    ]
    assert failed == ([failing] if failing else [])


def test_the_forbidden_tool_forces_the_composite_to_zero(sounding: Any) -> None:
    done = sounding(
        "score",
        str(RECORDS / "cases/refunds.yaml"),
        "--record",
        str(RECORDS / "records/offers-replacement.jsonl"),
        "--json",
    )
    assert json.loads(done.stdout)["composite"] == 0.0


def test_a_lead_is_shown_but_never_changes_the_verdict(sounding: Any) -> None:
    done = sounding(
        "score",
        str(RECORDS / "cases/refunds.yaml"),
        "--record",
        str(RECORDS / "records/refund-ok-openai.json"),
    )
    assert done.returncode == 0
    assert "LEAD" in done.stdout and "guarantee" in done.stdout
    assert done.stdout.strip().splitlines()[-1].startswith("PASS")


def test_the_quickstart_shows_pass_flaky_and_fail(tmp_path: Path, sounding: Any) -> None:
    suite = tmp_path / "quickstart"
    shutil.copytree(ROOT / "examples/quickstart", suite, ignore=shutil.ignore_patterns("results"))
    done = sounding("run", str(suite))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("PASS  support/where-is-my-order  4/4") for line in lines)
    assert any(line.startswith("FLAKY support/refund-after-lookup") for line in lines)
    assert any(line.startswith("FAIL  support/refund-over-the-ceiling  0/4") for line in lines)
    again = sounding("run", str(suite))

    def verdicts(out: str) -> list[str]:
        return [re.sub(r"\d+\.\d+s", "", line) for line in out.splitlines()[:3]]

    assert verdicts(again.stdout) == verdicts(done.stdout), "the seeded agent must repeat itself"


@pytest.mark.parametrize("example", ["support", "validators"])
def test_the_examples_prove_their_scenarios(example: str, tmp_path: Path, sounding: Any) -> None:
    """Each scenario's reference (the example's agent with no flaw) passes, and the null
    agent and each broken variant fail."""
    suite = tmp_path / example
    shutil.copytree(ROOT / "examples" / example, suite, ignore=shutil.ignore_patterns("results"))
    done = sounding("audit", str(suite), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    outcomes = {s["scenario"]: s["outcome"] for s in json.loads(done.stdout)["scenarios"]}
    assert set(outcomes.values()) == {"ok"} and outcomes


def test_the_quickstart_proves_its_scenarios(tmp_path: Path, sounding: Any) -> None:
    """Its reference passes every scenario; the null agent and every broken variant fail."""
    suite = tmp_path / "quickstart"
    shutil.copytree(ROOT / "examples/quickstart", suite, ignore=shutil.ignore_patterns("results"))
    done = sounding("audit", str(suite))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[:3] == [
        "OK        support/where-is-my-order  reference pass, null fail, broken[0] fail",
        "OK        support/refund-after-lookup  reference pass, null fail, broken[0] fail, "
        "broken[1] fail",
        "OK        support/refund-over-the-ceiling  reference pass, null fail, broken[0] fail, "
        "broken[1] fail",
    ]
    document = json.loads(sounding("audit", str(suite), "--json").stdout)
    reasons = {
        (s["scenario"], p["name"]): p["reason"] for s in document["scenarios"] for p in s["probes"]
    }
    assert reasons[("refund-over-the-ceiling", "null")].startswith("expect[2] tool_called")
    assert reasons[("refund-over-the-ceiling", "broken[0]")].startswith("expect[1] arg_ceiling")
    assert reasons[("refund-after-lookup", "broken[1]")].startswith("expect[2] once_per_arg")


def test_python3_on_path_is_the_interpreter_running_the_tests() -> None:
    """The examples run `python3`: it must be this interpreter, activated virtualenv or not."""
    done = subprocess.run(
        ["python3", "-c", "import sys, sounding; print(sys.prefix)"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, sys.prefix), done.stderr


AGENTS_SDK = ROOT / "examples/agents-sdk"
SDK_VERDICTS = ["PASS  orders/shipped  2/2", "PASS  orders/delayed  2/2", "PASS  orders/no-id  2/2"]


def _sdk_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "agents-sdk"
    shutil.copytree(AGENTS_SDK, suite, ignore=shutil.ignore_patterns("results", "__pycache__"))
    return suite


def _passes_all(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(any(line.startswith(v) for line in done.stdout.splitlines()) for v in SDK_VERDICTS)


def test_the_agents_sdk_example_replays_its_shipped_cassettes_offline(
    tmp_path: Path, sounding: Any
) -> None:
    """As it ships: no model server runs, and the default mode answers from cassettes/."""
    suite = _sdk_suite(tmp_path)
    _passes_all(sounding("run", str(suite)))
    trial = json.loads(
        next(suite.glob("results/*/trials/*/orders/shipped#1/trial.json")).read_text()
    )
    assert [call["name"] for call in trial["record"]["tool_calls"]] == ["lookup_order"]
    assert trial["record"]["usage"]["cost_usd"] == pytest.approx(6e-05)


def test_the_agents_sdk_example_records_against_its_model_server_then_replays_without(
    tmp_path: Path, sounding: Any
) -> None:
    suite = _sdk_suite(tmp_path)
    shutil.rmtree(suite / "cassettes")
    server = subprocess.Popen(
        [sys.executable, str(suite / "model_server.py"), "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]  # "scripted model on http://127.0.0.1:N/v1"
        config = suite / "sounding.toml"
        config.write_text(config.read_text().replace("http://127.0.0.1:8765/v1", url))
        one = ("--scenario", "shipped", "--trials", "1")
        recorded = sounding("run", str(suite), *one, "--llm", "record")
        assert recorded.returncode == 0 and "PASS  orders/shipped  1/1" in recorded.stdout
        audit = sounding("audit", str(suite), "--scenario", "shipped")  # live, as it must be
        assert audit.returncode == 0 and "OK        orders/shipped" in audit.stdout
    finally:
        server.kill()
        server.communicate()  # reaped, its pipe closed
    assert len(list((suite / "cassettes").rglob("*.json"))) == 1  # one per trial
    replayed = sounding("run", str(suite), *one, "--llm", "replay")
    assert replayed.returncode == 0 and "PASS  orders/shipped  1/1" in replayed.stdout


AIRLINE = ROOT / "examples/airline"
AIRLINE_VERDICTS = [
    "PASS  airline/flight-status  3/3",
    "FLAKY airline/rebook-next-day  2/3",
    "FAIL  airline/cancel-basic-fare  0/3",
    "ERROR airline/gate-question  0/0 (1 error: 1 simulator)",
]


def _scenario_lines(out: str) -> list[str]:
    """Each scenario's line up to its time: verdict, name, passes (and errors)."""
    verdicts = ("PASS", "FLAKY", "FAIL", "ERROR")
    lines = [line for line in out.splitlines() if line.startswith(verdicts)]
    return [re.split(r"  \d+\.\d+s", line)[0] for line in lines]


def _trial_of(done: subprocess.CompletedProcess[str], label: str) -> dict[str, Any]:
    """One trial of the run that printed `done`, found by its `artifacts:` line."""
    run = Path(done.stdout.split("artifacts: ")[-1].strip())
    return dict(json.loads((run / "trials/default/airline" / label / "trial.json").read_text()))


def test_the_airline_example_meets_its_simulated_users_then_replays_them_from_the_cache(
    tmp_path: Path, sounding: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the README runs it: with user_server.py up, one run shows every verdict; with it
    stopped, a second run replays the same users from .sounding/simulator-cache."""
    suite = tmp_path / "airline"
    ignored = shutil.ignore_patterns("results", ".sounding", "__pycache__")
    shutil.copytree(AIRLINE, suite, ignore=ignored)
    server = subprocess.Popen(
        [sys.executable, str(suite / "user_server.py"), "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]  # "scripted simulated user on http://..."
        monkeypatch.setenv("SOUNDING_SIMULATOR_BASE_URL", url)
        first = sounding("run", str(suite))
        audit = sounding("audit", str(suite), "--json")  # its reference: the agent, flawless
    finally:
        server.kill()
        server.communicate()  # reaped, its pipe closed
    assert first.returncode == 3, first.stdout + first.stderr  # an error: no verdict for one
    assert _scenario_lines(first.stdout) == AIRLINE_VERDICTS
    assert "answered without calling user_turn" in first.stdout
    asked = _trial_of(first, "rebook-next-day#2")["simulated"]
    assert asked["ending"] == "done" and len(asked["turns"]) == 3
    cache = suite / ".sounding/simulator-cache"
    cached = sorted(path.name for path in cache.iterdir())

    again = sounding("run", str(suite))  # the server is gone: the users come from the cache
    assert again.returncode == 3, again.stdout + again.stderr
    assert _scenario_lines(again.stdout) == AIRLINE_VERDICTS
    unreached = _trial_of(again, "gate-question#1")  # its user was never cached: asked again
    assert unreached["error_kind"] == "simulator" and "could not be reached" in unreached["reason"]
    replayed = _trial_of(again, "rebook-next-day#2")["simulated"]
    assert replayed["turns"] == [{**turn, "cached": True} for turn in asked["turns"]]
    assert sorted(path.name for path in cache.iterdir()) == cached  # nothing new was asked
    outcomes = {s["scenario"]: s["outcome"] for s in json.loads(audit.stdout)["scenarios"]}
    # every scenario proves itself but the one kept to show an error of the simulator
    assert outcomes == {
        "flight-status": "ok",
        "rebook-next-day": "ok",
        "cancel-basic-fare": "ok",
        "gate-question": "error",
    }
