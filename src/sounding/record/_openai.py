"""OpenAI chat-completions message lists into run records.

Accepted: a list of messages; an object with a `messages` list (a request body: `model` is
kept, other keys go to `metadata`); a tau-bench entry with the list under `traj` (its other
keys go to `metadata`). A shape that cannot be read is a `RecordError` naming the message
(`traj[12].tool_calls[0]`); a result that answers no call is kept as a message and noted in
`metadata.import_notes`, since exported conversations are often cut windows.
"""

from __future__ import annotations

from typing import Any

from sounding._files import json_kind
from sounding.record._build import RecordBuilder, RecordError, check_content, closest
from sounding.record._model import RunRecord, content_text

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_SHAPES = (
    "give a list of chat messages, an object with a 'messages' list, "
    "or a tau-bench entry with a 'traj' list"
)


def parse_openai(data: Any, source: str) -> RunRecord:
    """Read decoded JSON in one of the OpenAI shapes into a record."""
    messages, where, extra = _unwrap(data, source)
    reader = _Reader(source)
    reader.builder.take_extra(extra)
    for index, message in enumerate(messages):
        reader.read(message, f"{where}[{index}]")
    return reader.builder.build()


def _unwrap(data: Any, source: str) -> tuple[list[Any], str, dict[str, Any]]:
    """The message list, its name for errors, and the keys beside it."""
    if isinstance(data, list):
        return data, "messages", {}
    if not isinstance(data, dict):
        raise RecordError(source, f"a JSON {json_kind(data)} is not a conversation", _SHAPES)
    for key in ("messages", "traj"):
        if key in data:
            if not isinstance(data[key], list):
                raise RecordError(source, f"'{key}' is not a list", _SHAPES, where=key)
            return data[key], key, {k: v for k, v in data.items() if k != key}
    raise RecordError(source, "an object with neither 'messages' nor 'traj'", _SHAPES)


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.builder = RecordBuilder(source, "openai")
        self.legacy: dict[str, list[str]] = {}  # function name -> ids of calls awaiting a result

    def read(self, message: Any, where: str) -> None:
        if not isinstance(message, dict):
            raise RecordError(
                self.source, f"a JSON {json_kind(message)}, not a message", _SHAPES, where=where
            )
        role = message.get("role")
        content = message.get("content")
        check_content(content, self.source, where)
        extra = {"name": message["name"]} if isinstance(message.get("name"), str) else {}
        if role in ("system", "developer"):
            self.builder.message("system", content, **extra)
        elif role == "user":
            self.builder.user(content_text(content), content, **extra)
        elif role == "assistant":
            self._assistant(message, content, extra, where)
        elif role == "tool":
            self._tool(message, content, extra, where)
        elif role == "function":
            self._function(message, content, where)
        else:
            raise RecordError(
                self.source,
                f"unknown role {role!r}",
                f"{closest(str(role), ROLES)}roles are: {', '.join(ROLES)}",
                where=where,
            )

    def _assistant(
        self, message: dict[str, Any], content: Any, extra: dict[str, Any], where: str
    ) -> None:
        if content is None and isinstance(message.get("refusal"), str):
            content = message["refusal"]
        index = self.builder.message("assistant", content, **extra)
        tool_calls = message.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise RecordError(
                self.source, "'tool_calls' is not a list", _SHAPES, where=f"{where}.tool_calls"
            )
        for number, entry in enumerate(tool_calls):
            self._tool_call(entry, index, f"{where}.tool_calls[{number}]")
        if message.get("function_call") is not None:
            self._function_call(message["function_call"], index, f"{where}.function_call")

    def _tool_call(self, entry: Any, index: int, where: str) -> None:
        function = entry.get("function") if isinstance(entry, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise RecordError(
                self.source,
                "a tool call without a 'function' holding a 'name'",
                'each entry of tool_calls is {"id", "type": "function", '
                '"function": {"name", "arguments"}}',
                where=where,
            )
        call_id = entry.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = f"call-{len(self.builder.calls) + 1}"
        self.builder.call(call_id, function["name"], function.get("arguments"), index)

    def _function_call(self, function: Any, index: int, where: str) -> None:
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise RecordError(
                self.source,
                "a function_call without a 'name'",
                'the legacy form is "function_call": {"name", "arguments"}',
                where=where,
            )
        call_id = f"function_call-{index}"
        self.legacy.setdefault(function["name"], []).append(call_id)
        self.builder.call(call_id, function["name"], function.get("arguments"), index)

    def _tool(
        self, message: dict[str, Any], content: Any, extra: dict[str, Any], where: str
    ) -> None:
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            self.builder.notes.append(f"{where}: a tool message without a tool_call_id")
            self.builder.message("tool", content, **extra)
            return
        self.builder.answer(call_id, content_text(content), where)
        self.builder.message("tool", content, tool_call_id=call_id, **extra)

    def _function(self, message: dict[str, Any], content: Any, where: str) -> None:
        name = message.get("name")
        waiting = self.legacy.get(name) if isinstance(name, str) else None
        if not waiting:
            self.builder.notes.append(f"{where}: a function result for {name!r} that no call made")
            self.builder.message("tool", content, name=name if isinstance(name, str) else None)
            return
        call_id = waiting.pop(0)
        self.builder.answer(call_id, content_text(content), where)
        self.builder.message("tool", content, tool_call_id=call_id, name=name)
