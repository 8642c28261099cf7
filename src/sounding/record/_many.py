"""Many records from one path, read one at a time (`sounding score CASE --records PATH`).

- a folder: each file in it is a record, in its own format (detected, or its name's: a
  `.jsonl` file there is an agent's event stream); an OTLP export is one record per trace;
- a JSON Lines file (`.jsonl`, `.ndjson`): one record per line, each line in any format the
  registry tells (a stored record, a conversation, an OTLP export: one record per trace);
- any other file: one document, an OTLP export holding many traces (one record each) or a
  single record.

A record that cannot be read is yielded as its error, named by file and line, and the
next one is read: one bad record never stops the others. A JSON Lines file is streamed,
so memory stays flat whatever its length.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from sounding._files import open_regular
from sounding.record._build import RecordError
from sounding.record._detect import formats, read_text
from sounding.record._formats import Sample
from sounding.record._model import RunRecord


@dataclass(frozen=True)
class Found:
    """One record read from a path, or why it could not be: `source` says where it is."""

    source: str
    record: RunRecord | None = None
    error: RecordError | None = None


def read_records(path: Path | str, format: str | None = None) -> Iterator[Found]:
    """Every record under `path` (a folder, a JSON Lines file of records, an export)."""
    path = Path(path)
    if path.is_dir():
        yield from _folder(path, format)
    elif formats.named_by(path) == "jsonl":  # JSON Lines: a record per line
        yield from _lines(path, format)
    else:
        yield from _file(path, format)


def record_label(record: RunRecord, name: str) -> Any:
    """What a record says under `name`: its `metadata[name]`, or for an OpenTelemetry trace
    the attribute `name` of its root span, then of its resource; None when none says."""
    meta = record.metadata
    if name in meta:
        return meta[name]
    for span in (meta.get("otel_spans") or {}).values():
        if not isinstance(span, dict) or span.get("parent") is not None:
            continue
        attributes = span.get("attributes") or {}
        if name in attributes:
            return attributes[name]
    for resource in meta.get("otel_resources") or []:
        if isinstance(resource, dict) and name in resource:
            return resource[name]
    return None


def _folder(folder: Path, format: str | None) -> Iterator[Found]:
    """Each file of the folder (hidden ones aside), by name; sub-folders are not entered."""
    names = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    for name in names:
        path = folder / name
        if path.is_file():
            yield from _file(path, format)


def _file(path: Path, format: str | None) -> Iterator[Found]:
    """A file that is one document: one record, or one per trace of an export."""
    try:
        if format is None:
            format = formats.named_by(path)
        yield from _sample(Sample(read_text(path), str(path)), format)
    except RecordError as exc:
        yield Found(str(path), error=exc)


def _lines(path: Path, format: str | None) -> Iterator[Found]:
    """One record per line, the file streamed; a line that is not UTF-8 is its own error."""
    with open_regular(path) as opened:
        if opened is None:
            problem = "not a regular file (a link, a FIFO?)"
            yield Found(str(path), error=RecordError(str(path), problem, "name the file itself"))
            return
        with io.BufferedReader(cast(io.RawIOBase, opened[0]), 1 << 16) as buffered:
            for number, raw in enumerate(buffered, start=1):
                if raw.strip():
                    yield from _line(path, number, raw, format)


def _line(path: Path, number: int, raw: bytes, format: str | None) -> Iterator[Found]:
    source = f"{path}:{number}"
    try:
        text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        for found in _sample(Sample(text, source), format):
            yield found if found.error is None else _at_line(found, path, number)
    except UnicodeDecodeError as exc:
        error = RecordError(str(path), f"not UTF-8 (byte {exc.start})", "write it as UTF-8")
        yield Found(source, error=replace(error, line=number))
    except RecordError as exc:
        yield _at_line(Found(source, error=exc), path, number)


def _at_line(found: Found, path: Path, number: int) -> Found:
    """An error of a one-line record names the file's line (its own line is always 1)."""
    error = found.error
    if error is None or error.source != found.source:
        return found
    column = error.column if error.line is not None else None
    return replace(found, error=replace(error, source=str(path), line=number, column=column))


def _sample(sample: Sample, format: str | None) -> Iterator[Found]:
    chosen = formats.choose(sample, format)
    if chosen.each is None:
        yield Found(sample.source, record=chosen.read(sample))
        return
    for trace_id, read in chosen.each(sample):
        source = f"{sample.source}, trace {trace_id}"
        if isinstance(read, RecordError):
            yield Found(source, error=read)
        else:
            yield Found(source, record=read)
