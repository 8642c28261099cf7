"""What a trial's tokens cost: the providers' list prices that ship with sounding, and the
suite's own (`[prices]`), which replace or add to them.

A model with no price has no cost (`None`), never a guess. A model name is matched whole,
or as a price's name followed by a release stamp only (`-2024-07-18`, `-20250514`,
`-latest`): `gpt-4o-mini-2024-07-18` is priced as `gpt-4o-mini`, while `gpt-4o-audio-preview`,
another model with another price, is not priced as `gpt-4o`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from sounding.record._model import ModelUsage, RunRecord, Usage, add_usage

Price = tuple[float, float]
"""US dollars per million input tokens, and per million output tokens."""

LIST_PRICES_AS_OF = "2025-06"
LIST_PRICES: dict[str, Price] = {
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "o3": (2.0, 8.0),
    "o3-mini": (1.1, 4.4),
    "o4-mini": (1.1, 4.4),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-opus-4": (15.0, 75.0),
}
"""The providers' published list prices (standard tier, uncached input) on
`LIST_PRICES_AS_OF`. They change: `[prices]` in sounding.toml replaces any of them."""

_RELEASE = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)")


def price_of(model: str | None, prices: Mapping[str, Price]) -> Price | None:
    """The price of `model`: its own, or that of the name it is a release of."""
    if not model:
        return None
    if model in prices:
        return prices[model]
    for name, price in prices.items():
        if model.startswith(name) and _RELEASE.fullmatch(model[len(name) :]):
            return price
    return None


def cost(
    model: str | None, input_tokens: int, output_tokens: int, prices: Mapping[str, Price]
) -> float | None:
    """What the tokens cost at the model's price; None when it has none."""
    price = price_of(model, prices)
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


def priced(record: RunRecord, prices: Mapping[str, Price]) -> RunRecord:
    """The record with its tokens per model, and the cost of those no cost was reported
    for at their model's price; the whole's cost, when it had none, once every model's is
    known."""
    usage = record.usage
    if not usage.model and record.model and not usage.by_model:
        usage = usage.model_copy(update={"model": record.model})
    by_model = {
        model: spent
        if spent.cost_usd is not None
        else spent.model_copy(
            update={"cost_usd": cost(model, spent.input_tokens, spent.output_tokens, prices)}
        )
        for model, spent in usage.per_model().items()
    }
    found = usage.cost_usd
    known = [spent.cost_usd for spent in by_model.values()]
    if found is None and by_model and None not in known:
        counted = sum(s.input_tokens + s.output_tokens for s in by_model.values())
        if counted == usage.input_tokens + usage.output_tokens:  # no call left unnamed
            found = sum(c for c in known if c is not None)
    update = {"by_model": by_model, "cost_usd": found, "model": usage.model}
    return record.model_copy(update={"usage": usage.model_copy(update=update)})


def total(spent: Iterable[Usage], prices: Mapping[str, Price]) -> Usage:
    """The tokens of several calls, and their cost with each at its own model's price (None
    when one of the models has none), in all and per model."""
    calls = list(spent)
    costs = [cost(u.model, u.input_tokens, u.output_tokens, prices) for u in calls]
    by_model: dict[str, ModelUsage] = {}
    for call, paid in zip(calls, costs, strict=True):
        add_usage(by_model, call.model, call.input_tokens, call.output_tokens, paid)
    return Usage(
        input_tokens=sum(u.input_tokens for u in calls),
        output_tokens=sum(u.output_tokens for u in calls),
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
        by_model=by_model,
    )
