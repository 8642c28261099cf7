"""Shared fixtures: the real database servers, found or skipped with a reason, and a
scripted LLM server on 127.0.0.1 speaking OpenAI chat completions and Anthropic messages
(tests queue the answers, point the real `openai` / `anthropic` client at it, and read back
every request it received).

Set SOUNDING_REQUIRE_SERVICES=1 (CI does) to turn a missing server into a failure
instead of a skip. Override the addresses with SOUNDING_TEST_POSTGRES / SOUNDING_TEST_MARIADB.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, settings

# Property tests on a loaded machine (CI's two cores, shared): a bounded number of examples,
# no per-example deadline and no "too slow" health check, so load cannot fail them. The
# profile is the default; HYPOTHESIS_PROFILE=default gives Hypothesis's own settings back.
settings.register_profile(
    "ci", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

POSTGRES = os.environ.get(
    "SOUNDING_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
MARIADB = os.environ.get("SOUNDING_TEST_MARIADB", "mysql+pymysql://root@127.0.0.1:3306/test")


def _server(url: str, what: str) -> str:
    engine = sa.create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except Exception as exc:
        reason = f"{what} at {url} does not answer ({type(exc).__name__}); start it or set the URL"
        if os.environ.get("SOUNDING_REQUIRE_SERVICES") == "1":
            pytest.fail(f"SOUNDING_REQUIRE_SERVICES=1 but {reason}")
        pytest.skip(reason)
    finally:
        engine.dispose()
    return url


Sounding = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture(scope="session", autouse=True)
def this_python_on_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """`python3` and `python` on PATH are the interpreter running the tests.

    The shipped examples run `python3 {suite}/agent.py`, and validators start with
    `#!/usr/bin/env python3`: without this, they would run whatever python3 the shell finds
    first, which lacks sounding and its dependencies unless a virtualenv is activated.
    """
    folder = tmp_path_factory.mktemp("python-on-path")
    for name in ("python3", "python"):
        shim = folder / name
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
        shim.chmod(0o755)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
        yield folder


def _in_this_process(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the `sounding` command line in this process, as a shell would run it in another.

    It answers as `subprocess.run` does (exit status, stdout, stderr) without paying an
    interpreter's start and sounding's import for every command a test runs. `env`, when
    given, is the whole environment. What a suite's callable agent imports from the suite
    folder is forgotten afterwards, as it is when a process ends, so that another suite's
    module of the same name is imported afresh. A test of what only a process shows (its
    signals, its exit, what it leaves running) starts `python -m sounding.cli` instead.
    """
    from click.testing import CliRunner

    from sounding.cli import main

    changes: dict[str, str | None] = {}
    if env is not None:
        changes = {name: None for name in os.environ if name not in env}
        changes.update(env)
    path, modules = list(sys.path), set(sys.modules)
    try:
        with contextlib.chdir(cwd or Path.cwd()):
            result = CliRunner().invoke(main, list(args), env=changes, prog_name="sounding")
    finally:
        added = [entry for entry in sys.path if entry not in path]
        for name in set(sys.modules) - modules:
            file = getattr(sys.modules[name], "__file__", None) or ""
            if any(file.startswith(entry) for entry in added if entry):
                del sys.modules[name]
        sys.path[:] = path
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a fault the command did not handle
    return subprocess.CompletedProcess(
        ["sounding", *args], result.exit_code, result.stdout, result.stderr
    )


