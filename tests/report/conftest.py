"""Real results folders, made by running `sounding run` on small suites, and a headless browser.

The runs are made once per session and must not be changed by a test: a test that needs to
alter one copies it first (`copy_run`).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

MIXED_AGENT = """
import json, os, sys
prompt = sys.stdin.read()
scenario = os.environ["SOUNDING_SCENARIO"]
trial = int(os.environ["SOUNDING_TRIAL"])

def event(**fields):
    with open(os.environ["SOUNDING_TRACE"], "a") as trace:
        trace.write(json.dumps(fields) + "\\n")

if scenario == "broken":
    with open(os.environ["SOUNDING_TRACE"], "a") as trace:
        trace.write("this line is not JSON\\n")
    print("oops")
    sys.exit(0)
event(type="tool_call", id="c1", name="lookup", args={"q": prompt})
event(type="tool_result", id="c1", result="<img src=x onerror=alert(2)>")
event(type="usage", input_tokens=100 + trial, output_tokens=20, cost_usd=0.001 * trial)
with open("notes.txt", "w") as notes:
    notes.write("note for " + scenario + "\\n")
hasty = scenario.startswith("flaky") and trial % 2 == 0
print("sorry" if hasty else "you said: " + prompt)
"""

MIXED_CASE = """
defaults: {trials: 3, timeout: 20s}
scenarios:
  - id: echoes
    user: hello there
    expect: [{final_answer_contains: "you said"}]
  - id: wrong
    user: hello again
    expect: [{final_answer_contains: "<script>alert(1)</script>"}]
  - id: flaky-any
    user: one
    scoring: {replica_aggregation: any}
    expect: [{final_answer_contains: "you said"}]
  - id: flaky-all
    user: two
    expect: [{final_answer_contains: "you said"}]
  - id: broken
    user: three
    expect: [{final_answer_contains: "you said"}]
"""

# The agent's behaviour is set by a file beside it, so one suite gives two different runs.
MODE_AGENT = """
import os, sys
prompt = sys.stdin.read()
mode = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mode")).read().strip()
print("done: " + prompt if mode == "good" else "cannot")
"""

MODE_CASE = """
defaults: {trials: 10, timeout: 20s}
scenarios:
  - id: task
    user: do the task
    expect: [{final_answer_contains: "done"}]
"""


def make_suite(root: Path, agent: str, case: str) -> Path:
    root.mkdir(parents=True)
    (root / "agent.py").write_text(textwrap.dedent(agent).lstrip(), encoding="utf-8")
    (root / "sounding.toml").write_text(
        f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n', encoding="utf-8"
    )
    (root / "cases").mkdir()
    (root / "cases" / "basic.yaml").write_text(textwrap.dedent(case).lstrip(), encoding="utf-8")
    return root


def run_suite(suite: Path, sounding: Any) -> Path:
    """Run the real `sounding run` and return the folder of the run it made."""
    before = set((suite / "results").glob("*")) if (suite / "results").is_dir() else set()
    done = sounding("run", str(suite), "--parallel", "2")
    assert done.returncode in (0, 1, 3), done.stdout + done.stderr
    (run,) = set((suite / "results").glob("*")) - before
    return run


@pytest.fixture(scope="session")
def mixed_run(tmp_path_factory: pytest.TempPathFactory, sounding: Any) -> Path:
    """pass (echoes), fail (wrong), flaky gated by `any` (flaky-any), flaky gated by `all`
    (flaky-all) and error (broken: the agent writes an unreadable trace); 3 trials each."""
    suite = make_suite(tmp_path_factory.mktemp("mixed") / "suite", MIXED_AGENT, MIXED_CASE)
    return run_suite(suite, sounding)


@pytest.fixture(scope="session")
def good_and_bad_runs(tmp_path_factory: pytest.TempPathFactory, sounding: Any) -> tuple[Path, Path]:
    """The same scenario over 10 trials: 10/10 passing, then 0/10 (a planted regression)."""
    suite = make_suite(tmp_path_factory.mktemp("modes") / "suite", MODE_AGENT, MODE_CASE)
    (suite / "mode").write_text("good", encoding="utf-8")
    good = run_suite(suite, sounding)
    (suite / "mode").write_text("bad", encoding="utf-8")
    return good, run_suite(suite, sounding)


@pytest.fixture
def copy_run(tmp_path: Path) -> Any:
    """Copy a session run into this test's folder, to change it freely."""

    def copy(run: Path, name: str | None = None) -> Path:
        target = tmp_path / (name or run.name)
        shutil.copytree(run, target, ignore=shutil.ignore_patterns("workspace"))
        return target

    return copy


