"""The public surface of `sounding.spec` cannot drift unnoticed."""

from __future__ import annotations

import sounding.spec as spec


def test_all_is_sorted_and_names_exactly_the_public_objects() -> None:
    assert spec.__all__ == sorted(spec.__all__)
    public = {name for name in vars(spec) if not name.startswith("_")}
    assert public == set(spec.__all__)
