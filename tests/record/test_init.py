"""The public surface of `sounding.record` cannot drift from its `__all__`."""

from __future__ import annotations

import types

import sounding.record as record


def test_all_is_sorted_and_names_exactly_the_public_names() -> None:
    public = {
        name
        for name, value in vars(record).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert record.__all__ == sorted(record.__all__, key=lambda n: (not n.isupper(), n))
    assert set(record.__all__) == public


def test_the_ways_in_are_public() -> None:
    assert {"Trace", "load_record", "parse_record", "detect_format", "RecordError"} <= set(
        record.__all__
    )
