"""A run record from the model calls an agent made (`[capture] llm`), read through the
OpenAI and Anthropic importers.

Every request of a chat holds the conversation so far, so the last call that was answered,
with its answer, is the whole conversation: its tool calls with their arguments, the
results the agent sent back, the final answer. Tokens are summed over every call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sounding.record._anthropic import parse_anthropic
from sounding.record._build import RecordError
from sounding.record._model import RunRecord, Usage
from sounding.record._openai import parse_openai
from sounding.record._prices import Price, cost

SOURCE = "the model calls the agent made"


def parse_llm_calls(
    calls: list[dict[str, Any]], prices: Mapping[str, Price] | None = None
) -> RunRecord | None:
    """The record the calls make; None when no call was answered. Each call is
    `{"api": "openai" | "anthropic", "request": {...}, "response": {...}, "status": 200}`.
    With `prices`, the cost is each call's tokens at its model's price (None when one of
    the models has none)."""
    answered = [c for c in calls if c.get("status") == 200 and _conversation(c) is not None]
    if not answered:
        return None
    record = _conversation(answered[-1])
    assert record is not None
    usage = llm_usage(calls, prices).model_copy(update={"model": record.model})
    metadata = {**record.metadata, "llm_calls": len(calls)}
    return record.model_copy(update={"usage": usage, "metadata": metadata})


def llm_usage(calls: list[dict[str, Any]], prices: Mapping[str, Price] | None = None) -> Usage:
    """The tokens of every answered call, and their cost at each call's model's price (None
    when one of the models has none)."""
    answered = [c for c in calls if c.get("status") == 200 and isinstance(c.get("response"), dict)]
    tokens = [_tokens(call) for call in answered]
    costs = [
        cost(_model(call), *counts, prices or {})
        for call, counts in zip(answered, tokens, strict=True)
    ]
    return Usage(
        input_tokens=sum(t[0] for t in tokens),
        output_tokens=sum(t[1] for t in tokens),
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
    )


def _conversation(call: dict[str, Any]) -> RunRecord | None:
    request, response = call.get("request"), call.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        return None
    messages = request.get("messages")
    if not isinstance(messages, list):
        return None  # not a chat (an embedding, a model list): no conversation in it
    model = _model(call)
    try:
        if call.get("api") == "anthropic":
            said = {"role": "assistant", "content": response.get("content") or []}
            shape = {"messages": [*messages, said], "model": model}
            if request.get("system") is not None:
                shape["system"] = request["system"]
            return parse_anthropic(shape, SOURCE)
        choices = response.get("choices") or [{}]
        said = (choices[0] or {}).get("message") or {"role": "assistant", "content": None}
        return parse_openai({"messages": [*messages, said], "model": model}, SOURCE)
    except RecordError:
        return None  # a request the importers cannot read is no conversation


def _model(call: dict[str, Any]) -> str | None:
    """The model that answered: as the answer names it, else as the request asked."""
    request = call.get("request")
    asked = request.get("model") if isinstance(request, dict) else None
    named = call["response"].get("model") or asked
    return named if isinstance(named, str) else None


def _tokens(call: dict[str, Any]) -> tuple[int, int]:
    usage = call["response"].get("usage") or {}
    given = usage.get("input_tokens", usage.get("prompt_tokens", 0))
    made = usage.get("output_tokens", usage.get("completion_tokens", 0))
    return (given if isinstance(given, int) else 0), (made if isinstance(made, int) else 0)
