"""The run record: the one normalized account of what an agent did in a trial."""

from __future__ import annotations

import json
import re
from functools import cached_property
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA: Final = "sounding.run/1"

_ID_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:#@/-]*")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


def content_text(content: str | list[dict[str, Any]] | None) -> str:
    """The text of a message content: a string as is, or its `text` blocks joined by lines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = (b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return "\n".join(map(str, texts))


class ToolCall(_Model):
    """One call of a tool: what was asked, what came back, when, and in which turn.

    `args_error` is set when the arguments could not be read as a JSON object; `args` then
    holds the original text under `_raw`, so nothing the agent sent is lost.
    """

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    args_error: str | None = None
    result: str | None = None
    is_error: bool = False
    started_at: float | None = None
    ended_at: float | None = None
    turn: int = 0
    message_index: int | None = None


class Message(_Model):
    """A message as it was exchanged; `content` is text, or the provider's blocks."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None
    tool_call_id: str | None = None
    tool_call_ids: list[str] = Field(default_factory=list)
    turn: int = 0

    @property
    def text(self) -> str:
        """The message's text, with any non-text blocks left out."""
        return content_text(self.content)

    @property
    def shown(self) -> str:
        """The message as a page shows it: its text, or all its blocks as JSON."""
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        return json.dumps(self.content, indent=1, ensure_ascii=False, default=str)


class ModelUsage(_Model):
    """What the calls answered by one model spent."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


class Usage(_Model):
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    model: str | None = None
    by_model: dict[str, ModelUsage] = Field(default_factory=dict)  # the calls naming theirs

    def per_model(self) -> dict[str, ModelUsage]:
        """`by_model`, or for a usage that names one model only, its whole as that model's."""
        if self.by_model or not self.model:
            return dict(self.by_model)
        whole = ModelUsage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost_usd,
        )
        return {self.model: whole}


def add_usage(
    by_model: dict[str, ModelUsage],
    model: str | None,
    input_tokens: int,
    output_tokens: int,
    cost_usd: float | None,
) -> None:
    """Count one call's tokens and cost in `by_model`, under the model that answered it
    (a call naming no model is counted in the totals only). A cost stays None while
    one call of the model has none."""
    if not model:
        return
    was = by_model.get(model, ModelUsage(cost_usd=0.0))
    costs = None if was.cost_usd is None or cost_usd is None else was.cost_usd + cost_usd
    by_model[model] = ModelUsage(
        input_tokens=was.input_tokens + input_tokens,
        output_tokens=was.output_tokens + output_tokens,
        cost_usd=costs,
    )


class Passage(_Model):
    """A passage a retriever returned during the run."""

    id: str
    text: str = ""
    source: str | None = None
    turn: int = 0


class HookDecision(_Model):
    """A guard that ran during the run and what it decided (allow, deny, ...)."""

    name: str
    decision: str | None = None
    reason: str | None = None
    tool_call_id: str | None = None
    at: float | None = None


class Approval(_Model):
    """A recorded approval, for example a human sign-off on a refund above a ceiling."""

    id: str
    tool: str | None = None
    tool_call_id: str | None = None
    by: str | None = None
    at: float | None = None


class AuditEvent(_Model):
    """A side effect seen by the harness: a file write, an HTTP call, a database write."""

    type: str
    details: dict[str, Any] = Field(default_factory=dict)
    at: float | None = None


class RunRecord(_Model):
    """The normalized record of one trial. Checks read it; they never change it."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: Literal["sounding.run/1"] = Field(default=SCHEMA, alias="schema")
    task: str | None = None
    user_turns: list[str] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    final_answer: str | None = None
    error: str | None = None
    turns: int = 0
    duration_ms: float | None = None
    usage: Usage = Field(default_factory=Usage)
    passages: list[Passage] = Field(default_factory=list)
    hooks: list[HookDecision] = Field(default_factory=list)
    approvals: list[Approval] = Field(default_factory=list)
    audit: list[AuditEvent] = Field(default_factory=list)
    model: str | None = None
    seed: int | None = None
    source_format: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    # ---- derived views the checks use -------------------------------------------------

    @cached_property
    def tools_called(self) -> list[str]:
        """Tool names in the order they were called."""
        return [call.name for call in self.tool_calls]

    def calls(self, name: str) -> list[ToolCall]:
        """Every call of one tool, in order."""
        return [call for call in self.tool_calls if call.name == name]

    @cached_property
    def passages_returned(self) -> set[str]:
        """Ids of the passages a retriever returned during the run."""
        return {p.id for p in self.passages}

    @cached_property
    def ids_seen(self) -> set[str]:
        """Every id-like token the run saw from outside the agent: user turns, tool results."""
        return self.ids_seen_before(len(self.tool_calls))

    def ids_seen_before(self, call_index: int) -> set[str]:
        """Id-like tokens seen from outside the agent before the call at `call_index`."""
        return set(_ID_TOKEN.findall(self.text_seen_before(call_index)))

    def text_seen_before(self, call_index: int) -> str:
        """All text the run saw from outside the agent before the call at `call_index`.

        That is the task, the user turns up to the call's own turn, and the results of the
        calls before it. A call whose turn is unknown (0) sees every user turn.
        """
        turn = self.tool_calls[call_index].turn if 0 <= call_index < len(self.tool_calls) else 0
        users = self.user_turns[:turn] if turn > 0 else self.user_turns
        texts = [self.task or "", *users]
        texts.extend(
            m.text for m in self.messages if m.role == "user" and (turn <= 0 or m.turn <= turn)
        )
        texts.extend(call.result or "" for call in self.tool_calls[:call_index])
        return "\n".join(texts)

    @property
    def approval_ids(self) -> set[str]:
        return {a.id for a in self.approvals}

    def approved(self, call: ToolCall) -> bool:
        """True when an approval was recorded for this call, or for its tool in general."""
        return any(
            a.tool_call_id == call.id or (a.tool_call_id is None and a.tool in (None, call.name))
            for a in self.approvals
        )

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)
