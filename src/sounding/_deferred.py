"""The base of sounding's models: validators built at first use, once, even across threads.

A pydantic model normally builds its validator and serializer when its class is created,
so importing sounding would pay for every model of every check family, service and report.
With `defer_build` they are built when first needed; a model a command never touches costs
almost nothing. Pydantic's rebuild is not thread-safe (pydantic issue 13419): trials that
validate a model for the first time at once could see a half-built model, so the rebuild
here takes a lock.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from pydantic._internal._namespace_utils import MappingNamespace

_BUILDING = threading.RLock()


class DeferredModel(BaseModel):
    """A model whose validator and serializer are built when first used."""

    model_config = ConfigDict(defer_build=True)

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: MappingNamespace | None = None,
    ) -> bool | None:
        """Pydantic's rebuild, one thread at a time; a model built meanwhile is left alone."""
        depth = _parent_namespace_depth + 1 if _parent_namespace_depth > 0 else 0  # this frame
        with _BUILDING:
            return super().model_rebuild(
                force=force,
                raise_errors=raise_errors,
                _parent_namespace_depth=depth,
                _types_namespace=_types_namespace,
            )
