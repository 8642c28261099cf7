"""What a trial's tokens cost, from a table of prices the suite gives (`[prices]`).

A model with no price has no cost (`None`), never a guess. A model name is matched whole,
else by the longest price name it starts with: `gpt-4o-mini-2024-07-18` is priced as
`gpt-4o-mini`, not as `gpt-4o`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sounding.record._model import RunRecord, Usage

Price = tuple[float, float]
"""US dollars per million input tokens, and per million output tokens."""


def price_of(model: str | None, prices: Mapping[str, Price]) -> Price | None:
    if not model:
        return None
    if model in prices:
        return prices[model]
    named = [name for name in prices if model.startswith(name)]
    return prices[max(named, key=len)] if named else None


def cost(
    model: str | None, input_tokens: int, output_tokens: int, prices: Mapping[str, Price]
) -> float | None:
    """What the tokens cost at the model's price; None when it has none."""
    price = price_of(model, prices)
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


def priced(record: RunRecord, prices: Mapping[str, Price]) -> RunRecord:
    """The record with the cost of its tokens, when it holds none and its model is priced."""
    usage = record.usage
    if usage.cost_usd is not None or not prices:
        return record
    found = cost(usage.model or record.model, usage.input_tokens, usage.output_tokens, prices)
    if found is None:
        return record
    return record.model_copy(update={"usage": usage.model_copy(update={"cost_usd": found})})


def total(spent: Iterable[Usage], prices: Mapping[str, Price]) -> Usage:
    """The tokens of several calls, and their cost with each at its own model's price (None
    when one of the models has none)."""
    calls = list(spent)
    costs = [cost(u.model, u.input_tokens, u.output_tokens, prices) for u in calls]
    return Usage(
        input_tokens=sum(u.input_tokens for u in calls),
        output_tokens=sum(u.output_tokens for u in calls),
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
    )
