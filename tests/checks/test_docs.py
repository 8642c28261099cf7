"""docs/checks.md lists every check type and forbidden rule the registry holds."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from sounding.checks import CheckType, registry

CHECKS_MD = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def documented(page: str) -> set[str]:
    """The names a page writes as code in its headings and in its tables' rows."""
    lines = [line for line in page.splitlines() if line.startswith(("#", "|"))]
    return set(re.findall(r"`([a-z_]+)`", "\n".join(lines)))


@pytest.mark.parametrize("check_type", list(registry), ids=lambda t: f"{t.role}:{t.name}")
def test_every_registered_check_is_documented(check_type: CheckType[Any]) -> None:
    page = CHECKS_MD.read_text(encoding="utf-8")
    assert check_type.name in documented(page), (
        f"{check_type.role} '{check_type.name}' is registered, but docs/checks.md neither "
        "gives it a heading nor names it in a table: document it there"
    )


def test_a_name_only_in_the_prose_is_not_documented() -> None:
    page = "# Checks\n\nSee also `file_absent`.\n\n| family | types |\n| files | `file_exists` |\n"
    assert documented(page) == {"file_exists"}
