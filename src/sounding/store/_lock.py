"""A run folder has one writer: the process that holds its lock.

The lock is an `flock` on `<run>/.lock`, so the system releases it when its holder ends,
however it ends (`kill -9` included): a run killed while writing is resumable at once.
The file names its holder, for the message another process gets.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from sounding._files import read_regular
from sounding.store._documents import ResultsError

LOCK_FILE = ".lock"
_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


@contextlib.contextmanager
def run_lock(root: Path) -> Iterator[None]:
    """Hold the run folder `root` for this process, or raise ResultsError naming who does."""
    fd = os.open(root / LOCK_FILE, _FLAGS, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsError(_held(root, fd)) from None
        os.ftruncate(fd, 0)
        os.write(fd, _holder().encode())
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


def _holder() -> str:
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    command = " ".join(sys.argv[:4])
    return f"pid {os.getpid()} on {socket.gethostname()}, since {started} ({command})"


def _held(root: Path, fd: int) -> str:
    holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "another process"
    return (
        f"{root} is being written by another sounding ({holder}): one run folder has one "
        "writer; wait for it to end, or stop it, then run again"
    )


def run_in_progress(root: Path) -> bool:
    """Whether a live process on this machine holds the run folder `root` (read from the
    holder its lock file names; nothing is locked or written, so a writer is never in the
    way). False when no run ever locked it, its holder ended, or it runs elsewhere."""
    found = read_regular(root / LOCK_FILE, 4096)
    if found is None:
        return False
    words = found[0].decode(errors="replace").split()
    if len(words) < 4 or words[0] != "pid" or not words[1].isdigit() or words[2] != "on":
        return False
    if words[3].rstrip(",") != socket.gethostname():
        return False
    try:
        os.kill(int(words[1]), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
