"""Durations: seconds as a number, or a number with a unit."""

from __future__ import annotations

import pytest

from sounding.spec import parse_duration


@pytest.mark.parametrize(
    ("written", "seconds"),
    [
        (300, 300.0),
        (2.5, 2.5),
        ("300", 300.0),
        ("300s", 300.0),
        ("5m", 300.0),
        ("1h", 3600.0),
        ("250ms", 0.25),
        ("1h30m", 5400.0),
        (" 1m 30s ", 90.0),
        ("0.5s", 0.5),
        (0, 0.0),
    ],
)
def test_a_duration_reads_as_seconds(written: object, seconds: float) -> None:
    assert parse_duration(written) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "written", ["5x", "m", "", "-3s", -1, True, None, "1.2.3s", "5 minutes", float("inf"), [5]]
)
def test_anything_else_is_refused_saying_what_is_accepted(written: object) -> None:
    with pytest.raises(ValueError, match=r"is not a duration: write a number of seconds \(300\)"):
        parse_duration(written)
