"""The HTML of one trial, shared by the HTML report and `sounding view`: its checks, its
conversation, its tool calls and its workspace diff, and the tables they sit in.

Every value is the agent's or the run's, untrusted: it enters the page only through `text`
(HTML-escaped). A text longer than `limit` characters is cut; the rest stays in the
trial's folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from sounding.record import Message, RunRecord, ToolCall
from sounding.scoring import UNVALIDATED, Measured

CLIP = 20_000  # characters of one text shown in the HTML report


def text(value: object) -> str:
    """`value` as HTML text: every `<`, `&` and quote escaped."""
    return escape(str(value), quote=True)


def as_json(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)


def clip(said: str, limit: int = CLIP) -> str:
    if len(said) <= limit:
        return said
    return f"{said[:limit]}\n… {len(said) - limit:,} more characters in the trial's folder"


def table(head: Sequence[str], rows: Iterable[str], cls: str = "") -> str:
    """A table of ready-made rows (`<tr>…</tr>`) under the escaped column names."""
    heads = "".join(f"<th>{text(h)}</th>" for h in head)
    kind = f' class="{cls}"' if cls else ""
    body = "".join(rows) or f'<tr><td colspan="{len(head)}" class="dim">nothing to show</td></tr>'
    return f"<table{kind}><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table>"


def checks(measured: Sequence[Measured]) -> str:
    """Each check with its kind, status, score, weight and reason, its details folded."""
    head = ["check", "kind", "status", "score", "weight", "reason"]
    return table(head, map(_check_row, measured), "checks")


def _check_row(m: Measured) -> str:
    status = m.result.status.value
    gate = " (gate)" if m.gate else ""
    gate += f" ({UNVALIDATED}: not counted)" if m.unvalidated else ""
    details = m.result.details
    more = (
        f"<details><summary>details</summary><pre>{text(as_json(details))}</pre></details>"
        if details
        else ""
    )
    return (
        f"<tr><td>{text(m.name)}<br><span class=dim>{text(m.type)}</span></td>"
        f'<td>{text(m.kind.value)}{gate}</td><td class="s-{text(status)}">{text(status)}</td>'
        f"<td class=num>{m.result.score:.2f}</td><td class=num>{m.weight:g}</td>"
        f"<td>{text(m.result.reason)}{more}</td></tr>"
    )


def conversation(record: RunRecord, simulated: dict[str, Any] | None, limit: int = CLIP) -> str:
    """The turns and messages, a simulated user's turns marked as such, and how a
    simulated user ended the conversation."""
    played = [t for t in (simulated or {}).get("turns", []) if not t.get("done")]
    by_simulator = {str(t.get("message")) for t in played}

    def who(role: str, said: str) -> str:
        marked = role == "user" and any(said.endswith(m) for m in by_simulator if m)
        return "user (simulated)" if marked else role

    def message(role: str, body: str, note: str = "") -> str:
        side = f' <span class="dim">{text(note)}</span>' if note else ""
        shown = f"<pre>{text(clip(body, limit))}</pre>" if body else ""
        kind = text(role.split()[0])
        head = f'<span class="role">{text(role)}</span>'
        return f'<div class="msg role-{kind}">{head}{side}{shown}</div>'

    said = {m.text for m in record.messages if m.role == "user"}
    turns = [message(who("user", t), t) for t in record.user_turns if t not in said]
    if record.task and not record.user_turns:
        turns.append(message("task", record.task))
    names = {call.id: call.name for call in record.tool_calls}
    turns += [message(who(m.role, m.text), m.shown, _calls_of(m, names)) for m in record.messages]
    if record.final_answer is not None:
        turns.append(message("final answer", record.final_answer))
    if simulated is not None:
        turns.append(message("simulated user", _ending(simulated)))
    if record.error:
        turns.append(message("error", record.error))
    return "".join(turns) or '<p class="dim">no messages</p>'


def _calls_of(message: Message, names: Mapping[str, str]) -> str:
    if message.tool_call_ids:
        return "calls " + ", ".join(f"{names.get(i, '?')} ({i})" for i in message.tool_call_ids)
    if message.tool_call_id:
        return f"result of {names.get(message.tool_call_id, '?')} ({message.tool_call_id})"
    return ""


_ENDINGS = {
    "done": "said it was done",
    "max_turns": "reached max_turns",
    "agent": "was left when the agent failed a turn",
    "error": "failed (the simulator's error, not the agent's)",
}


def _ending(simulated: dict[str, Any]) -> str:
    """How a simulated user ended, with its last word when it said one it did not send."""
    ending = str(simulated.get("ending"))
    turns = simulated.get("turns") or [{}]
    last = turns[-1].get("message") if ending == "done" else None
    return _ENDINGS.get(ending, ending) + (f": {last}" if last else "")


def tool_calls(calls: Sequence[ToolCall], limit: int = CLIP) -> str:
    """A row per call: its tool, id and turn, its arguments and its result."""
    rows = [_call_row(n, call, limit) for n, call in enumerate(calls, 1)]
    return table(["#", "tool", "arguments", "result"], rows, "calls")


def _call_row(number: int, call: ToolCall, limit: int) -> str:
    flag = ' <span class="s-failed">error</span>' if call.is_error else ""
    bad = f'<p class="s-error">{text(call.args_error)}</p>' if call.args_error else ""
    result = "" if call.result is None else f"<pre>{text(clip(call.result, limit))}</pre>"
    return (
        f'<tr class="call"><td class=num>{number}</td><td><b>{text(call.name)}</b>{flag}<br>'
        f'<span class="dim">id {text(call.id)} · turn {call.turn}</span></td>'
        f"<td>{bad}<pre>{text(clip(as_json(call.args), limit))}</pre></td><td>{result}</td></tr>"
    )


def diff(patch: str | None, limit: int = CLIP) -> str:
    """The workspace diff, each added, deleted and hunk line marked."""
    if not patch:
        return '<p class="dim">no change to the workspace</p>'
    lines = "\n".join(map(_diff_line, clip(patch, limit).splitlines()))
    return f'<pre class="diff">{lines}</pre>'


def _diff_line(line: str) -> str:
    """The line, marked as added, deleted or a hunk header (file headers are left plain)."""
    if line.startswith(("+++", "---")):
        return text(line)
    kind = "hunk" if line.startswith("@@") else {"+": "add", "-": "del"}.get(line[:1])
    return f'<span class="{kind}">{text(line)}</span>' if kind else text(line)
