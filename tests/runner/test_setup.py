"""Before any trial runs: a server URL whose database driver is missing names the extra."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

AGENT = """
import pathlib, sys
pathlib.Path(sys.argv[1]).write_text("ran")
print(sys.stdin.read())
"""

CASE = """
services:
  - {name: db, type: sql}
scenarios:
  - id: s
    user: hi
    expect:
      - final_answer_contains: hi
"""

# `sounding run` in an interpreter where importing the driver fails, as if it were absent
WITHOUT = """
import runpy, sys
sys.modules[sys.argv[1]] = None
sys.argv = ["sounding", *sys.argv[2:]]
runpy.run_module("sounding.cli", run_name="__main__")
"""


def _run_without(
    driver: str, suite: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT, driver, "run", str(suite)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**_without_server(os.environ), **(env or {})},
    )


def _without_server(environ: Mapping[str, str]) -> dict[str, str]:
    return {key: value for key, value in environ.items() if key != "SOUNDING_SQL_SERVER"}


def _suite(suite: Any, config: str = "") -> Path:
    marker = suite.root / "agent-ran"
    suite.write("agent.py", AGENT)
    suite.write(
        "sounding.toml",
        f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py", "{marker}"]\n{config}',
    )
    suite.write("cases/c.yaml", CASE)
    return marker


def test_a_postgresql_server_without_psycopg_is_refused_before_any_trial(suite: Any) -> None:
    marker = _suite(suite, '[services.db]\nserver = "postgresql://postgres@127.0.0.1/test"\n')
    done = _run_without("psycopg", suite.root)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "sounding.toml: services.db.server is a PostgreSQL URL, but its driver (psycopg) " in (
        " ".join(done.stderr.split())
    )
    assert "pip install 'sounding[postgres]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not marker.exists() and not (suite.root / "results").exists()


@pytest.mark.parametrize("url", ["mysql://root@127.0.0.1:3306/", "mariadb+pymysql://root@h/"])
def test_a_mysql_server_from_the_environment_without_pymysql_is_refused(
    suite: Any, url: str
) -> None:
    marker = _suite(suite)
    done = _run_without("pymysql", suite.root, {"SOUNDING_SQL_SERVER": url})
    assert done.returncode == 2, done.stdout + done.stderr
    message = " ".join(done.stderr.split())
    assert "SOUNDING_SQL_SERVER is a MariaDB/MySQL URL, but its driver (PyMySQL) is not" in message
    assert "pip install 'sounding[mysql]'" in message
    assert "Traceback" not in done.stderr and not marker.exists()


def test_a_missing_driver_of_another_engine_does_not_matter(suite: Any) -> None:
    marker = _suite(suite)
    done = _run_without("psycopg", suite.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert marker.read_text() == "ran"


def test_an_empty_sounding_sql_server_is_unset(suite: Any) -> None:
    marker = _suite(suite)
    done = _run_without("nothing", suite.root, {"SOUNDING_SQL_SERVER": " "})
    assert done.returncode == 0, done.stdout + done.stderr
    assert marker.read_text() == "ran"
    (services,) = suite.root.glob("results/*/trials/*/*/*/services/services.json")
    assert '"engine": "sqlite"' in services.read_text()
