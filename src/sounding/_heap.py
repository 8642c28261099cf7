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
def long_lived() -> Iterator[Callable[[], None]]:
    """Yields `settle()`: call it once something long-lived (cases, a plan) has been made."""
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()
