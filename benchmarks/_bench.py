"""What every benchmark script shares: timing a child process with its peak memory, and
printing figures and targets the same way.

Each measured program is started by a small launcher process (this file, run as a script),
which reaps it with `os.wait4` and reports its wall time and peak resident memory. The hop
matters on Linux: a child's `ru_maxrss` starts at the size of the process that forked it,
so a benchmark that forked its measured program directly (after generating its inputs, say)
would report its own size, not the program's.

    python _bench.py RESULT_FILE PROGRAM [ARG...]   (what `run_child` runs)
"""

from __future__ import annotations

import compileall
import functools
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Child:
    """A finished child process: wall time, peak resident memory, exit code and output."""

    argv: list[str]
    seconds: float
    peak_mb: float
    returncode: int
    stdout: str
    stderr: str
    cpu_seconds: float = 0.0  # user + system time of the child and what it waited for

    def result(self) -> dict[str, Any]:
        """The JSON object a driver printed as its last line of stdout."""
        lines = self.stdout.strip().splitlines()
        return self._object(lines[-1] if lines else "", "on its last line")

    def document(self) -> dict[str, Any]:
        """The JSON object that is the whole of its stdout (like `sounding score --json`)."""
        return self._object(self.stdout, "as its output")

    def _object(self, text: str, where: str) -> dict[str, Any]:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise BenchError(self, f"printed no JSON object {where}") from None
        if not isinstance(value, dict):
            raise BenchError(self, f"printed JSON that is not an object {where}")
        return value


class BenchError(RuntimeError):
    """A measured program did not do its job: the figures would mean nothing."""

    def __init__(self, child: Child, what: str) -> None:
        tail = (child.stderr or child.stdout).strip().splitlines()[-15:]
        shown = "\n    ".join(tail) or "(no output)"
        super().__init__(
            f"`{' '.join(child.argv)}` {what} (exit code {child.returncode}); "
            f"its last output:\n    {shown}"
        )


def run_child(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    ok_codes: Sequence[int] = (0,),
) -> Child:
    """Run `argv` to its end through the launcher; see the module's docstring for why."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as scratch,
    ):
        result_file = Path(scratch) / "result.json"
        launcher = [sys.executable, str(Path(__file__).resolve()), str(result_file), *argv]
        subprocess.run(
            launcher, cwd=cwd, env=None if env is None else dict(env), stdout=out, stderr=err
        )
        stdout, stderr = _read(out), _read(err)
        measured = json.loads(result_file.read_text()) if result_file.is_file() else {}
    child = Child(
        list(argv),
        float(measured.get("seconds", 0.0)),
        float(measured.get("peak_kb", 0)) / 1024,
        int(measured.get("returncode", -1)),
        stdout,
        stderr,
        float(measured.get("cpu_seconds", 0.0)),
    )
    if not measured:
        raise BenchError(child, "could not be started by the launcher")
    if child.returncode not in ok_codes:
        raise BenchError(child, f"exited {child.returncode}, expected {list(ok_codes)}")
    return child


def _launch(result_file: str, argv: list[str]) -> int:
    """The launcher: start `argv`, reap it with wait4, write what it cost to `result_file`."""
    started = time.perf_counter()
    process = subprocess.Popen(argv)
    _pid, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = code = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    measured = {
        "seconds": seconds,
        "peak_kb": usage.ru_maxrss,
        "returncode": code,
        "cpu_seconds": cpu,
    }
    Path(result_file).write_text(json.dumps(measured), encoding="utf-8")
    return 0


def _read(stream: Any) -> str:
    stream.seek(0)
    return str(stream.read().decode(errors="replace"))


def python_child(script: Path, *args: str, ok_codes: Sequence[int] = (0,)) -> Child:
    """Run a Python script with this interpreter."""
    return run_child([sys.executable, str(script), *args], ok_codes=ok_codes)


def sounding_argv() -> list[str]:
    """How to start the `sounding` command installed beside this interpreter, its modules
    compiled to bytecode first (`compile_sounding`)."""
    compile_sounding()
    beside = Path(sys.executable).with_name("sounding")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("sounding")
    return [found] if found else [sys.executable, "-m", "sounding.cli"]


@functools.cache
def compile_sounding() -> None:
    """Compile sounding's modules to bytecode where the interpreter keeps it (`__pycache__`),
    as the first import of an installed package does, or `pip install` from a wheel.

    Without it, a machine that sets PYTHONDONTWRITEBYTECODE (the one the targets were set
    on does) compiles all of sounding's source on every start, and each figure here would
    include some 45 ms of compiling that no installed copy pays.
    """
    spec = importlib.util.find_spec("sounding")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(folder, quiet=1)


@contextmanager
def workdir(name: str, keep: bool) -> Iterator[Path]:
    """A temporary folder for generated inputs; kept (and named) when `keep` is set."""
    folder = Path(tempfile.mkdtemp(prefix=f"sounding-{name}-"))
    try:
        yield folder
    finally:
        if keep:
            print(f"inputs kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


def heading(text: str) -> None:
    print(f"\n== {text}")


def figure(label: str, value: str) -> None:
    print(f"  {label:<34}  {value}")


def target(label: str, met: bool, detail: str) -> bool:
    """Print one target line; missing a target is information, not a failure of the script."""
    print(f"  {label:<34}  {detail}  -> {'target met' if met else 'target missed'}")
    return met


def per_second(count: int, seconds: float, what: str) -> str:
    """`6,250 records/s (0.05 s)`."""
    rate = f"{count / seconds:,.0f}" if seconds > 0 else "n/a"
    return f"{rate} {what}/s ({seconds:.2f} s)"


def paired_ratio(ours: Sequence[float], floor: Sequence[float]) -> float:
    """The median of the ratios of runs taken in turn (ours[i] / floor[i]). The ratio of the
    two best times would set a floor run from a fast moment against a run of sounding from a
    slow one: this machine's speed drifts within seconds."""
    return statistics.median(a / b for a, b in zip(ours, floor, strict=True))


def grew(small_mb: float, large_mb: float) -> str:
    change = (large_mb - small_mb) / small_mb * 100 if small_mb else 0.0
    return f"{small_mb:.1f} MB -> {large_mb:.1f} MB ({change:+.1f} %)"


def flat(small_mb: float, large_mb: float, tolerance: float = 0.10) -> bool:
    """Memory counts as flat when the larger run's peak is within `tolerance` of the smaller."""
    return large_mb <= small_mb * (1 + tolerance)


if __name__ == "__main__":
    sys.exit(_launch(sys.argv[1], sys.argv[2:]))
