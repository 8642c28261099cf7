"""`sounding._process`: real processes, bounded in time and output, killed with their group."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from sounding._process import (
    GRACE,
    Finished,
    kill_group,
    poll,
    readable,
    run_bounded,
    start,
    stop,
)

PY = sys.executable


def python(code: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(code)]


def bounded(
    argv: list[str],
    cwd: Path,
    *,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float | None = 10.0,
    limit: int = 1 << 20,
    groups: set[int] | None = None,
) -> Finished:
    return run_bounded(
        argv, cwd=cwd, env=env, stdin=stdin, timeout=timeout, limit=limit, groups=groups
    )


def state(pid: int) -> str | None:
    """The process's state letter (`Z` for a zombie), None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def gone_within(pid: int, seconds: float) -> bool:
    """True once the process is gone, or dead and waiting to be reaped by its parent."""
    deadline = time.monotonic() + seconds
    while state(pid) not in (None, "Z", "X"):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def wait_for_pid(path: Path, seconds: float = 30.0) -> int:
    deadline = time.monotonic() + seconds
    while not path.is_file() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.02)
    return int(path.read_text())


@pytest.fixture
def daemon_pid(tmp_path: Path) -> Iterator[Path]:
    """Where a child writes the pid of a daemon it started in a session of its own, which
    nothing of the child's reaches: the test kills it when it ends."""
    path = tmp_path / "daemon.pid"
    yield path
    if path.is_file() and path.read_text():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(path.read_text()), signal.SIGKILL)


def leaves_a_daemon(pid_file: Path, then: str) -> list[str]:
    """A child that starts a daemon holding its stdout and stderr, then runs `then`."""
    return python(
        f"""
        import subprocess, sys, time
        daemon = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True
        )
        open({str(pid_file)!r}, "w").write(str(daemon.pid))
        {then}
        """
    )


# ---- run_bounded --------------------------------------------------------------------------


def test_it_runs_with_the_input_directory_and_environment_given(tmp_path: Path) -> None:
    code = """
    import os, sys
    data = sys.stdin.read()
    print(data.upper(), os.getcwd(), os.environ["ONLY"], "PATH" in os.environ)
    print("to stderr", file=sys.stderr)
    sys.exit(3)
    """
    finished = bounded(python(code), tmp_path, stdin=b"prompt", env={"ONLY": "this"})
    assert finished.stdout == f"PROMPT {tmp_path} this False\n".encode()
    assert finished.stderr == b"to stderr\n"
    assert (finished.returncode, finished.signal) == (3, None)
    assert not finished.timed_out and (finished.stdout_cut, finished.stderr_cut) == (0, 0)
    assert 0 < finished.seconds < 10


def test_without_input_it_reads_an_empty_stdin_not_ours(tmp_path: Path) -> None:
    ours = os.fstat(0)
    code = f"""
    import os, sys
    mine = os.fstat(0)
    print(repr(sys.stdin.read()), (mine.st_dev, mine.st_ino) == {(ours.st_dev, ours.st_ino)})
    """
    assert bounded(python(code), tmp_path).stdout == b"'' False\n"


def test_an_input_it_never_reads_does_not_hold_it(tmp_path: Path) -> None:
    """10 MiB of input, far more than a pipe holds, to a process that never reads it."""
    started = time.monotonic()
    finished = bounded(python("print('ignored')"), tmp_path, stdin=b"x" * (10 << 20))
    assert time.monotonic() - started < 5
    assert finished.stdout == b"ignored\n"


def test_a_large_input_reaches_it_whole(tmp_path: Path) -> None:
    data = os.urandom(3 << 20)
    code = "import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())"
    finished = bounded(python(code), tmp_path, stdin=data)
    assert finished.stdout.decode().strip() == hashlib.sha256(data).hexdigest()


