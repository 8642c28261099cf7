"""A trial's folder as it travels back from a Ray worker with `[executor] artifacts =
"driver"`: packed without links or devices, laid here whole, and an archive a hostile agent
could have shaped (a member out of the trial's folder, absolute, a link) refused with
nothing written outside it."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from sounding.runner._artifacts import ArtifactError, pack, unpack


def _archive(*members: tuple[str, bytes | str | None]) -> bytes:
    """A tar of files (bytes), links (str: where it points) and folders (None)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, what in members:
            member = tarfile.TarInfo(name)
            if what is None:
                member.type = tarfile.DIRTYPE
                tar.addfile(member)
            elif isinstance(what, str):
                member.type, member.linkname = tarfile.SYMTYPE, what
                tar.addfile(member)
            else:
                member.size = len(what)
                tar.addfile(member, io.BytesIO(what))
    return buffer.getvalue()


def test_a_folder_travels_whole_without_its_links(tmp_path: Path) -> None:
    made = tmp_path / "worker"
    (made / "workspace/notes").mkdir(parents=True)
    (made / "trial.json").write_text("{}")
    (made / "workspace/notes/a.md").write_text("refunded")
    (made / "workspace/link").symlink_to("/etc/passwd")
    os.mkfifo(made / "workspace/fifo")
    archive = pack(made)
    assert archive is not None
    folder = tmp_path / "run/trials/default/c/s#1"
    unpack(archive, folder)
    found = {str(p.relative_to(folder)) for p in folder.rglob("*")}
    assert found == {"trial.json", "workspace", "workspace/notes", "workspace/notes/a.md"}
    assert (folder / "workspace/notes/a.md").read_text() == "refunded"
    assert os.listdir(folder.parent) == ["s#1"]  # nothing left beside it


def test_a_folder_over_the_limit_does_not_travel(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 2048)
    assert pack(tmp_path, limit=1024) is None
    with pytest.raises(ArtifactError, match='artifacts = "driver"'):
        unpack(_archive(("big", b"x" * 2048)), tmp_path / "run/t#1", limit=1024)


@pytest.mark.parametrize(
    ("member", "why"),
    [
        (("../escape", b"out"), "out of the trial's folder"),
        (("workspace/../../escape", b"out"), "out of the trial's folder"),
        ((str(Path("/tmp").resolve() / "sounding-escape"), b"out"), "an absolute path"),
        (("workspace/link", "/etc/passwd"), "a link or a special file"),
    ],
)
def test_a_hostile_archive_is_refused_and_writes_nothing(
    tmp_path: Path, member: tuple[str, bytes | str | None], why: str
) -> None:
    run = tmp_path / "run"
    folder = run / "trials/default/c/s#1"
    archive = _archive(("trial.json", b"{}"), ("workspace", None), member)
    with pytest.raises(ArtifactError, match=why) as refused:
        unpack(archive, folder)
    assert str(folder) in str(refused.value)
    assert not folder.exists()
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []  # nor anywhere else
    assert not Path("/tmp/sounding-escape").exists()
