"""The messages GenAI spans carry, in either of their two forms, read into one shape.

The current form is a JSON list of `{role, parts: [{type: text | tool_call |
tool_call_response, ...}]}` in the span attributes `gen_ai.input.messages`,
`gen_ai.output.messages` and `gen_ai.system_instructions`. The older form is one span event
per message (`gen_ai.user.message`, `gen_ai.choice`, ...) whose body (`gen_ai.event.content`,
or the event's own attributes) has an OpenAI-like `content`, `tool_calls` and, for a tool
message, the `id` of the call it answers.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sounding._files import json_kind, loads
from sounding.record._model import content_text

EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "assistant",
}
ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "model": "assistant",
    "tool": "tool",
}


@dataclass
class SpanMessage:
    """A message as a span gave it: role, text, content blocks, calls asked, results given."""

    role: str
    text: str = ""
    content: str | list[dict[str, Any]] | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    responses: list[tuple[str, Any]] = field(default_factory=list)

    @property
    def signature(self) -> str:
        """What makes two copies the same message (a history is resent with every call)."""
        calls = [(c["id"], c["name"]) for c in self.calls]
        responses = [r[0] for r in self.responses]
        return json.dumps([self.role, self.text, calls, responses])


def read_messages(
    value: Any, where: str, notes: list[str], role: str | None = None
) -> list[SpanMessage] | None:
    """A list of messages (JSON text or structured); None, and a note, when unreadable."""
    if isinstance(value, str):
        try:
            value = loads(value)
        except json.JSONDecodeError as exc:
            notes.append(f"{where}: not JSON ({exc.msg}); kept as text in metadata.otel_spans")
            return None
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        notes.append(f"{where}: a JSON {json_kind(value)}, not messages; kept in metadata")
        return None
    read = [_message(m, role, f"{where}[{i}]", notes) for i, m in enumerate(value)]
    return [m for m in read if m is not None]


def system_messages(value: Any) -> list[dict[str, Any]]:
    """`gen_ai.system_instructions` (parts, JSON text of parts, or plain text) as a message."""
    if isinstance(value, str):
        try:
            value = loads(value)
        except json.JSONDecodeError:
            value = [{"type": "text", "content": value}]
    return [{"role": "system", "parts": value if isinstance(value, list) else [value]}]


def _message(
    raw: dict[str, Any], role: str | None, where: str, notes: list[str]
) -> SpanMessage | None:
    body = raw["message"] if isinstance(raw.get("message"), dict) else raw  # a gen_ai.choice
    said = str(body.get("role") or role or "")
    if said not in ROLES:
        notes.append(f"{where}: a message with role {said!r} was left out")
        return None
    message = SpanMessage(ROLES[said])
    if isinstance(body.get("parts"), list):
        _read_parts(message, body["parts"])
    else:
        _read_content(message, body)
    return message


def _read_parts(message: SpanMessage, parts: list[Any]) -> None:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        part = part if isinstance(part, dict) else {"type": "text", "content": str(part)}
        kind = part.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": str(part.get("content", ""))})
        elif kind == "tool_call":
            message.calls.append(_call(part.get("id"), part.get("name"), part.get("arguments")))
        elif kind == "tool_call_response":
            result = part.get("response", part.get("result"))
            message.responses.append((id_text(part.get("id")), result))
        else:
            blocks.append(part)
    _set_blocks(message, blocks)


def _read_content(message: SpanMessage, body: dict[str, Any]) -> None:
    content = body.get("content")
    answered = body.get("id", body.get("tool_call_id"))
    if message.role == "tool" and answered is not None:
        message.responses.append((id_text(answered), content))
        return
    entries = body.get("tool_calls") or []
    for entry in entries if isinstance(entries, list) else [entries]:  # one call, not a list
        function = entry.get("function") if isinstance(entry, dict) else None
        if isinstance(function, dict):
            args = function.get("arguments")
            message.calls.append(_call(entry.get("id"), function.get("name"), args))
    if content is not None:
        parts = content if isinstance(content, list) else [str(content)]
        blocks = [p if isinstance(p, dict) else {"type": "text", "text": str(p)} for p in parts]
        _set_blocks(message, blocks)


def _set_blocks(message: SpanMessage, blocks: list[dict[str, Any]]) -> None:
    """Text only becomes a string; anything else stays as blocks beside the text."""
    message.text = content_text(blocks)
    if blocks:
        text_only = all(b.get("type") == "text" for b in blocks)
        message.content = message.text if text_only else blocks


def _call(call_id: Any, name: Any, args: Any) -> dict[str, Any]:
    return {"id": id_text(call_id), "name": str(name or ""), "args": args}


def id_text(value: Any) -> str:
    """A call id as the spans give it, as text: stripped, and "" for none."""
    return "" if value is None else str(value).strip()


class Conversation:
    """The messages of one trace, each once and in order, with the tool calls between them.

    Every model call resends the history, so a message is added only when this input holds
    more copies of it than the conversation has. A system message new to the conversation
    goes before the first message of its input that is already known (an agent span's input
    often comes before the chat span that adds the system instructions to it).
    """

    def __init__(self) -> None:
        self.items: list[Any] = []  # SpanMessage, or whatever the caller appends (a tool span)
        self.seen: Counter[str] = Counter()

    def take_inputs(self, messages: list[SpanMessage]) -> None:
        here: Counter[str] = Counter()
        waiting: list[SpanMessage] = []  # new system messages, until their place is known
        for message in messages:
            signature = message.signature
            here[signature] += 1
            if here[signature] <= self.seen[signature]:  # known already
                if waiting:
                    self._insert(waiting, self._position(signature, here[signature]))
                    waiting = []
            elif message.role == "system":
                waiting.append(message)
            else:
                self._insert([*waiting, message], len(self.items))
                waiting = []
        self._insert(waiting, len(self.items))

    def take_output(self, message: SpanMessage) -> None:
        """A model's answer, unless it repeats the last message (an agent span's output)."""
        said = [item for item in self.items if isinstance(item, SpanMessage)]
        if not said or said[-1].signature != message.signature:
            self._insert([message], len(self.items))

    def _insert(self, messages: list[SpanMessage], at: int) -> None:
        for offset, message in enumerate(messages):
            self.seen[message.signature] += 1
            self.items.insert(at + offset, message)

    def _position(self, signature: str, nth: int) -> int:
        """Where the nth copy of a message is (every copy is counted in `seen`)."""
        copies = [
            index
            for index, item in enumerate(self.items)
            if isinstance(item, SpanMessage) and item.signature == signature
        ]
        return copies[nth - 1]