def test_it_returns_when_the_process_ends_though_a_daemon_holds_its_output(
    tmp_path: Path, daemon_pid: Path
) -> None:
    started = time.monotonic()
    finished = bounded(leaves_a_daemon(daemon_pid, "print('done')"), tmp_path, timeout=20.0)
    assert time.monotonic() - started < 5
    assert (finished.stdout, finished.returncode, finished.timed_out) == (b"done\n", 0, False)
    assert state(int(daemon_pid.read_text())) not in (None, "Z")  # out of reach, still there


def test_a_deadline_holds_though_a_daemon_holds_the_output(
    tmp_path: Path, daemon_pid: Path
) -> None:
    then = "print('started', flush=True); time.sleep(30)"
    started = time.monotonic()
    finished = bounded(leaves_a_daemon(daemon_pid, then), tmp_path, timeout=1.0)
    assert time.monotonic() - started < 1.0 + GRACE + 1.0
    assert finished.timed_out
    assert finished.stdout == b"started\n"
    assert finished.signal == signal.SIGTERM and finished.returncode == -signal.SIGTERM


def test_a_process_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    code = """
    import signal, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("ready", flush=True)
    time.sleep(30)
    """
    started = time.monotonic()
    finished = bounded(python(code), tmp_path, timeout=0.5)
    took = time.monotonic() - started
    assert 0.5 + GRACE - 0.1 < took < 0.5 + GRACE + 2.0
    assert finished.timed_out and finished.signal == signal.SIGKILL
    assert finished.stdout == b"ready\n"


def test_what_it_leaves_in_its_group_dies_before_it_returns(tmp_path: Path) -> None:
    code = """
    import subprocess, sys
    ignores = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)"
    print(subprocess.Popen([sys.executable, "-c", ignores]).pid)
    """
    finished = bounded(python(code), tmp_path)
    assert finished.returncode == 0
    assert gone_within(int(finished.stdout), 0.5), "the process left behind outlived it"


def test_what_it_started_dies_with_it_when_the_deadline_passes(tmp_path: Path) -> None:
    code = """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    print(child.pid, flush=True)
    time.sleep(30)
    """
    finished = bounded(python(code), tmp_path, timeout=0.5)
    assert finished.timed_out
    assert gone_within(int(finished.stdout), 0.5)