@pytest.fixture
def edit_json() -> Any:
    """Change top-level fields of a JSON file in place."""

    def edit(path: Path, **changes: Any) -> None:
        document = json.loads(path.read_text(encoding="utf-8"))
        document.update(changes)
        path.write_text(json.dumps(document), encoding="utf-8")

    return edit


@pytest.fixture
def as_run_before_curves() -> Any:
    """Make a run's summary.json what a sounding before the pass@k / pass^k curves wrote:
    no `pass_at` / `pass_hat` on its scenario lines, no `curves`."""

    def strip(run: Path) -> None:
        path = run / "summary.json"
        summary = json.loads(path.read_text(encoding="utf-8"))
        del summary["curves"]
        for line in summary["scenarios"]:
            del line["pass_at"], line["pass_hat"]
        path.write_text(json.dumps(summary), encoding="utf-8")

    return strip


# ---- a headless Chromium driven over the DevTools protocol --------------------------------

CHROMIUM = Path("/usr/bin/chromium")


class DevTools:
    """A minimal DevTools-protocol client over a WebSocket written with the stdlib."""

    def __init__(self, url: str) -> None:
        host, _, path = url.removeprefix("ws://").partition("/")
        address, port = host.split(":")
        self._sock = socket.create_connection((address, int(port)), timeout=20)
        key = base64.b64encode(os.urandom(16)).decode()
        self._sock.sendall(
            (
                f"GET /{path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        response = b""
        while b"\r\n\r\n" not in response:
            response += self._sock.recv(1)
        assert b" 101 " in response.split(b"\r\n")[0], response
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        self._send(json.dumps({"id": ident, "method": method, "params": params}).encode())
        while True:
            message = json.loads(self._receive())
            if message.get("id") == ident:
                assert "error" not in message, message
                return dict(message.get("result", {}))
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = next((e for e in self.events if e.get("method") == method), None)
            if found is not None:
                return found
            self.events.append(json.loads(self._receive()))
        raise AssertionError(f"no {method} within {timeout}s")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) in the middle of the element."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            "return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box["x"],
                y=box["y"],
                button="left",
                clickCount=1,
            )

    def close(self) -> None:
        self._sock.close()

    def _send(self, payload: bytes) -> None:
        mask = os.urandom(4)
        size = len(payload)
        if size < 126:
            head = struct.pack("!BB", 0x81, 0x80 | size)
        elif size < 1 << 16:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, size)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, size)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self._sock.sendall(head + mask + masked)

    def _receive(self) -> bytes:
        data = b""
        while True:
            first, second = self._exactly(2)
            size = second & 0x7F
            if size == 126:
                (size,) = struct.unpack("!H", self._exactly(2))
            elif size == 127:
                (size,) = struct.unpack("!Q", self._exactly(8))
            data += self._exactly(size)
            if first & 0x80:  # FIN: the message is complete
                return data

    def _exactly(self, count: int) -> bytes:
        chunks = b""
        while len(chunks) < count:
            chunk = self._sock.recv(count - len(chunks))
            if not chunk:
                raise AssertionError("the browser closed the DevTools connection")
            chunks += chunk
        return chunks


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[DevTools]:
    """A page of a fresh headless Chromium, with console, log and network events enabled."""
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} is absent: apt-get install -y chromium to run the page tests"
        if os.environ.get("SOUNDING_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"SOUNDING_REQUIRE_CHROMIUM=1 but {reason}")
        pytest.skip(reason)
    profile = tmp_path / "chromium-profile"
    process = subprocess.Popen(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        devtools = DevTools(_page_socket(profile / "DevToolsActivePort"))
        for domain in ("Page", "Runtime", "Log", "Network"):
            devtools.call(f"{domain}.enable")
        yield devtools
        devtools.close()
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the browser and every helper process it started (its own process group)."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _page_socket(port_file: Path) -> str:
    deadline = time.monotonic() + 30
    while not port_file.is_file() or not port_file.read_text().strip():
        assert time.monotonic() < deadline, "chromium did not open its DevTools port"
        time.sleep(0.05)
    port = port_file.read_text().split()[0]
    while True:
        targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
        pages = [t for t in targets if t.get("type") == "page"]
        if pages:
            return str(pages[0]["webSocketDebuggerUrl"])
        assert time.monotonic() < deadline, f"no page target in {targets}"
        time.sleep(0.05)
