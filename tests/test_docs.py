"""The examples of the docs are what sounding reads: every YAML block parses, every import
of a sounding name works."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_IMPORT = re.compile(r"^from (sounding[\w.]*|pytest_sounding) import ([\w, ]+)$", re.MULTILINE)


def _blocks(kind: str) -> list[tuple[str, str]]:
    """(page:line, text) of every fenced block of `kind` in the docs."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in _BLOCK.finditer(text):
            if block.group(1) == kind:
                line = text.count("\n", 0, block.start()) + 1
                found.append((f"{page.relative_to(ROOT)}:{line}", block.group(2)))
    return found


@pytest.mark.parametrize(("where", "text"), _blocks("yaml"), ids=lambda v: v if ".md:" in v else "")
def test_every_yaml_example_parses(where: str, text: str) -> None:
    try:
        yaml.safe_load(text)
    except yaml.YAMLError as exc:
        pytest.fail(f"{where}: the YAML example does not parse: {exc}")


IMPORTS = [
    (where, module, name.strip())
    for where, text in _blocks("python")
    for module, names in _IMPORT.findall(text)
    for name in names.split(",")
]


@pytest.mark.parametrize(("where", "module", "name"), IMPORTS, ids=lambda v: str(v))
def test_every_import_of_a_python_example_works(where: str, module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name), (
        f"{where}: `from {module} import {name}` fails: {module} has no {name}"
    )
