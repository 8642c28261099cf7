"""Anthropic Messages-API conversations into run records.

Accepted: a list of `{role, content}` messages, or an object `{system?, messages, ...}` (a
request body: `model` is kept, other keys go to `metadata`). `content` is text or blocks;
`tool_use` blocks are calls, `tool_result` blocks (in the next user message) their results.
A user message that carries only tool results continues the turn; one with text opens the
next turn. Server-side tools (`server_tool_use` and their `*_tool_result` blocks in the
assistant message) are read the same way.
"""

from __future__ import annotations

from typing import Any

from sounding.record._build import (
    CALL_BLOCKS,
    RecordBuilder,
    RecordError,
    check_content,
    closest,
    dump_result,
)
from sounding.record._model import RunRecord, content_text

ROLES = ("user", "assistant", "system")
_SHAPES = "give a list of messages, or an object with a 'messages' list and an optional 'system'"


def parse_anthropic(data: Any, source: str) -> RunRecord:
    """Read decoded JSON in one of the Anthropic shapes into a record."""
    messages, system, extra = _unwrap(data, source)
    reader = _Reader(source)
    reader.builder.take_extra(extra)
    if system is not None:
        reader.read({"role": "system", "content": system}, "system")
    for index, message in enumerate(messages):
        reader.read(message, f"messages[{index}]")
    return reader.builder.build()


def _unwrap(data: Any, source: str) -> tuple[list[Any], Any, dict[str, Any]]:
    """The message list, the system prompt if any, and the other keys."""
    if isinstance(data, list):
        return data, None, {}
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise RecordError(source, "no 'messages' list", _SHAPES)
    extra = {k: v for k, v in data.items() if k not in ("messages", "system")}
    return data["messages"], data.get("system"), extra


def is_result_block(block: dict[str, Any]) -> bool:
    """A block answering a tool call: `tool_result` or a server tool's `*_tool_result`."""
    kind = block.get("type")
    return isinstance(kind, str) and kind.endswith("tool_result") and "tool_use_id" in block


def result_text(content: Any) -> str:
    """A tool result's text: the string, its text blocks, or else its blocks as JSON."""
    blocks = content if isinstance(content, list) else []
    said = any(isinstance(b, dict) and b.get("type") == "text" for b in blocks)
    if content is None or isinstance(content, str) or said:
        return content_text(content)
    return dump_result(content)


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.builder = RecordBuilder(source, "anthropic")

    def read(self, message: Any, where: str) -> None:
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            raise RecordError(
                self.source,
                f"not a message with a known role (role {role!r})",
                f"{closest(str(role), ROLES)}each message is {{role: user | assistant, content}}",
                where=where,
            )
        content = message.get("content")
        check_content(content, self.source, where)
        if role == "system":
            self.builder.message("system", content)
        elif role == "user":
            self._user(content, where)
        else:
            self._assistant(content, where)

    def _user(self, content: Any, where: str) -> None:
        if not isinstance(content, list):
            self.builder.user(content_text(content), content)
            return
        said = []
        for number, block in enumerate(content):
            if is_result_block(block):
                self._result(block, f"{where}.content[{number}]")
            else:
                said.append(block)
        if said:
            self.builder.user(content_text(said), content)
        else:
            self.builder.message("user", content)

    def _assistant(self, content: Any, where: str) -> None:
        index = self.builder.message("assistant", content)
        if not isinstance(content, list):
            return
        for number, block in enumerate(content):
            if block.get("type") in CALL_BLOCKS:
                self._call(block, index, f"{where}.content[{number}]")
            elif is_result_block(block):
                self._result(block, f"{where}.content[{number}]")

    def _call(self, block: dict[str, Any], index: int, where: str) -> None:
        call_id, name = block.get("id"), block.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise RecordError(
                self.source,
                f"a {block.get('type')} block without a string 'id' and 'name'",
                'a tool_use block is {"type": "tool_use", "id", "name", "input": {...}}',
                where=where,
            )
        self.builder.call(call_id, name, block.get("input"), index)

    def _result(self, block: dict[str, Any], where: str) -> None:
        text = result_text(block.get("content"))
        is_error = bool(block.get("is_error"))
        self.builder.answer(str(block["tool_use_id"]), text, where, is_error=is_error)
