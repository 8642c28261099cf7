"""The rows of a dataset: JSONL, CSV, Parquet and a `datasets`-saved folder."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from sounding.spec import SpecError, load_case
from sounding.spec._dataset import DatasetError, read_rows

CASE = """\
dataset: {path: DATA}
scenario:
  id: "q-{{ n }}"
  user: "{{ question }}"
"""


def case_for(tmp_path: Path, data: str) -> Path:
    path = tmp_path / "case.yaml"
    path.write_text(CASE.replace("DATA", data))
    return path


def test_jsonl_rows_are_numbered_with_their_lines_and_must_be_objects(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"n": 1}\n\n{"n": [2, 3]}\n')
    rows = read_rows(path, "rows.jsonl")
    assert [(r.number, r.line, r.values) for r in rows] == [(1, 1, {"n": 1}), (2, 3, {"n": [2, 3]})]
    path.write_text('{"n": 1}\n[1]\n')
    with pytest.raises(DatasetError, match=r"rows.jsonl:2: row 2 is an array, not an object"):
        read_rows(path, "rows.jsonl")
    path.write_text('{"n": 1}\n{"n": \n')
    with pytest.raises(DatasetError, match=r"rows.jsonl:2: row 2 is not JSON"):
        read_rows(path, "rows.jsonl")


def test_csv_rows_are_text_with_their_lines_and_a_short_row_misses_its_last_fields(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rows.csv"
    path.write_text('n,question\n1,"two\nlines"\n2\n')
    rows = read_rows(path, "rows.csv")
    assert [(r.number, r.line, r.values) for r in rows] == [
        (1, 2, {"n": "1", "question": "two\nlines"}),
        (2, 4, {"n": "2"}),
    ]
    found = case_for(tmp_path, "rows.csv")
    with pytest.raises(SpecError, match=r"rows.csv row 2 \(line 4\) has no field 'question'"):
        load_case(found)
    path.write_text("n,question\n1,a,b\n")
    with pytest.raises(DatasetError, match=r"rows.csv:2: row 1 has more values than the header"):
        read_rows(path, "rows.csv")


def test_parquet_rows_keep_their_types(tmp_path: Path) -> None:
    import pyarrow
    import pyarrow.parquet

    table = pyarrow.table({"n": [1, 2], "question": ["one?", "two?"]})
    pyarrow.parquet.write_table(table, tmp_path / "rows.parquet")
    case = load_case(case_for(tmp_path, "rows.parquet"))
    assert [(s.id, s.user) for s in case.scenarios] == [("q-1", ["one?"]), ("q-2", ["two?"])]


def save_like_datasets(folder: Path, tables: list[object]) -> None:
    """What `Dataset.save_to_disk` writes: Arrow stream files listed by state.json."""
    import pyarrow
    import pyarrow.ipc

    folder.mkdir()
    names = [f"data-{i:05d}-of-{len(tables):05d}.arrow" for i in range(len(tables))]
    for name, table in zip(names, tables, strict=True):
        with pyarrow.ipc.new_stream(str(folder / name), table.schema) as writer:  # type: ignore[attr-defined]
            writer.write_table(table)
    state = {"_data_files": [{"filename": n} for n in names], "_split": None}
    (folder / "state.json").write_text(json.dumps(state))
    (folder / "dataset_info.json").write_text("{}")


def test_a_datasets_saved_folder_is_read_from_its_arrow_files(tmp_path: Path) -> None:
    import pyarrow

    save_like_datasets(
        tmp_path / "saved",
        [
            pyarrow.table({"n": [1], "question": ["a?"]}),
            pyarrow.table({"n": [2], "question": ["b?"]}),
        ],
    )
    case = load_case(case_for(tmp_path, "saved"))
    assert [s.user for s in case.scenarios] == [["a?"], ["b?"]]
    (tmp_path / "saved" / "state.json").write_text("{}")
    with pytest.raises(SpecError, match=r"saved/state.json: no `_data_files` list"):
        load_case(case_for(tmp_path, "saved"))


def test_without_pyarrow_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rows.parquet").write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(SpecError) as caught:
        load_case(case_for(tmp_path, "rows.parquet"))
    assert "reading it needs pyarrow: pip install 'sounding[parquet]'" in str(caught.value)
    assert ":1: dataset.path:" in str(caught.value)


def test_a_link_and_an_unknown_kind_are_refused(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text('{"n": 1, "question": "a"}\n')
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "rows.jsonl")
    with pytest.raises(SpecError, match="is not a regular file"):
        load_case(case_for(tmp_path, "link.jsonl"))
    (tmp_path / "rows.txt").write_text("n\n")
    with pytest.raises(SpecError, match=r"name it \*.jsonl, \*.ndjson, \*.csv"):
        load_case(case_for(tmp_path, "rows.txt"))


def test_ten_thousand_rows_load_in_seconds(tmp_path: Path) -> None:
    """The figure is in docs/cases.md; the bound here only catches a gross regression."""
    rows = "".join(json.dumps({"n": i, "question": f"q {i}?"}) + "\n" for i in range(10_000))
    (tmp_path / "rows.jsonl").write_text(rows)
    started = time.perf_counter()
    case = load_case(case_for(tmp_path, "rows.jsonl"))
    assert len(case.scenarios) == 10_000
    assert time.perf_counter() - started < 20
