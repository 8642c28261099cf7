"""A sandbox for the programs sounding starts on the agent's behalf, with bubblewrap.

The whole system is seen read-only, `/tmp` is private, the network is off unless asked
for, and only the places named are writable (the trial's workspace, its trace). The
sandbox has its own process ids and dies with its parent: nothing it starts outlives it.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

INSTALL = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"


@dataclass(frozen=True)
class Sandbox:
    """What a sandboxed program may see and change."""

    readable: tuple[Path, ...] = ()  # shown read-only, above a private /tmp
    writable: tuple[Path, ...] = ()
    network: bool = False

    def wrap(self, argv: Sequence[str], cwd: Path) -> list[str]:
        """`argv`, run inside the sandbox from `cwd`."""
        wrapped = [_BWRAP, "--die-with-parent", "--unshare-pid", "--unshare-ipc"]
        wrapped += ["--unshare-uts", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        wrapped += ["--tmpfs", "/tmp"]
        if not self.network:
            wrapped.append("--unshare-net")
        for path in self.readable:
            wrapped += ["--ro-bind", str(path), str(path)]
        for path in self.writable:
            wrapped += ["--bind", str(path), str(path)]
        return [*wrapped, "--chdir", str(cwd), "--", *argv]


_BWRAP = "bwrap"


@functools.cache
def unavailable() -> str | None:
    """Why no sandbox can be made here (bubblewrap missing, or not allowed to make one);
    None when it can."""
    if shutil.which(_BWRAP) is None:
        return f"bubblewrap (bwrap) is not installed: {INSTALL}"
    probe = Sandbox().wrap(["true"], Path("/"))
    done = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        why = done.stderr.strip() or f"exit status {done.returncode}"
        return f"bubblewrap cannot make a sandbox on this machine ({why})"
    return None
