"""Models built at first use: they validate as if built at once, even from many threads."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pydantic import ConfigDict, Field, ValidationError, create_model

from sounding._deferred import DeferredModel


class _Strict(DeferredModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _fresh_model(name: str) -> type[_Strict]:
    fields: dict[str, Any] = {f"f{i}": (int, Field(default=0, ge=0)) for i in range(40)}
    model: type[_Strict] = create_model(name, __base__=_Strict, **fields)
    return model


def test_a_model_is_built_at_first_use_and_keeps_its_config() -> None:
    model = _fresh_model("FirstUse")
    assert not model.__pydantic_complete__
    assert model.model_validate({"f1": 1}).model_dump()["f1"] == 1
    assert model.__pydantic_complete__
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        model.model_validate({"f1": 1, "typo": 2})


def test_a_name_defined_after_the_model_resolves_at_first_use() -> None:
    class Holder(DeferredModel):
        item: Later  # defined below, in this function: found in the caller's frame

    class Later(DeferredModel):
        x: int

    assert Holder(item=Later(x=1)).item.x == 1


def _first_validations(model: type[_Strict], threads: int) -> list[str]:
    """What goes wrong when `threads` validate the model for the first time at once."""
    start = threading.Barrier(threads)

    def validate() -> str:
        start.wait()
        try:
            values = model.model_validate({"f1": 1, "f2": 2}).model_dump()
            assert (values["f1"], values["f2"], len(values)) == (1, 2, 40), values
        except Exception as exc:  # a half-built model shows as any error at all
            return f"{type(exc).__name__}: {exc}"
        return ""

    with ThreadPoolExecutor(threads) as pool:
        return [problem for problem in pool.map(lambda _: validate(), range(threads)) if problem]


def test_threads_validating_a_model_for_the_first_time_all_see_it_whole() -> None:
    """Pydantic's own rebuild races (its issue 13419); without the lock this fails."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show at once
    try:
        problems = [p for i in range(60) for p in _first_validations(_fresh_model(f"M{i}"), 8)]
    finally:
        sys.setswitchinterval(previous)
    assert problems == []
