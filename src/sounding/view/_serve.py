"""`sounding view RESULTS_DIR`: serve the viewer on a socket this process binds, print its
URL, and open a browser on it unless told not to."""

from __future__ import annotations

import ipaddress
import socket
import threading
import webbrowser
from pathlib import Path

import uvicorn
from rich.console import Console
from rich.markup import escape

from sounding._exit import ExitCode
from sounding.view._app import LOOPBACK, create_app
from sounding.view._index import ViewError


def view_command(results_dir: Path, *, host: str, port: int, browser: bool) -> int:
    """Serve the results folder until stopped (Ctrl-C leaves as every command interrupted
    does, 130); 2 when the folder cannot be served or the address cannot be bound (the
    message says why and what to do)."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        root, first = results_folder(results_dir)
        sock = bind(host, port)
    except ViewError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return ExitCode.USAGE
    url = f"http://{_url_host(host)}:{sock.getsockname()[1]}/" + (f"run/{first}" if first else "")
    out = Console(highlight=False, soft_wrap=True)
    out.print(f"sounding view: {escape(str(root))} at {escape(url)} (Ctrl-C to stop)")
    if host not in LOOPBACK:
        err.print(
            f"[yellow]note:[/] serving on {escape(host)}: anyone who reaches it reads the runs"
        )
    if browser:
        threading.Timer(0.3, webbrowser.open, [url]).start()
    hosts = LOOPBACK if host in LOOPBACK else ("*",)
    config = uvicorn.Config(create_app(root, hosts=hosts), log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
    return ExitCode.PASS


def results_folder(path: Path) -> tuple[Path, str | None]:
    """The folder of runs to serve, and the run to open first: `path` itself, or its parent
    when `path` is one run's folder, or `path/results` when `path` is a suite."""
    if not path.is_dir():
        raise ViewError(
            f"{path}: no such folder; give the results folder of a suite (like evals/results)"
        )
    if (path / "run.json").is_file():
        return path.parent, path.name
    if not any(path.glob("*/run.json")) and (path / "results").is_dir():
        return path / "results", None
    return path, None


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one), or a ViewError saying why not."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ViewError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); choose another port with "
            "--port N, or --port 0 for any free one"
        ) from None
    sock.set_inheritable(False)
    return sock


def _url_host(host: str) -> str:
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host
    return f"[{address}]" if address.version == 6 else str(address)
