"""Prices: a model's tokens cost what its price says, and a model with none costs None."""

from __future__ import annotations

import json

import pytest

from sounding.record import LIST_PRICES, RunRecord, Usage, parse_record, priced, total
from sounding.record._prices import cost, price_of

PRICES = {"gpt-4o": (2.5, 10.0), "gpt-4o-mini": (0.15, 0.6)}


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("gpt-4o", (2.5, 10.0)),
        ("gpt-4o-2024-08-06", (2.5, 10.0)),
        ("gpt-4o-mini-2024-07-18", (0.15, 0.6)),  # a release of gpt-4o-mini
        ("gpt-4o-latest", (2.5, 10.0)),
        ("gpt-4o-audio-preview", None),  # another model, with another price: no guess
        ("claude-sonnet-4", None),
        (None, None),
    ],
)
def test_a_model_is_priced_by_its_name_or_the_longest_it_starts_with(
    model: str | None, price: tuple[float, float] | None
) -> None:
    assert price_of(model, PRICES) == price


def test_tokens_cost_their_price_per_million() -> None:
    assert cost("gpt-4o", 1_000_000, 100_000, PRICES) == pytest.approx(3.5)
    assert cost("unknown", 10, 10, PRICES) is None


def test_a_cost_the_agent_reported_is_kept_and_an_unpriced_model_stays_unknown() -> None:
    reported = RunRecord(usage=Usage(input_tokens=10, cost_usd=0.5, model="gpt-4o"))
    assert priced(reported, PRICES).usage.cost_usd == 0.5
    unpriced = RunRecord(usage=Usage(input_tokens=10, model="claude-sonnet-4"))
    assert priced(unpriced, PRICES).usage.cost_usd is None
    counted = RunRecord(usage=Usage(input_tokens=2_000_000, model="gpt-4o-mini"))
    assert priced(counted, PRICES).usage.cost_usd == pytest.approx(0.3)


def test_tokens_and_cost_are_kept_per_model() -> None:
    trace = "\n".join(
        json.dumps(event)
        for event in [
            {"type": "user", "text": "refund order 7"},
            {"type": "usage", "input_tokens": 1_000_000, "output_tokens": 0, "model": "gpt-4o"},
            {
                "type": "usage",
                "input_tokens": 1_000_000,
                "output_tokens": 0,
                "model": "gpt-4o-mini",
            },
            {"type": "usage", "input_tokens": 1_000_000, "output_tokens": 0, "model": "gpt-4o"},
            {"type": "final", "text": "done"},
        ]
    )
    usage = priced(parse_record(trace, "jsonl"), PRICES).usage
    per_model = {m: (u.input_tokens, u.cost_usd) for m, u in usage.by_model.items()}
    assert per_model == {"gpt-4o": (2_000_000, 5.0), "gpt-4o-mini": (1_000_000, 0.15)}
    assert usage.cost_usd == pytest.approx(5.15) and usage.input_tokens == 3_000_000
    one_unpriced = total(
        [Usage(input_tokens=10, model="gpt-4o"), Usage(input_tokens=10, model="claude-x")],
        PRICES,
    )
    assert one_unpriced.cost_usd is None  # never a guess for the whole
    assert one_unpriced.by_model["gpt-4o"].cost_usd == pytest.approx(2.5e-5)
    assert one_unpriced.by_model["claude-x"].cost_usd is None


def test_a_record_of_one_model_is_that_models_usage() -> None:
    usage = priced(RunRecord(usage=Usage(input_tokens=1_000_000), model="gpt-4o"), PRICES).usage
    assert usage.model == "gpt-4o" and usage.cost_usd == pytest.approx(2.5)
    assert usage.by_model["gpt-4o"].input_tokens == 1_000_000


def test_the_list_prices_price_the_providers_releases() -> None:
    assert price_of("claude-sonnet-4-20250514", LIST_PRICES) == (3.0, 15.0)
    assert price_of("gpt-4.1-mini-2025-04-14", LIST_PRICES) == (0.4, 1.6)
    assert price_of("claude-sonnet-4-5-20250929", LIST_PRICES) is None  # not in the table
    assert price_of("o3-pro", LIST_PRICES) is None
