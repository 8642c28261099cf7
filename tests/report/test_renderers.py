"""The renderers' registry: each report format registered once, and offered from there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sounding.report import renderers, report_command


def test_each_format_is_one_registered_renderer() -> None:
    titles = {r.name: r.title for r in renderers}
    assert titles == {"html": "HTML", "json": "JSON", "junit": "JUnit XML", "markdown": "Markdown"}


def test_a_second_registration_of_a_renderer_is_refused() -> None:
    again = renderers.renderer("json", title="JSON again", help="")
    with pytest.raises(ValueError, match="renderer 'json' is registered twice"):
        again(lambda results: "")
    assert [r.title for r in renderers if r.name == "json"] == ["JSON"]


def test_the_command_line_offers_an_option_per_renderer(sounding: Any) -> None:
    done = sounding("report", "--help")
    shown = " ".join(done.stdout.split())
    for renderer in renderers:
        assert f"--{renderer.name} FILE {renderer.help}" in shown


def test_report_command_takes_a_keyword_per_renderer(mixed_run: Path, tmp_path: Path) -> None:
    assert report_command(mixed_run, json=tmp_path / "a.json", json_=None) == 0
    assert json.loads((tmp_path / "a.json").read_text())["schema"] == "sounding.report/1"
    with pytest.raises(TypeError, match=r"no renderer named pdf \(renderers: html, json"):
        report_command(mixed_run, pdf=tmp_path / "a.pdf")
