"""What every importer shares: the error it raises and the builder it fills.

An importer walks its input once and tells a `RecordBuilder` what happened (a user turn, a
message, a tool call, a result); the builder keeps plain dicts and validates the whole
record with one `RunRecord.model_validate` at the end, which keeps imports linear and light.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, replace
from enum import Enum
from typing import Any

from pydantic import ValidationError

from sounding._files import json_kind, loads
from sounding._problems import validation_problems
from sounding._words import closest_match
from sounding.record._model import RunRecord, content_text


@dataclass(eq=False, repr=False)
class RecordError(ValueError):
    """A run record that cannot be read: where (file, line, column or path) and how to fix it.

    `needs` names the argument of `load_record` / `parse_record` that settles the problem
    (`trace_id`), so that a caller which offers it under another name (the command line's
    `--trace-id`) can tell its own fix with `with_fix`.
    """

    source: str
    problem: str
    fix: str = ""
    _: KW_ONLY
    line: int | None = None
    column: int | None = None
    where: str | None = None
    needs: str | None = None

    def __post_init__(self) -> None:
        super().__init__(self._render())

    def with_fix(self, fix: str) -> RecordError:
        """The same error with another fix, in the words of the caller."""
        return replace(self, fix=fix)

    def _render(self) -> str:
        place = self.source
        if self.line is not None:
            place += f", line {self.line}"
            if self.column is not None:
                place += f", column {self.column}"
        if self.where:
            place += f", {self.where}"
        return f"{place}: {self.problem}" + (f"; {self.fix}" if self.fix else "")


class Attach(Enum):
    """What became of a tool result handed to the builder."""

    ATTACHED = "attached"
    UNKNOWN = "unknown"
    ANSWERED = "answered"


CALL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")
"""Anthropic content blocks that are tool calls: the importer reads them, detection looks."""


def closest(word: str, known: Sequence[str]) -> str:
    """`did you mean 'x'? ` for the known name closest to `word`, or nothing."""
    close = closest_match(word, known)
    return f"did you mean '{close}'? " if close else ""


def dump_result(value: Any) -> str:
    """A tool result as text: a string as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def parse_args(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Tool arguments as an object; text that is not a JSON object is kept under `_raw`."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    value = raw
    if isinstance(raw, str):
        try:
            value = loads(raw)
        except json.JSONDecodeError as exc:
            return {"_raw": raw}, f"arguments are not valid JSON: {exc.msg} (column {exc.colno})"
    if isinstance(value, dict):
        return value, None
    return {"_raw": raw}, f"arguments are a JSON {json_kind(value)}, not an object"


def check_content(content: Any, source: str, where: str) -> None:
    """Message content must be text, null, or a list of part objects of a named type."""
    if content is None or isinstance(content, str):
        return
    problem, where = f"content is a JSON {json_kind(content)}", f"{where}.content"
    if isinstance(content, list):
        bad = [i for i, p in enumerate(content) if not _is_part(p)]
        if not bad:
            return
        problem, where = "a part that is not an object with a text 'type'", f"{where}[{bad[0]}]"
    raise RecordError(
        source,
        problem,
        "content must be a string, null, or a list of objects such as "
        '{"type": "text", "text": "..."}',
        where=where,
    )


def _is_part(part: Any) -> bool:
    return isinstance(part, dict) and isinstance(part.get("type", ""), str)


class RecordBuilder:
    """Collects one record as plain dicts; `build` validates it once."""

    def __init__(self, source: str, source_format: str) -> None:
        self.source = source
        self.source_format = source_format
        self.messages: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.user_turns: list[str] = []
        self.turn = 0
        self.task: str | None = None
        self.final: str | None = None
        self.fields: dict[str, Any] = {}
        self.metadata: dict[str, Any] = {}
        self.notes: list[str] = []
        self._waiting: dict[str, list[int]] = {}

    # ---- conversation --------------------------------------------------------------------

    def user(self, text: str, content: Any = None, **extra: Any) -> int:
        """A user turn: opens the next turn; the first one is the task unless one was set."""
        self.turn += 1
        self.user_turns.append(text)
        if self.task is None:
            self.task = text
        return self.message("user", text if content is None else content, **extra)

    def message(self, role: str, content: Any, **extra: Any) -> int:
        """Append a message in the current turn; returns its index."""
        self.messages.append({"role": role, "content": content, "turn": self.turn, **extra})
        return len(self.messages) - 1

    def last_assistant(self) -> int | None:
        """The index of the last message when it is an assistant's (calls join it)."""
        if self.messages and self.messages[-1]["role"] == "assistant":
            return len(self.messages) - 1
        return None

    # ---- tool calls ----------------------------------------------------------------------

    def call(
        self, call_id: str, name: str, args: Any, message_index: int | None, **times: float | None
    ) -> None:
        """Record a tool call made in the current turn, its raw `args` read by `parse_args`."""
        parsed, args_error = parse_args(args)
        call = {"id": call_id, "name": name, "args": parsed, "args_error": args_error, **times}
        call |= {"turn": self.turn, "message_index": message_index}
        if message_index is not None:
            self.messages[message_index].setdefault("tool_call_ids", []).append(call_id)
        self._waiting.setdefault(call_id, []).append(len(self.calls))
        self.calls.append(call)

    def result(
        self,
        call_id: str,
        text: str | None,
        *,
        is_error: bool = False,
        ended_at: float | None = None,
    ) -> Attach:
        """Give the oldest call with this id still waiting its result."""
        waiting = self._waiting.get(call_id)
        if not waiting:
            answered = any(c["id"] == call_id for c in self.calls)
            return Attach.ANSWERED if answered else Attach.UNKNOWN
        call = self.calls[waiting.pop(0)]
        call["result"] = text
        call["is_error"] = is_error
        if ended_at is not None:
            call["ended_at"] = ended_at
        return Attach.ATTACHED

    def answer(self, call_id: str, text: str | None, where: str, *, is_error: bool = False) -> None:
        """Give a call its result; one that answers no call, or a call answered already,
        is said in the notes (an exported conversation is often a window cut from a longer
        one)."""
        outcome = self.result(call_id, text, is_error=is_error)
        if outcome is Attach.UNKNOWN:
            self.notes.append(f"{where}: a result for call id '{call_id}' that no call made")
        elif outcome is Attach.ANSWERED:
            self.notes.append(f"{where}: a second result for call id '{call_id}'; kept the first")

    def known_ids(self) -> str:
        ids = [c["id"] for c in self.calls[-8:]]
        return ", ".join(ids) if ids else "none yet"

    # ---- the record ----------------------------------------------------------------------

    def final_answer(self) -> str | None:
        """The explicit final answer, or else the last assistant message that has text."""
        if self.final is not None:
            return self.final
        said = (
            content_text(m["content"]) for m in reversed(self.messages) if m["role"] == "assistant"
        )
        return next((text for text in said if text.strip()), None)

    def take_extra(self, extra: dict[str, Any]) -> None:
        """The keys around a message list: `model` when it is a name, the rest as metadata."""
        model = extra.pop("model", None)
        if isinstance(model, str):
            self.fields["model"] = model
        elif model is not None:
            extra["model"] = model
        self.metadata.update(extra)

    def build(self) -> RunRecord:
        """Validate everything collected into one `RunRecord`."""
        if self.notes:
            self.metadata["import_notes"] = self.notes
        data: dict[str, Any] = {
            "task": self.task,
            "user_turns": self.user_turns,
            "messages": self.messages,
            "tool_calls": self.calls,
            "final_answer": self.final_answer(),
            "turns": self.turn,
            "source_format": self.source_format,
            "metadata": self.metadata,
            **self.fields,
        }
        return validate_record(data, self.source)


def validate_record(data: dict[str, Any], source: str) -> RunRecord:
    """`RunRecord.model_validate`, with its errors said as a `RecordError`."""
    try:
        return RunRecord.model_validate(data)
    except ValidationError as exc:
        problem = "not a valid run record: " + _described(exc)
        fix = "see docs/run-record.md for every field and its type"
        raise RecordError(source, problem, fix) from None


def _described(exc: ValidationError, limit: int = 5) -> str:
    """The first few problems of a validation error, each as `path: message`."""
    said = [problem.said for problem in validation_problems(exc, RunRecord)]
    more = f" (and {len(said) - limit} more)" if len(said) > limit else ""
    return "; ".join(said[:limit]) + more
