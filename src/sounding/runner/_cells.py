"""Cells: the configurations of the agent under test, a grid of axes plus named variants.

The first value of every axis is the baseline and declares no delta; every other value must
declare one, so a typo in a value name fails at load instead of silently running the baseline.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sounding._words import did_you_mean

DEFAULT_CELL = "default"


class Delta(BaseModel):
    """What a cell changes about the agent; anything else is refused at load."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    prompt: str | None = None
    system: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)


class CellsConfig(BaseModel):
    """`[cells]` in sounding.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    axes: dict[str, list[str]] = Field(default_factory=dict)
    values: dict[str, dict[str, Delta]] = Field(default_factory=dict)
    variants: dict[str, Delta] = Field(default_factory=dict)
    reference: str | None = None


class CellError(ValueError):
    """A cell definition that cannot be right; names the key and the closest valid name."""


@dataclass(frozen=True)
class Cell:
    name: str
    delta: Delta = field(default_factory=Delta)

    def env(self) -> dict[str, str]:
        extra = dict(self.delta.env)
        if self.delta.model is not None:
            extra["SOUNDING_MODEL"] = self.delta.model
        if self.delta.system is not None:
            extra["SOUNDING_SYSTEM_PROMPT"] = self.delta.system
        return extra

    def turns(self, turns: list[str]) -> list[str]:
        """The scenario's turns as this cell sends them (a `prompt` delta leads the first)."""
        if self.delta.prompt is None or not turns:
            return turns
        return [f"{self.delta.prompt}\n\n{turns[0]}", *turns[1:]]


def build_cells(config: CellsConfig) -> list[Cell]:
    """Every cell of the grid (baseline first), then the variants. No cells: one default cell."""
    _check_values(config)
    cells = [_grid_cell(config, combo) for combo in itertools.product(*config.axes.values())]
    if not config.axes:
        cells = [Cell(DEFAULT_CELL)] if not config.variants else []
    cells += [Cell(name, delta) for name, delta in config.variants.items()]
    names = [c.name for c in cells]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise CellError(f"cells: the name {', '.join(duplicates)} is used twice")
    if config.reference is not None and config.reference not in names:
        raise CellError(
            f"cells.reference: no cell '{config.reference}'{_closest(config.reference, names)}"
        )
    return cells


def _grid_cell(config: CellsConfig, combo: tuple[str, ...]) -> Cell:
    merged: dict[str, Any] = {"args": [], "env": {}}
    for axis, value in zip(config.axes, combo, strict=True):
        delta = config.values.get(axis, {}).get(value)
        if delta is None:
            continue
        for key in ("model", "prompt", "system"):
            mine = getattr(delta, key)
            if mine is not None and merged.setdefault(key, mine) != mine:
                raise CellError(f"cells: axes disagree on `{key}` for cell {' / '.join(combo)}")
        merged["args"] += delta.args
        merged["env"] |= delta.env
    return Cell(" / ".join(combo), Delta.model_validate(merged))


def _check_values(config: CellsConfig) -> None:
    for axis, values in config.axes.items():
        if not values:
            raise CellError(
                f"cells.axes.{axis}: give at least one value (the first is the baseline)"
            )
        declared = config.values.get(axis, {})
        if values[0] in declared:
            raise CellError(
                f"cells.values.{axis}.{values[0]}: the first value of an axis is the baseline "
                "and has no delta"
            )
        for value in values[1:]:
            if value not in declared:
                raise CellError(
                    f"cells.values.{axis}.{value}: missing: every value but the first "
                    "must declare its delta"
                )
        for value in declared:
            if value not in values:
                raise CellError(
                    f"cells.values.{axis}.{value}: not a value of axis '{axis}'"
                    f"{_closest(value, values)}"
                )
    for axis in config.values:
        if axis not in config.axes:
            raise CellError(f"cells.values.{axis}: no such axis{_closest(axis, list(config.axes))}")


def _closest(name: str, known: list[str]) -> str:
    return did_you_mean(name, known) or f" (known: {', '.join(known)})"
