"""The rows of a dataset file: JSON Lines, CSV, Parquet, or a Hugging Face `datasets` folder.

One reader per kind, registered by the file name's ending (a folder is a `datasets`
folder). Every row is a mapping of field names to values, numbered from 1; a JSONL or CSV
row also knows its line. JSONL and CSV need only the standard library; Parquet and the
`datasets` folder (its Arrow files, read with pyarrow: the `datasets` package is not
needed) need `pip install 'sounding[parquet]'` (or `sounding[datasets]`, the same pyarrow).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sounding._files import json_kind, loads, open_regular, read_regular

LIMIT = 1 << 30  # 1 GiB: a dataset of scenarios is far smaller; a bigger file is a mistake
EXTRA = "pip install 'sounding[parquet]'"


@dataclass(frozen=True)
class Row:
    """One row of a dataset: its number (from 1), its line when the format has lines."""

    number: int
    line: int | None
    values: dict[str, Any]

    def where(self, file: str) -> str:
        """`rows.jsonl row 3 (line 4)`."""
        return f"{file} row {self.number}" + (f" (line {self.line})" if self.line else "")


class DatasetError(Exception):
    """A dataset that cannot be read: the message says where and how to fix it."""


Read = Callable[[Path, str], Iterator[Row]]


class _Readers:
    """One reader per kind of dataset, found by how the file's name ends."""

    def __init__(self) -> None:
        self._readers: dict[str, Read] = {}

    def reader(self, *suffixes: str) -> Callable[[Read], Read]:
        def register(read: Read) -> Read:
            for suffix in suffixes:
                if suffix in self._readers:
                    raise ValueError(f"dataset suffix '{suffix}' is registered twice")
                self._readers[suffix] = read
            return read

        return register

    def find(self, path: Path, shown: str) -> Read:
        key = "/" if path.is_dir() else path.suffix.lower()
        if key not in self._readers:
            known = ", ".join(f"*{suffix}" for suffix in self._readers if suffix != "/")
            raise DatasetError(
                f"{shown}: cannot tell the kind of dataset from its name: name it {known}, "
                "or give a folder saved by Hugging Face datasets (save_to_disk)"
            )
        return self._readers[key]


readers = _Readers()


def read_rows(path: Path, shown: str) -> list[Row]:
    """Every row of the dataset at `path` (`shown` is how errors name it)."""
    if not path.exists() and not path.is_symlink():
        raise DatasetError(f"{shown}: does not exist: fix `dataset.path`")
    return list(readers.find(path, shown)(path, shown))


def _text(path: Path, shown: str) -> str:
    """The file's text, read without following a link and at most `LIMIT` bytes."""
    found = read_regular(path, LIMIT)
    if found is None:
        raise DatasetError(f"{shown}: is not a regular file (a link?): name the file itself")
    data, size = found
    if size > LIMIT:
        raise DatasetError(f"{shown}: is over {LIMIT >> 20} MiB: split it into several cases")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{shown}: is not UTF-8 (byte {exc.start}): save it as UTF-8") from None


@readers.reader(".jsonl", ".ndjson")
def _jsonl(path: Path, shown: str) -> Iterator[Row]:
    number = 0
    for line, text in enumerate(_text(path, shown).splitlines(), start=1):
        if not text.strip():
            continue
        number += 1
        try:
            value = loads(text)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            raise DatasetError(
                f"{shown}:{line}: row {number} is not JSON ({exc}): write one JSON object a line"
            ) from None
        if not isinstance(value, dict):
            raise DatasetError(
                f"{shown}:{line}: row {number} is {json_kind(value, article=True)}, not an "
                'object: write one object a line, like {"id": "a", "question": "..."}'
            )
        yield Row(number, line, value)


@readers.reader(".csv", ".tsv")
def _csv(path: Path, shown: str) -> Iterator[Row]:
    dialect = "excel-tab" if path.suffix.lower() == ".tsv" else "excel"
    reader = csv.DictReader(io.StringIO(_text(path, shown), newline=""), dialect=dialect)
    start = 2
    try:
        for number, values in enumerate(reader, start=1):
            if None in values:
                raise DatasetError(
                    f"{shown}:{start}: row {number} has more values than the header has "
                    "names: quote a value that holds the separator"
                )
            # a short row leaves its last fields out (None): they are missing, not empty
            yield Row(number, start, {k: v for k, v in values.items() if v is not None})
            start = reader.line_num + 1
    except csv.Error as exc:
        raise DatasetError(f"{shown}:{reader.line_num}: not CSV: {exc}") from None


def _need_pyarrow(shown: str) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise DatasetError(f"{shown}: reading it needs pyarrow: {EXTRA}") from None


def _table_rows(table: Any) -> Iterator[Row]:
    for number, values in enumerate(table.to_pylist(), start=1):
        yield Row(number, None, values)


@readers.reader(".parquet")
def _parquet(path: Path, shown: str) -> Iterator[Row]:
    _need_pyarrow(shown)
    import pyarrow.parquet

    with open_regular(path) as found:
        if found is None:
            raise DatasetError(f"{shown}: is not a regular file (a link?): name the file itself")
        try:
            table = pyarrow.parquet.read_table(found[0])
        except (OSError, ValueError) as exc:  # pyarrow's errors derive from these
            raise DatasetError(f"{shown}: is not a Parquet file ({exc})") from None
    return _table_rows(table)


@readers.reader("/")
def _saved(path: Path, shown: str) -> Iterator[Row]:
    """A folder written by `datasets.Dataset.save_to_disk`: state.json lists its Arrow files."""
    _need_pyarrow(shown)
    import pyarrow

    files = _arrow_files(path, shown)
    tables = [_arrow_table(path / name, f"{shown}/{name}") for name in files]
    return _table_rows(pyarrow.concat_tables(tables))


def _arrow_files(folder: Path, shown: str) -> list[str]:
    fix = "give a folder written by Dataset.save_to_disk (its state.json lists its .arrow files)"
    try:
        state = loads(_text(folder / "state.json", f"{shown}/state.json"))
        files = [entry["filename"] for entry in state["_data_files"]]
    except DatasetError as exc:
        raise DatasetError(f"{exc}; {fix}") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise DatasetError(f"{shown}/state.json: no `_data_files` list ({exc}); {fix}") from None
    if not files or not all(isinstance(f, str) and "/" not in f and f != ".." for f in files):
        raise DatasetError(f"{shown}/state.json: `_data_files` names no file of the folder; {fix}")
    return files


def _arrow_table(path: Path, shown: str) -> Any:
    import pyarrow.ipc

    with open_regular(path) as found:
        if found is None:
            raise DatasetError(f"{shown}: is not a regular file: save the dataset again")
        data = found[0].read()
    try:  # `datasets` writes the stream format
        return pyarrow.ipc.open_stream(data).read_all()
    except (OSError, ValueError):
        pass
    try:
        return pyarrow.ipc.open_file(pyarrow.py_buffer(data)).read_all()
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{shown}: is not an Arrow file ({exc})") from None