def _in_its_own_process(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run the real `sounding` command in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "sounding.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="session")
def sounding() -> Sounding:
    """The `sounding` command line, run in this process: `sounding("run", str(suite))`.
    A test module of what only a process shows overrides it with `sounding_process`."""
    return _in_this_process


@pytest.fixture(scope="session")
def sounding_process() -> Sounding:
    """The real `sounding` command in a process of its own: `sounding_process("run", ...)`."""
    return _in_its_own_process


@pytest.fixture(scope="session", params=["sqlite", "postgresql", "mariadb"])
def sql_servers(request: pytest.FixtureRequest) -> dict[str, str]:
    """`ServiceSettings.servers` putting a sql service named `db` on each engine in turn."""
    if request.param == "postgresql":
        return {"db": request.getfixturevalue("postgres_url")}
    if request.param == "mariadb":
        return {"db": request.getfixturevalue("mariadb_url")}
    return {}


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A server URL (SQLAlchemy form) of a PostgreSQL that answers."""
    yield _server(POSTGRES, "PostgreSQL")


@pytest.fixture(scope="session")
def mariadb_url() -> Iterator[str]:
    """A server URL (SQLAlchemy form) of a MariaDB / MySQL that answers."""
    yield _server(MARIADB, "MariaDB")


@dataclass
class Reply:
    body: dict[str, Any]
    status: int = 200
    delay: float = 0.0


@dataclass
class Received:
    path: str
    body: dict[str, Any]


@dataclass
class ScriptedLLM:
    """What the server will answer, in order, and what it was asked."""

    url: str = ""
    replies: list[Reply] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    wake: threading.Event = field(default_factory=threading.Event)

    @property
    def hits(self) -> int:
        return len(self.received)

    def last(self) -> dict[str, Any]:
        return self.received[-1].body

    # ---- OpenAI chat completions ----------------------------------------------------------

    def openai_call(self, arguments: str | dict[str, Any], name: str = "record_verdict") -> None:
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        calls = [{"id": "c1", "type": "function", "function": {"name": name, "arguments": raw}}]
        self.openai_message({"role": "assistant", "content": None, "tool_calls": calls})

    def openai_text(self, text: str, delay: float = 0.0) -> None:
        self.openai_message({"role": "assistant", "content": text}, delay)

    def openai_message(self, message: dict[str, Any], delay: float = 0.0) -> None:
        choice = {"index": 0, "finish_reason": "stop", "message": message}
        body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m"}
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        self.replies.append(Reply({**body, "choices": [choice], "usage": usage}, delay=delay))

    # ---- Anthropic messages ---------------------------------------------------------------

    def anthropic_blocks(self, *blocks: dict[str, Any]) -> None:
        body = {"id": "m", "type": "message", "role": "assistant", "model": "m"}
        usage = {"input_tokens": 1, "output_tokens": 1}
        extra = {"stop_reason": "end_turn", "stop_sequence": None, "usage": usage}
        self.replies.append(Reply({**body, **extra, "content": list(blocks)}))

    def anthropic_call(self, arguments: dict[str, Any], name: str = "record_verdict") -> None:
        self.anthropic_blocks({"type": "tool_use", "id": "t1", "name": name, "input": arguments})

    def anthropic_text(self, text: str) -> None:
        self.anthropic_blocks({"type": "text", "text": text})

    def answer(self, body: dict[str, Any]) -> None:
        """Any answer, as given (the Responses API's, say)."""
        self.replies.append(Reply(body))

    def error(self, status: int, message: str) -> None:
        self.replies.append(Reply({"error": {"message": message, "type": "x"}}, status=status))


def _handler(script: ScriptedLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("content-length", "0"))
            script.received.append(Received(self.path, json.loads(self.rfile.read(size))))
            reply = script.replies.pop(0) if script.replies else Reply({"error": "unscripted"}, 500)
            if reply.delay:
                script.wake.wait(reply.delay)
            if script.received[-1].body.get("stream") and "choices" in reply.body:
                return self._stream(reply.body)
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, body: dict[str, Any]) -> None:
            """A chat completion as the events a streamed one arrives in: the text in two
            pieces, each tool call's arguments in two."""
            message = body["choices"][0]["message"]
            deltas: list[dict[str, Any]] = [{"role": "assistant"}]
            text = message.get("content") or ""
            deltas += [{"content": text[: len(text) // 2]}, {"content": text[len(text) // 2 :]}]
            for index, call in enumerate(message.get("tool_calls") or []):
                raw, half = call["function"]["arguments"], len(call["function"]["arguments"]) // 2
                named = {"name": call["function"]["name"], "arguments": raw[:half]}
                first = {"index": index, "id": call["id"], "type": "function", "function": named}
                rest = {"index": index, "function": {"arguments": raw[half:]}}
                deltas += [{"tool_calls": [first]}, {"tool_calls": [rest]}]
            chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m"}
            events = [{**chunk, "choices": [{"index": 0, "delta": d}]} for d in deltas]
            data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data.encode())))
            self.end_headers()
            self.wfile.write(data.encode())

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (a timeout test) breaks the pipe; that is expected


@contextlib.contextmanager
def _scripted_llm() -> Iterator[ScriptedLLM]:
    script = ScriptedLLM()
    server = _Server(("127.0.0.1", 0), _handler(script))
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    script.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield script
    script.wake.set()
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLM]:
    with _scripted_llm() as script:
        yield script


@pytest.fixture
def other_llm_server() -> Iterator[ScriptedLLM]:
    """A second scripted server, at another address: another judge server."""
    with _scripted_llm() as script:
        yield script


@pytest.fixture(scope="session")
def as_older_run() -> Any:
    """Turn a run folder into what an older sounding wrote: sounding.results/1, one folder
    per scenario holding a folder per trial (`<scenario>/<n>/`), and sounding.trial/1, each
    run record in a record.json of its own beside trial.json."""

    def convert(run: Path) -> None:
        plan = run / "run.json"
        plan.write_text(
            json.dumps({**json.loads(plan.read_text()), "schema": "sounding.results/1"}),
            encoding="utf-8",
        )
        for path in run.glob("trials/*/*/*#*/trial.json"):
            scenario, _, number = path.parent.name.rpartition("#")
            folder = path.parent.parent / scenario / number
            folder.parent.mkdir(exist_ok=True)
            path.parent.rename(folder)
            document = json.loads((folder / "trial.json").read_text(encoding="utf-8"))
            record = document.pop("record", None)
            if record is not None:
                (folder / "record.json").write_text(json.dumps(record), encoding="utf-8")
            document["schema"] = "sounding.trial/1"
            (folder / "trial.json").write_text(json.dumps(document), encoding="utf-8")

    return convert
