"""The public surface of sounding.judge cannot drift."""

from __future__ import annotations

import sounding.judge


def test_all_is_sorted_and_names_exactly_the_public_names() -> None:
    exported = sounding.judge.__all__
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), n))
    public = {n for n in vars(sounding.judge) if not n.startswith("_")}
    assert public == set(exported)
