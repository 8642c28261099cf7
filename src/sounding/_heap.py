"""Keep the garbage collector off objects that live as long as the run.

A suite of thousands of scenarios loads hundreds of thousands of objects that stay until
the end. Each full collection would walk all of them again, and a run that allocates
steadily triggers one every few thousand trials. `gc.freeze` moves what exists now out of
the collector's sight (a forked worker's collector then never writes to those pages
either), and `gc.unfreeze` hands it back when the work is done.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cycle collector while many objects that make no cycles are made (a loaded
    case file): collections triggered by their count took a third of the time of a large
    load. Objects made while it is paused are all young when it resumes, so the first
    collection after that walks every one of them; to spare that, call `settle()` of
    `long_lived` on what is kept before the pause ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def long_lived() -> Iterator[Callable[[], None]]:
    """Yields `settle()`: call it once something long-lived (cases, a plan) has been made."""
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()
