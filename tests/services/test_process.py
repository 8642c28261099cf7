"""process services: real programs started per trial, probed until ready, stopped as a group."""

from __future__ import annotations

import shutil
import socket
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from sounding.services import ServiceError, ServiceSet, start_services, validate_service_specs

PY = sys.executable


def start(tmp_path: Path, **spec: Any) -> ServiceSet:
    declared = {"name": "svc", "type": "process", **spec}
    return start_services([declared], trial_dir=tmp_path / "trial", suite_dir=tmp_path)


def alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for a reaper."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_an_http_server_is_ready_when_its_path_answers(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hello")
    services = start(
        tmp_path,
        command=[PY, "-m", "http.server", "{port}", "--bind", "127.0.0.1"],
        wait_for={"http": "/hello.txt"},
    )
    try:
        base = services.env["SOUNDING_SVC_URL"]
        assert base == f"http://127.0.0.1:{services.env['SOUNDING_SVC_PORT']}"
        assert httpx.get(f"{base}/hello.txt").text == "hello"
    finally:
        services.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(base, timeout=1)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_redis_server_from_a_command_string(tmp_path: Path) -> None:
    services = start(
        tmp_path,
        command='redis-server --port {port} --save ""',
        wait_for={"tcp": True},
        url="redis://127.0.0.1:{port}/0",
    )
    try:
        port = int(services.env["SOUNDING_SVC_PORT"])
        assert services.env["SOUNDING_SVC_URL"] == f"redis://127.0.0.1:{port}/0"
        with socket.create_connection(("127.0.0.1", port), timeout=2) as connection:
            connection.sendall(b"PING\r\n")
            assert connection.recv(16) == b"+PONG\r\n"
    finally:
        services.stop()


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli is not installed")
def test_a_command_probe_gates_readiness(tmp_path: Path) -> None:
    services = start(
        tmp_path,
        command=["redis-server", "--port", "{port}", "--save", ""],
        wait_for={"command": "redis-cli -p {port} ping"},
    )
    services.stop()
    assert services.evidence()["svc"].url is None


def test_stop_ends_the_whole_process_group(tmp_path: Path) -> None:
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "open('child.pid', 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    (tmp_path / "parent.py").write_text(script)
    probe = {"command": ["test", "-s", "child.pid"]}
    services = start(tmp_path, command=[PY, "parent.py"], wait_for=probe)
    child = int((tmp_path / "child.pid").read_text())
    assert alive(child)
    services.stop()
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(child)


def test_env_gets_the_port_and_the_services_started_before(tmp_path: Path) -> None:
    script = (
        "import os, time\n"
        "open('seen.txt', 'w').write(os.environ['MINE'] + ' ' + os.environ['DATABASE_URL'])\n"
        "time.sleep(60)\n"
    )
    process = {
        "name": "svc",
        "type": "process",
        "command": [PY, "-c", script],
        "env": {"MINE": "p{port}"},
        "wait_for": {"command": ["test", "-s", "seen.txt"]},
    }
    declared = [{"name": "db", "type": "sql"}, process]
    with start_services(declared, trial_dir=tmp_path / "t", suite_dir=tmp_path) as services:
        port = services.env["SOUNDING_SVC_PORT"]
        assert (tmp_path / "seen.txt").read_text() == f"p{port} {services.env['DATABASE_URL']}"


def test_a_process_that_dies_early_shows_its_stderr(tmp_path: Path) -> None:
    command = [PY, "-c", "import sys; print('no config file', file=sys.stderr); sys.exit(3)"]
    with pytest.raises(ServiceError) as raised:
        start(tmp_path, command=command, wait_for={"tcp": True}, env={"P": "{port}"})
    message = str(raised.value)
    assert "process service 'svc'" in message
    assert "exited with code 3 before it was ready" in message
    assert "no config file" in message


def test_a_probe_past_its_deadline_names_the_last_failure(tmp_path: Path) -> None:
    command = [PY, "-c", "import time; time.sleep(30)", "{port}"]
    begun = time.monotonic()
    with pytest.raises(ServiceError, match=r"not ready after 0.3s; last probe: tcp 127.0.0.1:\d+"):
        start(tmp_path, command=command, deadline=0.3)
    assert time.monotonic() - begun < 5


def test_a_missing_program_is_named(tmp_path: Path) -> None:
    with pytest.raises(ServiceError, match=r"cannot start 'no-such-program-xyz'"):
        start(tmp_path, command="no-such-program-xyz --port {port}")


def test_logs_are_kept_in_the_trial_folder(tmp_path: Path) -> None:
    script = "import time; print('started', flush=True); time.sleep(60)"
    log = "{trial_dir}/services/svc.stdout.log"
    services = start(
        tmp_path, command=[PY, "-c", script], wait_for={"command": ["test", "-s", log]}
    )
    services.stop()
    assert (tmp_path / "trial" / "services" / "svc.stdout.log").read_text() == "started\n"


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"command": []}, "command is empty"),
        ({"command": "run 'open"}, "command cannot be split"),
        ({"command": "x", "wait_for": {"tcp": True}}, "never uses {port}"),
        ({"command": "x {port}", "wait_for": {"tcp": True, "http": "/"}}, "exactly one of"),
        ({"command": "x", "deadline": 0}, "deadline"),
    ],
)
def test_bad_declarations_are_refused_at_load(spec: dict[str, Any], problem: str) -> None:
    (found,) = validate_service_specs([{"name": "svc", "type": "process", **spec}])
    assert problem in found
