"""`report_command`: every format written where asked, verdicts printed, usage errors 2."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from sounding.report import report_command


def test_every_format_is_written_where_asked(
    mixed_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports" / "nested"
    code = report_command(
        mixed_run,
        junit=out / "junit.xml",
        json_=out / "report.json",
        markdown=out / "comment.md",
        html=out / "report.html",
    )
    assert code == 0
    assert ET.parse(out / "junit.xml").getroot().get("tests") == "5"
    assert json.loads((out / "report.json").read_text())["schema"] == "sounding.report/1"
    assert (out / "comment.md").read_text().startswith("### sounding run")
    assert (out / "report.html").read_text().startswith("<!doctype html>")
    printed = capsys.readouterr().out
    assert f"wrote JUnit XML: {out / 'junit.xml'}" in printed
    assert f"wrote HTML: {out / 'report.html'}" in printed


def test_with_no_format_the_verdicts_are_printed(
    mixed_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert report_command(mixed_run) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("PASS  basic/echoes  3/3")
    assert lines[4].startswith("ERROR basic/broken  0/0 (3 errors: 3 agent)")
    assert lines[-1] == f"errored: 1 pass, 2 flaky, 1 fail, 1 error — run {mixed_run.name}"


def test_a_bad_folder_or_output_is_a_usage_error(
    mixed_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert report_command(tmp_path / "missing", junit=tmp_path / "j.xml") == 2
    assert "no such folder" in capsys.readouterr().err
    assert not (tmp_path / "j.xml").exists()
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert report_command(mixed_run, html=blocker / "report.html") == 2
    assert f"{blocker / 'report.html'}: cannot write the report" in capsys.readouterr().err


def test_the_command_line_report_writes_and_refuses(
    mixed_run: Path, tmp_path: Path, sounding: Any
) -> None:
    target = tmp_path / "comment.md"
    done = sounding("report", str(mixed_run), "--markdown", str(target))
    assert done.returncode == 0, done.stderr
    assert "| FLAKY | basic/flaky-any | 2/3 |" in target.read_text()
    refused = sounding("report", str(mixed_run.parent))
    assert refused.returncode == 2
    assert f"holds runs, not one run ({mixed_run.name})" in refused.stderr


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (["--markdown", "--json"], "--markdown"),
        (["--html", "--junit", "junit.xml"], "--html"),
        (["--json", "--markdown", "comment.md"], "--json"),
    ],
)
def test_an_option_given_where_a_file_belongs_is_refused(
    mixed_run: Path, tmp_path: Path, given: list[str], named: str, sounding: Any
) -> None:
    done = sounding("report", str(mixed_run), *given, cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    message = " ".join(done.stderr.split())
    assert f"{named} takes a file name, not the option '{given[1]}'" in message
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # no file named after an option, nor any other
