"""Files sounding writes: atomically, so a reader (or a resumed run) never sees half a file."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

TMP_PREFIX = ".tmp-"
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


def write_text(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file renamed over it. A file name that
    is not UTF-8 (Python holds its bytes as surrogates) is written escaped, `\\udcff`: the
    file stays UTF-8, and in JSON the escape reads back as the same name."""
    write_bytes(path, text.encode("utf-8", errors="backslashreplace"))


def temporary_path(path: Path) -> str:
    """Where `path` is written before it is renamed into place: beside it, named for this
    process and thread (one writer per thread at a time, so the name cannot clash)."""
    folder, name = os.path.split(path)
    return os.path.join(folder, f"{TMP_PREFIX}{name}.{os.getpid()}.{threading.get_ident()}")


def write_bytes(path: Path, data: bytes) -> None:
    tmp = temporary_path(path)
    fd = os.open(tmp, _FLAGS, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)  # a write refused (a full device) names the file
        raise


def write_json(path: Path, value: Any) -> None:
    """Compact JSON (the fast encoder), newline-terminated."""
    write_text(path, json.dumps(value, ensure_ascii=False, default=str) + "\n")


def read_json(path: str | os.PathLike[str]) -> Any:
    return loads(Path(path).read_bytes())


_JSON_KINDS = {type(None): "null", dict: "object", list: "array", str: "string", bool: "boolean"}


def json_kind(value: Any, *, article: bool = False) -> str:
    """What a decoded JSON value is, in JSON's words: `array`, or with `article` `an array`
    (and `null`, which takes none)."""
    kind = _JSON_KINDS.get(type(value), "number")
    if not article or kind == "null":
        return kind
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def loads(text: str | bytes) -> Any:
    """`json.loads` for text an agent may have written: nesting too deep for the decoder
    or a number too long to convert is a `json.JSONDecodeError` like any other bad JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except (RecursionError, ValueError) as exc:
        problem = unreadable(exc)
    raise json.JSONDecodeError(problem, text if isinstance(text, str) else "", 0) from None


def unreadable(exc: RecursionError | ValueError) -> str:
    """What a parser that is not at fault raised on a document built to break it: nesting
    deeper than Python recurses, or an integer of more digits than it converts."""
    if isinstance(exc, RecursionError):
        return "it is nested too deeply: flatten it"
    return f"a value cannot be converted ({str(exc).split(';')[0]}): write a smaller one"


def link_on_path(root: Path, relative: str) -> str | None:
    """The first link (relative to `root`) met on the way from `root` to `relative`: what
    is written at that path would land wherever the link leads."""
    here = root
    for part in Path(relative).parts:
        here = here / part
        if here.is_symlink():
            return here.relative_to(root).as_posix()
    return None


def given_through_link(relative: str, link: str) -> str:
    """Why a given file cannot be laid over a fixture with a link on its path."""
    return (
        f"workspace.given '{relative}' would be written through the link '{link}' of the "
        "fixture: give it a path that no link of the fixture is on, or remove the link"
    )


def sweep_tmp(folder: Path) -> None:
    """Remove temporary files a killed run left behind."""
    for leftover in folder.rglob(f"{TMP_PREFIX}*"):
        leftover.unlink(missing_ok=True)


_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@contextlib.contextmanager
def open_regular(path: str | os.PathLike[str]) -> Iterator[tuple[BinaryIO, int] | None]:
    """A regular file open for reading, and its size; None when `path` is not a regular
    file (a link, a FIFO, a socket, a device: never followed, never waited on)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:  # gone, a link (ELOOP), or a FIFO with no writer that cannot open
        yield None
        return
    with os.fdopen(fd, "rb", buffering=0) as handle:
        info = os.fstat(fd)
        yield (handle, info.st_size) if stat.S_ISREG(info.st_mode) else None


def read_regular(path: str | os.PathLike[str], limit: int) -> tuple[bytes, int] | None:
    """At most `limit` bytes of a regular file, and its whole size; None when `path` is not
    a regular file (see `open_regular`)."""
    with open_regular(path) as found:
        if found is None:
            return None
        handle, size = found
        chunks, left = [], limit
        while left > 0 and (chunk := handle.read(min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), size
