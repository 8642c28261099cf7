"""Collect: turn what the agent left (a trace, or only its output) into a run record."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sounding._files import read_regular
from sounding.record import (
    Message,
    Price,
    RecordError,
    RunRecord,
    parse_llm_calls,
    parse_otel,
    parse_record,
    priced,
)
from sounding.runner._agent import AgentRun

_TAIL = 2000
READ_LIMIT = 64 << 20  # bytes of a file the agent wrote (its trace) read, scanned and kept


def build_record(
    turns: list[str],
    run: AgentRun,
    trace_path: Path,
    spans: dict[str, Any] | None = None,
    calls: list[dict[str, Any]] | None = None,
    prices: Mapping[str, Price] | None = None,
) -> RunRecord:
    """The trial's record: from the trace when the agent wrote one, else from the spans it
    exported (`[capture] otlp`), else from the model calls it made (`[capture] llm`), else
    from its output. What the agent printed is its final answer, over the model's last.
    With `prices`, tokens the record holds no cost for are priced by their model.

    An agent that writes no trace still gets a record: its final answer is what it printed
    (for a callable, what it returned), so plain command-line agents are checkable as they are.
    """
    found = _given(run, trace_path)
    if found is None and spans is not None:  # exported to the trial's OTLP receiver
        found = parse_otel(spans, "the spans the agent exported")
    if found is None and calls and (found := parse_llm_calls(calls, prices)) is not None:
        printed = run.answers[-1].strip() if run.answers else ""
        found = found.model_copy(update={"final_answer": printed or found.final_answer})
    record = found if found is not None else RunRecord()
    updates: dict[str, object] = {"duration_ms": run.duration_ms}
    if not record.user_turns:
        updates["user_turns"] = list(turns)
    if record.task is None and turns:
        updates["task"] = turns[0]
    if record.final_answer is None and run.answers:
        updates["final_answer"] = run.answers[-1]
    if not record.turns:
        updates["turns"] = len(run.answers)
    if record.error is None and run.exit_code not in (0, None):
        updates["error"] = _exit_error(run)
    if found is None:  # made from what the agent printed or returned, nothing else
        updates["messages"] = _exchanged(turns, run.answers)
        return RunRecord.model_validate(updates)
    return priced(record.model_copy(update=updates), prices or {})


def _exchanged(turns: list[str], answers: list[str]) -> list[Message]:
    """The conversation as it went: each turn said (1 is the first, as in any record), and
    the agent's answer to it."""
    messages = []
    for turn, (said, answer) in enumerate(zip(turns, answers, strict=False), start=1):
        messages.append(Message(role="user", content=said, turn=turn))
        messages.append(Message(role="assistant", content=answer, turn=turn))
    return messages


def _given(run: AgentRun, trace_path: Path) -> RunRecord | None:
    """The record the agent gave: returned (a callable), or written to its trace."""
    if isinstance(run.returned, RunRecord):
        return run.returned
    if isinstance(run.returned, dict) and "final_answer" in run.returned and len(run.returned) > 1:
        return RunRecord.model_validate(run.returned)
    if not os.path.lexists(trace_path):
        return None
    found = read_regular(trace_path, READ_LIMIT)  # never through a link the agent put there
    if found is None:
        raise RecordError(
            str(trace_path),
            "the trace is not a regular file (a link, a FIFO): the agent replaced the file "
            "sounding gave it",
            "append the trace's lines to the file $SOUNDING_TRACE names",
        )
    data, size = found
    if size > READ_LIMIT:
        raise RecordError(
            str(trace_path),
            f"the trace holds {size} bytes, over the {READ_LIMIT >> 20} MiB sounding reads",
            "write the events of the run, not their bulk (results as text, not files)",
        )
    text = data.decode("utf-8", errors="replace")
    # any format `sounding score --record` reads: the event stream, OpenAI or Anthropic
    # messages, an OTLP/JSON export
    return parse_record(text, source=str(trace_path)) if text else None


def _exit_error(run: AgentRun) -> str:
    """The status, and the end of what the agent printed on stderr, cut at a line boundary."""
    lines: list[str] = []
    size = 0
    for line in reversed(run.stderr.strip().splitlines()):
        if size + len(line) > _TAIL and lines:
            break
        lines.insert(0, line)
        size += len(line) + 1
    tail = "\n".join(lines)[-_TAIL:]
    return f"the agent exited with status {run.exit_code}" + (f": {tail}" if tail else "")