def test_a_flood_of_output_keeps_its_end_and_says_how_much_was_cut(tmp_path: Path) -> None:
    """200 MB printed; what is kept, and what sounding holds in memory, is the last MiB."""
    code = """
    import sys
    block = b"x" * (1 << 20)
    for _ in range(200):
        sys.stdout.buffer.write(block)
        sys.stderr.buffer.write(block)
    sys.stdout.buffer.write(b"the end")
    """
    limit = 1 << 20
    tracemalloc.start()
    try:
        finished = bounded(python(code), tmp_path, limit=limit, timeout=60.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * limit
    assert len(finished.stdout) == len(finished.stderr) == limit
    assert finished.stdout.endswith(b"x" * 100 + b"the end")
    assert finished.stdout_cut == 200 * (1 << 20) + len(b"the end") - limit
    assert finished.stderr_cut == 199 * (1 << 20)


def test_no_timeout_waits_as_long_as_it_takes(tmp_path: Path) -> None:
    finished = bounded(python("import time; time.sleep(0.3)"), tmp_path, timeout=None)
    assert (finished.returncode, finished.timed_out) == (0, False)
    assert finished.seconds >= 0.3


def test_a_program_that_is_missing_or_not_executable_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        bounded(["no-such-program-anywhere"], tmp_path)
    with pytest.raises(FileNotFoundError):
        bounded(["./missing.sh"], tmp_path)
    (tmp_path / "plain.sh").write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(PermissionError):
        bounded(["./plain.sh"], tmp_path)
    (tmp_path / "plain.sh").chmod(0o755)
    assert bounded(["./plain.sh"], tmp_path).stdout == b"hi\n"


def test_a_program_is_found_on_the_path_of_the_environment_given(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    tool = tmp_path / "bin" / "only-here"
    tool.write_text("#!/bin/sh\necho found\n")
    tool.chmod(0o755)
    env = {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    assert bounded(["only-here"], tmp_path, env=env).stdout == b"found\n"
    with pytest.raises(FileNotFoundError):
        bounded(["only-here"], tmp_path)


def test_its_group_is_listed_while_it_runs_so_it_can_be_killed_from_elsewhere(
    tmp_path: Path,
) -> None:
    groups: set[int] = set()
    finished: list[Finished] = []
    worker = threading.Thread(
        target=lambda: finished.append(bounded(["sleep", "30"], tmp_path, groups=groups))
    )
    worker.start()
    deadline = time.monotonic() + 10
    while not groups:
        assert time.monotonic() < deadline, "the process never showed up in its groups"
        time.sleep(0.01)
    for pgid in list(groups):
        kill_group(pgid)
    worker.join(5)
    assert not worker.is_alive()
    assert finished[0].signal == signal.SIGKILL and not finished[0].timed_out
    assert groups == set()


def test_readable_waits_for_something_to_read_or_the_timeout(tmp_path: Path) -> None:
    read, write = os.pipe()
    try:
        started = time.monotonic()
        assert not readable(read, 0.2)
        assert 0.2 <= time.monotonic() - started < 2
        os.write(write, b"x")
        assert readable(read, None)
    finally:
        os.close(read)
        os.close(write)


PARENT = """
import sys, threading
from pathlib import Path
from sounding._process import run_bounded

folder = Path(sys.argv[1])
argv = ["sh", "-c", "echo $$ > child.pid; exec sleep 60"]
options = dict(cwd=folder, env=None, stdin=None, timeout=60.0, limit=1024)
threading.Thread(target=run_bounded, args=(argv,), kwargs=options).start()
"""


def test_a_process_dies_when_the_process_that_started_it_is_killed(tmp_path: Path) -> None:
    """`kill -9` of sounding: nothing is left to clean up but the kernel kills the child."""
    parent = subprocess.Popen(
        [PY, "-c", PARENT, str(tmp_path)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    child = wait_for_pid(tmp_path / "child.pid")
    try:
        assert state(child) not in (None, "Z")
        parent.kill()
        parent.wait()
        assert gone_within(child, 2.0), "sleep 60 outlived the process that started it"
    finally:
        if state(child) not in (None, "Z"):
            os.kill(child, signal.SIGKILL)


# ---- start, poll, stop --------------------------------------------------------------------


def test_a_started_process_writes_to_the_files_given_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    code = "import time; print('up', flush=True); time.sleep(30)"
    with open(tmp_path / "out.log", "wb") as out, open(tmp_path / "err.log", "wb") as err:
        process = start(python(code), cwd=tmp_path, env=None, stdout=out, stderr=err)
        # An unbuffered interpreter writes "up" and its newline as two writes.
        while not (tmp_path / "out.log").read_bytes().endswith(b"\n"):
            time.sleep(0.02)
        assert poll(process) is None
        assert stop(process) == -signal.SIGTERM
    assert (tmp_path / "out.log").read_text() == "up\n"
    assert stop(process) == -signal.SIGTERM  # a second stop changes nothing


def test_stop_kills_the_whole_group_after_the_grace(tmp_path: Path) -> None:
    code = """
    import signal, subprocess, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ignores = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", ignores])
    open("child.pid", "w").write(str(child.pid))
    time.sleep(30)
    """
    process = start(
        python(code), cwd=tmp_path, env=None, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    child = wait_for_pid(tmp_path / "child.pid")
    started = time.monotonic()
    assert stop(process, grace=0.3) == -signal.SIGKILL
    assert 0.3 <= time.monotonic() - started < 2.0
    assert gone_within(child, 0.5)


def test_poll_tells_the_end_without_reaping(tmp_path: Path) -> None:
    process = start(
        python("raise SystemExit(4)"),
        cwd=tmp_path,
        env=None,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while poll(process) is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert poll(process) == 4
    assert state(process.pid) == "Z"  # its pid, its group's id, is still taken
    assert stop(process) == 4
    assert state(process.pid) is None
