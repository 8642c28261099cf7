"""Starting, bounding and stopping processes: the one way sounding runs any.

`start` gives a process a session of its own, so that `stop` kills its whole group, and
puts it behind `setpriv --pdeathsig KILL` (util-linux): the kernel kills it when the thread
that started it ends, even when sounding is killed with SIGKILL. The signal follows that
*thread*: start a process from a thread that outlives it, as a trial's worker does. Where
there is no such setpriv (not Linux), processes run without it (`_guard`).

`run_bounded` gives a process temporary files for its input and outputs, not pipes, and
reads only the end of its outputs, once it has ended: a daemon left holding its stdout
cannot make a read outlive the deadline, nor gigabytes of output fill memory.

What a process moves to a session of its own (a daemon) outlives its group. Inside
`ending_orphans` (a `sounding run`), this process adopts such orphans (Linux's child
subreaper) and kills them when it ends; a sandbox ends them with the trial.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import select
import shlex
import shutil
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryFile
from typing import IO, TYPE_CHECKING

from sounding._sandbox import Sandbox

if TYPE_CHECKING:
    import subprocess

_SET_CHILD_SUBREAPER = 36  # prctl(2)

GRACE = 1.0
"""Seconds a running process has after SIGTERM before its whole group gets SIGKILL."""


@dataclass(frozen=True)
class Finished:
    """How a process run by `run_bounded` ended, and the end of what it printed."""

    returncode: int  # its exit status, or minus the signal that killed it
    timed_out: bool
    stdout: bytes
    stderr: bytes
    stdout_cut: int  # bytes dropped from the start of stdout to keep its end (0: none)
    stderr_cut: int
    seconds: float

    @property
    def signal(self) -> int | None:
        """The signal that killed it, if one did."""
        return -self.returncode if self.returncode < 0 else None


def run_bounded(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float | None,
    limit: int,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    groups: set[int] | None = None,
    sandbox: Sandbox | None = None,
) -> Finished:
    """Run `argv` until it ends or `timeout` seconds pass (None: no deadline), then `stop`
    it; keep the last `limit` bytes of each output. `env` is its whole environment (None:
    this process's), `stdin` all its input (None: none). Its group is in `groups` while it runs;
    it runs inside `sandbox` when one is given. OSError when it cannot be started."""
    started, groups = time.monotonic(), set() if groups is None else groups
    with TemporaryFile() as given, TemporaryFile() as out, TemporaryFile() as err:
        given.write(stdin or b"")
        given.seek(0)
        process = start(
            argv, cwd=cwd, env=env, stdin=given, stdout=out, stderr=err, sandbox=sandbox
        )
        in_time = False
        try:
            groups.add(process.pid)
            in_time = _ended_within(process, timeout)
        finally:
            groups.discard(process.pid)  # before it is reaped: then its id may be reused
            returncode = stop(process)
        (stdout, stdout_cut), (stderr, stderr_cut) = end_of(out, limit), end_of(err, limit)
    seconds = time.monotonic() - started
    return Finished(returncode, not in_time, stdout, stderr, stdout_cut, stderr_cut, seconds)


def split_command(command: list[str] | str) -> list[str]:
    """A command as arguments: a list as given, a string split like a shell would (no shell)."""
    return list(command) if isinstance(command, list) else shlex.split(command)


def start(
    argv: Sequence[str],
    *,
    cwd: Path,
    stdout: int | IO[bytes],
    stderr: int | IO[bytes],
    env: Mapping[str, str] | None = None,
    stdin: int | IO[bytes] | None = None,
    sandbox: Sandbox | None = None,
) -> subprocess.Popen[bytes]:
    """Start `argv` in a session of its own, guarded by the parent-death signal (inside
    `sandbox` when one is given); streams as `Popen` takes them, but no `stdin` gives it
    nothing to read. OSError when it cannot be started. End it with `stop`."""
    import subprocess  # with the first process started, not with sounding

    guarded = _guard(argv, cwd, env)
    if sandbox is not None:
        guarded = [*guarded[: -len(argv)], *sandbox.wrap(argv, cwd)]
    return subprocess.Popen(
        guarded,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL if stdin is None else stdin,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )


def stop(process: subprocess.Popen[bytes], grace: float = GRACE) -> int:
    """End `process` and its whole group: SIGTERM and `grace` seconds to exit if it runs,
    then SIGKILL to the group before it is reaped, while its pid (the group's id) is still
    taken. Its return code. One already reaped is left alone: the id may be another's."""
    if process.returncode is not None:
        return process.returncode
    if poll(process) is None:
        kill_group(process.pid, signal.SIGTERM)
        _ended_within(process, grace)
    kill_group(process.pid)
    return process.wait()


def poll(process: subprocess.Popen[bytes]) -> int | None:
    """Its return code once it has ended, None while it runs; unlike `Popen.poll` it is
    not reaped, so that `stop` can still kill its group."""
    if process.returncode is not None:
        return process.returncode
    found = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
    if found is None:
        return None
    killed = found.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
    return -found.si_status if killed else found.si_status


def end_of(output: IO[bytes], limit: int) -> tuple[bytes, int]:
    """The last `limit` bytes of a file, and how many bytes before them were left out."""
    cut = max(0, os.fstat(output.fileno()).st_size - limit)
    output.seek(cut)
    return output.read(limit), cut


def kill_group(pgid: int, sig: signal.Signals = signal.SIGKILL) -> None:
    """Send `sig` to every process of the group; nothing when the group is gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


@contextlib.contextmanager
def ending_orphans() -> Iterator[None]:
    """While inside, this process adopts the descendants its programs leave behind (Linux:
    `PR_SET_CHILD_SUBREAPER`); on leaving, it kills and reaps every child it gained inside,
    and leaves alone those it had before. For a process that owns what it starts while
    inside, like the command line's `run`, not a library's host. Where the kernel cannot
    adopt (not Linux), nothing is done."""
    if not _subreaper(True):
        yield
        return
    before = set(_children())
    try:
        yield
    finally:
        _subreaper(False)
        for _ in range(100):  # a child killed may leave children of its own: adopt those too
            children = [pid for pid in _children() if pid not in before]
            if not children:
                break
            for pid in children:
                kill_group(pid)  # a daemon leads a session, and so a group, of its own
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)


def _subreaper(on: bool) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _children() -> list[int]:
    """The ids of this process's children, from /proc."""
    me, found = os.getpid(), []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
                if int(fields[1]) == me:
                    found.append(int(entry.name))
    return found


def readable(fd: int, timeout: float | None) -> bool:
    """Whether `fd` has something to read, or its end, within `timeout` seconds (None:
    wait). A pidfd is readable once its process has ended."""
    waiting = select.poll()
    waiting.register(fd, select.POLLIN)
    return bool(waiting.poll(None if timeout is None else min(max(timeout, 0) * 1000, 2**31 - 1)))


def _ended_within(process: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Whether it ended within `timeout` seconds (None: wait), without reaping it. A pidfd
    wakes this as it ends; without one (not Linux, or before 5.3) its state is polled."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while poll(process) is None and time.monotonic() < deadline:
            time.sleep(0.005)
        return poll(process) is not None
    try:
        return readable(pidfd, timeout)
    finally:
        os.close(pidfd)


def _guard(argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None) -> list[str]:
    """`argv` behind `setpriv --pdeathsig KILL` if there is one. The program is looked for
    first, as exec will: behind setpriv a missing one is no OSError but an exit 127."""
    setpriv = _setpriv()
    if setpriv is None:
        return list(argv)
    program = os.path.join(cwd, argv[0]) if "/" in argv[0] else argv[0]
    search = (os.environ if env is None else env).get("PATH", os.defpath)
    if shutil.which(program, path=search) is None:
        code = errno.EACCES if "/" in argv[0] and os.path.isfile(program) else errno.ENOENT
        raise OSError(code, os.strerror(code), argv[0])
    return [setpriv, "--pdeathsig", "KILL", "--", *argv]


@functools.cache
def _setpriv() -> str | None:
    """The `setpriv` on PATH if it sets the parent-death signal (util-linux 2.33 on)."""
    import subprocess

    found = shutil.which("setpriv")
    usage = b"" if found is None else subprocess.run([found, "--help"], capture_output=True).stdout
    return found if b"--pdeathsig" in usage else None
