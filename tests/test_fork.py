"""`forked_parts`: work shared over forked processes, every part's result kept."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest

from sounding._fork import cores, forked_parts

pytestmark = pytest.mark.skipif(cores() < 2, reason="forked parts need two cores or more")


def test_each_part_runs_in_a_process_of_its_own_and_the_results_keep_their_order() -> None:
    def work(part: Sequence[int]) -> tuple[int, list[int]]:
        return os.getpid(), [n * n for n in part]

    results = forked_parts(work, list(range(101)))
    assert [n for _, squares in results for n in squares] == [n * n for n in range(101)]
    pids = [pid for pid, _ in results]
    assert len(set(pids)) == len(results) == min(cores(), 101)
    assert pids[0] == os.getpid()  # the first part here, while the children do the others


def test_a_part_whose_child_died_is_done_again_here() -> None:
    parent = os.getpid()

    def work(part: Sequence[int]) -> list[int]:
        if os.getpid() != parent and 9 in part:
            os._exit(3)  # the child of the last part dies without a word
        return list(part)

    assert [n for part in forked_parts(work, list(range(10))) for n in part] == list(range(10))


def test_an_error_of_the_work_itself_is_raised_here() -> None:
    def work(part: Sequence[int]) -> int:
        raise ValueError(f"cannot do {len(part)} items")

    with pytest.raises(ValueError, match="cannot do"):
        forked_parts(work, list(range(10)))
