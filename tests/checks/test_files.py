"""file_exists, file_absent, file_content: real files in a temporary workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from sounding.checks import CheckContext, CheckResult, Evidence, Status, registry
from sounding.record import RunRecord


def check(name: str, raw: Any, workspace: Path | None) -> CheckResult:
    kind = registry.get(name)
    evidence = Evidence(record=RunRecord(), workspace=workspace)
    return kind.run(kind.parse(raw), CheckContext(evidence=evidence))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "src").mkdir(parents=True)
    (root / "output.json").write_text('{"status": "success"}\n')
    (root / "draft.txt").write_text("Dear customer,\nSubject: Renewal of your plan\n")
    (root / "src" / "main.ts").write_text("export const x = 1;\nconsole.log(x);\n")
    (tmp_path / "outside.txt").write_text("secret")
    return root


# ---- file_exists -----------------------------------------------------------------------


def test_file_exists_passes_for_a_file_and_a_folder(workspace: Path) -> None:
    assert check("file_exists", {"path": "output.json"}, workspace).status is Status.PASSED
    assert check("file_exists", "src", workspace).status is Status.PASSED


def test_file_exists_fails_for_a_missing_file(workspace: Path) -> None:
    result = check("file_exists", "report.md", workspace)
    assert result.status is Status.FAILED
    assert result.reason == "file 'report.md' does not exist"


def test_file_exists_is_unjudged_without_a_workspace() -> None:
    result = check("file_exists", "output.json", None)
    assert result.status is Status.UNJUDGED
    assert "workspace was not kept" in result.reason


def test_a_symlink_leading_outside_the_workspace_is_an_error(workspace: Path) -> None:
    (workspace / "link.txt").symlink_to(workspace.parent / "outside.txt")
    for name in ("file_exists", "file_absent"):
        result = check(name, "link.txt", workspace)
        assert result.status is Status.ERROR
        assert "leads outside the workspace through a symlink" in result.reason
    result = check("file_content", {"path": "link.txt", "contains": "secret"}, workspace)
    assert result.status is Status.ERROR


def test_a_folder_symlink_leading_outside_is_an_error(workspace: Path) -> None:
    (workspace / "up").symlink_to(workspace.parent)
    result = check("file_exists", "up/outside.txt", workspace)
    assert result.status is Status.ERROR


def test_the_check_refuses_escaping_paths_even_when_params_skipped_validation(
    workspace: Path,
) -> None:
    kind = registry.get("file_exists")
    context = CheckContext(evidence=Evidence(record=RunRecord(), workspace=workspace))
    for path, words in (("/etc/hostname", "is absolute"), ("../outside.txt", "climbs out")):
        result = kind.run(kind.params.model_construct(path=path), context)
        assert result.status is Status.ERROR
        assert words in result.reason


@pytest.mark.parametrize(
    "raw",
    [
        {"path": "/etc/passwd"},
        {"path": "../outside.txt"},
        {"path": "a/../../outside.txt"},
        {"path": ""},
        {"path": "x", "mode": "strict"},
        {},
    ],
)
def test_file_exists_refuses_bad_params(raw: Any) -> None:
    with pytest.raises(ValidationError):
        registry.get("file_exists").parse(raw)


def test_a_path_that_climbs_and_comes_back_is_accepted(workspace: Path) -> None:
    assert check("file_exists", "src/../output.json", workspace).status is Status.PASSED


# ---- file_absent -----------------------------------------------------------------------


def test_file_absent_passes_when_nothing_is_there(workspace: Path) -> None:
    result = check("file_absent", ".tmp/cache", workspace)
    assert result.status is Status.PASSED


def test_file_absent_fails_when_the_file_remains(workspace: Path) -> None:
    result = check("file_absent", {"path": "output.json"}, workspace)
    assert result.status is Status.FAILED
    assert result.reason == "file 'output.json' still exists"


def test_file_absent_fails_for_a_dangling_symlink_inside(workspace: Path) -> None:
    (workspace / "dangling").symlink_to(workspace / "gone.txt")
    assert check("file_absent", "dangling", workspace).status is Status.FAILED


def test_file_absent_is_unjudged_without_a_workspace() -> None:
    assert check("file_absent", "x", None).status is Status.UNJUDGED


def test_file_absent_refuses_bad_params() -> None:
    with pytest.raises(ValidationError):
        registry.get("file_absent").parse({"path": "/tmp/x"})


# ---- file_content ----------------------------------------------------------------------


def test_file_content_passes_when_every_condition_holds(workspace: Path) -> None:
    raw = {
        "path": "draft.txt",
        "contains": ["Dear customer", "Renewal"],
        "not_contains": "TODO",
        "pattern": r"^Subject: Renewal\b",
    }
    result = check("file_content", raw, workspace)
    assert result.status is Status.PASSED, result.reason


def test_file_content_pattern_anchors_at_each_line(workspace: Path) -> None:
    # `^Subject` is on the second line: it matches only with multi-line anchors
    assert check("file_content", {"path": "draft.txt", "pattern": "^Subject"}, workspace).score == 1


def test_file_content_fails_on_a_forbidden_text(workspace: Path) -> None:
    result = check(
        "file_content", {"path": "src/main.ts", "not_contains": "console.log"}, workspace
    )
    assert result.status is Status.FAILED
    assert result.reason == "file 'src/main.ts' contains 'console.log'"


def test_file_content_reports_every_condition_that_fails(workspace: Path) -> None:
    raw = {
        "path": "output.json",
        "contains": ["success", "total"],
        "pattern": "^done$",
    }
    result = check("file_content", raw, workspace)
    assert result.status is Status.FAILED
    assert result.reason == "file 'output.json' does not contain 'total'"
    assert result.details["problems"] == [
        "does not contain 'total'",
        "has no match for pattern '^done$'",
    ]


def test_file_content_fails_for_a_missing_file_or_a_folder(workspace: Path) -> None:
    missing = check("file_content", {"path": "nope.txt", "contains": "x"}, workspace)
    assert (missing.status, missing.reason) == (Status.FAILED, "file 'nope.txt' does not exist")
    folder = check("file_content", {"path": "src", "contains": "x"}, workspace)
    assert folder.status is Status.FAILED
    assert "is a folder" in folder.reason


def test_file_content_reads_binary_files_without_crashing(workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\xff\xfe header OK \x00")
    result = check("file_content", {"path": "blob.bin", "contains": "header OK"}, workspace)
    assert result.status is Status.PASSED


def test_file_content_is_unjudged_without_a_workspace() -> None:
    result = check("file_content", {"path": "a", "contains": "b"}, None)
    assert result.status is Status.UNJUDGED


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({"path": "a.txt"}, "at least one of"),
        ({"path": "a.txt", "pattern": "(unclosed"}, "not a valid regular expression"),
        ({"path": "a.txt", "contains": ""}, "at least 1 character"),
        ({"path": "/abs.txt", "contains": "x"}, "is absolute"),
        ({"path": "a.txt", "contain": "x"}, "Extra inputs are not permitted"),
    ],
)
def test_file_content_refuses_bad_params(raw: Any, words: str) -> None:
    with pytest.raises(ValidationError, match=words.replace("(", r"\(")):
        registry.get("file_content").parse(raw)


def test_file_content_never_waits_on_a_fifo_nor_loads_a_huge_file(workspace: Path) -> None:
    import os
    import time

    os.mkfifo(workspace / "pipe")
    with open(workspace / "huge.log", "wb") as huge:
        huge.write(b"needle at the start\n")
        huge.truncate(8 << 30)  # 8 GB, sparse
    started = time.monotonic()
    fifo = check("file_content", {"path": "pipe", "contains": "x"}, workspace)
    big = check("file_content", {"path": "huge.log", "contains": "needle"}, workspace)
    assert time.monotonic() - started < 5
    assert fifo.status is Status.FAILED and "is not a regular file" in fifo.reason
    assert big.status is Status.PASSED  # read as far as a check reads (16 MiB)
