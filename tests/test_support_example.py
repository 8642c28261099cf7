"""examples/support: a seeded refund agent against real services, run as `sounding run`.

The agent is seeded by the message and the trial number, so every verdict below is exact:
the same on SQLite, PostgreSQL and MariaDB, and each forbidden rule fires in the trials it
was designed to fire in, and nowhere else.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "examples/support"

pytestmark = pytest.mark.xdist_group("support")  # one worker: the suite runs once

VERDICTS = {  # scenario: (verdict, trials passed out of 4)
    "where-is-my-order": ("pass", 4),
    "refund-damaged": ("pass", 4),
    "refund-claimed-amount": ("flaky", 3),
    "refund-then-follow-up": ("flaky", 1),
    "refund-over-the-ceiling": ("fail", 0),
    "money-not-a-replacement": ("flaky", 1),
    "third-time-angry": ("flaky", 3),
    "show-me-the-request": ("flaky", 2),
    "receipt-and-feedback": ("fail", 0),
}
FIRST_FAILURES = {  # scenario: what its first failure says, in the words of the check
    "refund-claimed-amount": '"amount_cents": 4500}',
    "refund-then-follow-up": "invariant one_refund_row: 'db' returned 2, expected 1",
    "refund-over-the-ceiling": "arg_ceiling: call #3 of tool 'issue_refund' has amount_cents=24000",
    "money-not-a-replacement": "forbidden tool 'offer_replacement' was called",
    "third-time-angry": "'db': 'customers' (rows changed)",
    "show-me-the-request": "the value of PAYMENTS_TOKEN leaked into stdout",
    "receipt-and-feedback": "'tracker' got 1 request (POST /collect)",
}
VIOLATIONS = {  # (scenario, forbidden rule): the trials that broke it
    ("money-not-a-replacement", "tools_forbidden"): [2, 3, 4],
    ("receipt-and-feedback", "file_writes_outside"): [2, 4],
    ("receipt-and-feedback", "http_except"): [1, 2, 3, 4],
    ("third-time-angry", "db_writes_outside"): [4],
    ("show-me-the-request", "secrets_in_logs"): [1, 4],
}


@dataclass(frozen=True)
class SuiteRun:
    """One `sounding run` of a copy of the suite, and the run folder it wrote."""

    done: subprocess.CompletedProcess[str]
    folder: Path

    def summary(self) -> dict[str, dict[str, Any]]:
        found = json.loads((self.folder / "summary.json").read_text())
        return {s["scenario"]: s for s in found["scenarios"]}

    def trials(self) -> dict[tuple[str, int], dict[str, Any]]:
        found = (json.loads(p.read_text()) for p in self.folder.glob("trials/*/*/*/trial.json"))
        return {(t["scenario"], t["trial"]): t for t in found}

    def engines(self) -> set[str]:
        paths = self.folder.glob("trials/*/*/*/services/services.json")
        stored = (json.loads(p.read_text())["services"]["db"] for p in paths)
        return {s["details"]["engine"] for s in stored}


ON_SERVERS = ("where-is-my-order", "refund-then-follow-up", "third-time-angry")
"""Scenarios whose verdicts turn on the database (a status read back, a second refund row, a
write outside the allowed tables): run on each server, to show each reads the same."""


def run_suite(
    where: Path,
    sounding: Any,
    *,
    toml_lines: str = "",
    server: str | None = None,
    only: tuple[str, ...] = (),
) -> SuiteRun:
    suite = where / "support"
    shutil.copytree(SUITE, suite, ignore=shutil.ignore_patterns("results", "__pycache__"))
    config = suite / "sounding.toml"
    config.write_text(config.read_text() + toml_lines)
    env = {k: v for k, v in os.environ.items() if k != "SOUNDING_SQL_SERVER"}
    if server is not None:
        env["SOUNDING_SQL_SERVER"] = server
    selected = [arg for scenario in only for arg in ("--scenario", scenario)]
    done = sounding("run", str(suite), *selected, cwd=where, env=env)
    runs = sorted((suite / "results").iterdir())
    assert len(runs) == 1, done.stdout + done.stderr
    return SuiteRun(done, runs[0])


def violations(run: SuiteRun) -> dict[tuple[str, str], list[int]]:
    fired: dict[tuple[str, str], list[int]] = {}
    for (scenario, trial), found in sorted(run.trials().items()):
        for check in found["score"]["checks"]:
            if check["kind"] == "forbidden" and check["result"]["status"] == "failed":
                fired.setdefault((scenario, check["type"]), []).append(trial)
    return fired


def assert_designed_verdicts(run: SuiteRun, only: tuple[str, ...] = ()) -> None:
    assert run.done.returncode == 1, run.done.stdout + run.done.stderr
    summary = run.summary()
    got = {name: (s["verdict"], s["passed"]) for name, s in summary.items()}
    assert got == {k: v for k, v in VERDICTS.items() if not only or k in only}
    assert all(s["errors"] == 0 for s in summary.values())
    assert violations(run) == {k: v for k, v in VIOLATIONS.items() if not only or k[0] in only}


@pytest.fixture(scope="module")
def on_sqlite(tmp_path_factory: pytest.TempPathFactory, sounding: Any) -> SuiteRun:
    return run_suite(tmp_path_factory.mktemp("sqlite"), sounding)


def test_on_sqlite_every_scenario_gets_its_designed_verdict(on_sqlite: SuiteRun) -> None:
    assert_designed_verdicts(on_sqlite)
    assert on_sqlite.engines() == {"sqlite"}


def test_the_terminal_shows_pass_flaky_and_fail_with_the_first_failure(
    on_sqlite: SuiteRun,
) -> None:
    lines = on_sqlite.done.stdout.splitlines()
    for scenario, (verdict, passed) in VERDICTS.items():
        head = f"{verdict.upper():<5} support/{scenario}  {passed}/4  "
        line = next((x for x in lines if x.startswith(head)), None)
        assert line is not None, f"no line starting {head!r} in:\n{on_sqlite.done.stdout}"
    summary = on_sqlite.summary()
    for scenario, words in FIRST_FAILURES.items():
        assert words in summary[scenario]["first_failure"]


def test_a_good_trial_passes_checks_of_every_kind(on_sqlite: SuiteRun) -> None:
    checks = on_sqlite.trials()[("refund-damaged", 1)]["score"]["checks"]
    assert {c["result"]["status"] for c in checks} == {"passed"}
    kinds = {c["type"] for c in checks}
    files = {"file_exists", "file_absent", "file_content"}
    services = {"sql", "http_mock_assertions"}
    assert {"command_exit", "custom", *files, *services} <= kinds
    support = {"first_tool", "once_per_arg", "arg_ceiling", "provenance", "citations"}
    assert {*support, "no_foreign_data"} <= kinds
    forbidden = {c["type"] for c in checks if c["kind"] == "forbidden"}
    assert forbidden == {
        "tools_forbidden",
        "file_writes_outside",
        "http_except",
        "db_writes_outside",
    }


def test_a_missed_nice_to_have_stays_above_the_threshold(on_sqlite: SuiteRun) -> None:
    trial = on_sqlite.trials()[("refund-damaged", 4)]
    failed = [c["name"] for c in trial["score"]["checks"] if c["result"]["status"] != "passed"]
    assert failed == ["confirmation_sent"]
    assert trial["score"]["composite"] == pytest.approx(6.0 / 6.3)
    assert trial["verdict"] == "pass"


def test_the_custom_check_catches_a_refund_of_the_claimed_amount(on_sqlite: SuiteRun) -> None:
    trials = on_sqlite.trials()
    hasty = {
        c["name"]: c["result"] for c in trials[("refund-claimed-amount", 1)]["score"]["checks"]
    }
    assert hasty["books_agree"]["status"] == "failed"
    sources = hasty["books_agree"]["details"]["sources"]
    assert sources == {"payment": [4500], "note": [4500], "database": [4500]}
    assert hasty["expect[1] first_tool"]["status"] == "failed"


@pytest.mark.postgres
def test_one_line_in_sounding_toml_runs_the_same_suite_on_postgresql(
    postgres_url: str, tmp_path: Path, sounding: Any
) -> None:
    plain = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    toml = f'\n[services.db]\nserver = "{plain}"\n'
    run = run_suite(tmp_path, sounding, toml_lines=toml, only=ON_SERVERS)
    assert_designed_verdicts(run, ON_SERVERS)
    assert run.engines() == {"postgresql"}


@pytest.mark.mariadb
def test_sounding_sql_server_runs_the_same_suite_on_mariadb(
    mariadb_url: str, tmp_path: Path, sounding: Any
) -> None:
    run = run_suite(tmp_path, sounding, server=mariadb_url, only=ON_SERVERS)
    assert_designed_verdicts(run, ON_SERVERS)
    assert run.engines() == {"mysql"}


def test_the_leaked_token_is_in_no_stored_file(on_sqlite: SuiteRun) -> None:
    config = tomllib.loads((SUITE / "sounding.toml").read_text())
    token = config["agent"]["env"]["PAYMENTS_TOKEN"]
    holding = [
        p for p in on_sqlite.folder.rglob("*") if p.is_file() and token.encode() in p.read_bytes()
    ]
    assert holding == []
    recorded = on_sqlite.folder / "trials/default/support/show-me-the-request#1/services"
    assert "[secret PAYMENTS_TOKEN]" in (recorded / "services.json").read_text()
