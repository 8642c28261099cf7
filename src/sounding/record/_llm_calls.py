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
from sounding.record._prices import Price, total

SOURCE = "the model calls the agent made"


def parse_llm_calls(
    calls: list[dict[str, Any]], prices: Mapping[str, Price] | None = None
) -> RunRecord | None:
    """The record the calls make; None when no call was answered. Each call is
    `{"api": "openai" | "anthropic", "request": {...}, "response": {...}, "status": 200}`.
    With `prices`, the cost is each call's tokens at its model's price (None when one of
    the models has none)."""
    answered = (c for c in reversed(calls) if c.get("status") == 200)
    record = next((r for c in answered if (r := _conversation(c)) is not None), None)
    if record is None:
        return None
    usage = llm_usage(calls, prices).model_copy(update={"model": record.model})
    metadata = {**record.metadata, "llm_calls": len(calls)}
    return record.model_copy(update={"usage": usage, "metadata": metadata})


def llm_usage(calls: list[dict[str, Any]], prices: Mapping[str, Price] | None = None) -> Usage:
    """The tokens of every answered call, and their cost at each call's model's price (None
    when one of the models has none)."""
    answered = [c for c in calls if c.get("status") == 200 and isinstance(c.get("response"), dict)]
    return total((_spent(call) for call in answered), prices or {})


def _conversation(call: dict[str, Any]) -> RunRecord | None:
    request, response = call.get("request"), call.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        return None
    messages = request.get("messages")
    if call.get("api") == "openai" and "input" in request:  # the Responses API
        messages = _as_chat(request, response)
        response = {"choices": [{"message": messages.pop()}]}
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


def _as_chat(request: dict[str, Any], response: dict[str, Any]) -> list[dict[str, Any]]:
    """A Responses API exchange as chat messages: the instructions, the input items, then
    one assistant message made of the output items (the answer, last)."""
    given = request["input"]
    items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given)
    instructions = request.get("instructions")
    chat: list[dict[str, Any]] = []
    if isinstance(instructions, str):
        chat.append({"role": "system", "content": instructions})
    for item in items:
        _add_item(chat, item)
    chat.append({"role": "assistant", "content": None})
    for item in response.get("output") or []:
        _add_item(chat, item)
    return chat


def _add_item(chat: list[dict[str, Any]], item: Any) -> None:
    """One Responses API item onto the chat: a call or a text of the assistant joins the
    assistant message before it; a tool's output, or a message of another role, is a
    message of its own; other items (reasoning, a web search) are no turn of the chat."""
    kind = item.get("type", "message") if isinstance(item, dict) else None
    if kind == "function_call_output":
        output = {
            "role": "tool",
            "tool_call_id": item.get("call_id"),
            "content": item.get("output"),
        }
        chat.append(output)
        return
    if kind not in ("function_call", "message"):
        return
    role = "assistant" if kind == "function_call" else item.get("role", "assistant")
    if role != "assistant" or not chat or chat[-1]["role"] != "assistant":
        chat.append({"role": role, "content": None})
    last = chat[-1]
    if kind == "function_call":
        function = {"name": item.get("name"), "arguments": item.get("arguments")}
        call = {"id": item.get("call_id"), "type": "function", "function": function}
        last.setdefault("tool_calls", []).append(call)
    else:
        last["content"] = (last["content"] or "") + _item_text(item.get("content"))


def _item_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def _model(call: dict[str, Any]) -> str | None:
    """The model that answered: as the answer names it, else as the request asked."""
    request = call.get("request")
    asked = request.get("model") if isinstance(request, dict) else None
    named = call["response"].get("model") or asked
    return named if isinstance(named, str) else None


def _spent(call: dict[str, Any]) -> Usage:
    usage = call["response"].get("usage") or {}
    given = usage.get("input_tokens", usage.get("prompt_tokens", 0))
    made = usage.get("output_tokens", usage.get("completion_tokens", 0))
    return Usage(
        input_tokens=given if isinstance(given, int) else 0,
        output_tokens=made if isinstance(made, int) else 0,
        model=_model(call),
    )
