"""The loader stands on the checks alone: `spec` imports no layer above `checks`."""

from __future__ import annotations

import ast
from pathlib import Path

import sounding.spec

BELOW = {
    "sounding._files",
    "sounding._problems",
    "sounding._words",
    "sounding.checks",
    "sounding.services",
}


def _imported(path: Path) -> set[str]:
    """Every `sounding` module a file imports, at its top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] == "sounding"}


def test_spec_imports_only_the_checks_and_what_lies_below_them() -> None:
    folder = Path(sounding.spec.__file__).parent
    outside = {
        f"{path.name}: {name}"
        for path in sorted(folder.glob("*.py"))
        for name in _imported(path)
        if not name.startswith("sounding.spec") and name not in BELOW
    }
    assert outside == set()
