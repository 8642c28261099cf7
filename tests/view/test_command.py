"""`sounding view` as a user starts it: the address it binds, and every way it refuses."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx


def view(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sounding.cli", "view", *args, "--no-browser"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def test_it_serves_loopback_and_opens_a_run_folder_given_itself(
    results: Path, start: Any, stop: Any
) -> None:
    served = start(results / "base")
    assert served.url.startswith("http://127.0.0.1:") and served.url.endswith("/run/base")
    page = httpx.get(served.url, timeout=20)
    assert page.status_code == 200 and "<h1>Run base</h1>" in page.text
    assert httpx.get(served.url.split("/run/")[0] + "/static/view.css", timeout=20).is_success
    assert stop(served) == 130


def test_a_folder_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    done = view(str(tmp_path / "nowhere"), "--port", "0")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "nowhere: no such folder; give the results folder" in done.stderr


def test_a_port_in_use_is_refused_with_what_to_do(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = view(str(tmp_path), "--port", str(port))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port 0" in done.stderr


def test_without_the_extra_it_names_the_extra(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "starlette"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'starlette'\", name='starlette')\n"
    )
    path = [str(tmp_path / "shadow"), *sys.path]
    done = view(str(tmp_path), "--port", "0", env={"PYTHONPATH": ":".join(path)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "pip install 'sounding[view]'" in done.stderr


def test_the_help_says_what_it_serves_and_where() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sounding.cli", "view", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    for word in ("--port", "--host", "--no-browser", "127.0.0.1", "/compare/A/B", "sounding[view]"):
        assert word in done.stdout
