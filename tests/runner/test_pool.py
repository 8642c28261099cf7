"""The trial pool's own contract: a pool that cannot take more trials stops, never hangs."""

from __future__ import annotations

from typing import Any

import pytest

from sounding.runner._pool import TrialPool
from sounding.runner._trial import TrialPlan


def test_a_source_of_trials_that_fails_stops_the_pool_with_its_error() -> None:
    def broken() -> list[TrialPlan]:
        raise OSError("the pipe of batches is gone")

    settings: Any = None  # no trial runs: the source fails before the first
    pool = TrialPool([], settings, 2, more=broken)
    with pytest.raises(OSError, match="pipe of batches"):
        list(pool.outcomes())


def test_a_dry_source_ends_the_pool_with_nothing_run() -> None:
    settings: Any = None
    pool = TrialPool([], settings, 3, more=list)
    assert list(pool.outcomes()) == []
