"""Param field types the check families share, each validated when the suite loads."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field


def _as_list(value: Any) -> Any:
    """One string stands for a list of one: `contains: x` is `contains: [x]`."""
    return [value] if isinstance(value, str) else value


def _compiles(value: str) -> str:
    try:
        re.compile(value, re.MULTILINE)
    except re.error as exc:
        raise ValueError(
            f"'{value}' is not a valid regular expression ({exc}); "
            "escape special characters such as ( [ . * with a backslash"
        ) from None
    return value


Name = Annotated[str, Field(min_length=1)]
"""A non-empty string: a tool, an argument, a text to look for."""

Names = Annotated[list[Name], BeforeValidator(_as_list), Field(min_length=1)]
"""One name or a non-empty list of them."""

Texts = Annotated[list[Name], BeforeValidator(_as_list)]
"""One text or a list of them, possibly empty (an optional condition)."""

Regex = Annotated[str, AfterValidator(_compiles)]
"""A regular expression that compiles; checks search it with `re.MULTILINE`."""
