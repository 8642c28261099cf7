"""The agent's model calls, recorded into a cassette and replayed from it (`--llm`).

A trial's cassette is its own file: one per cell, case, scenario and trial, under the
suite's `cassettes/` folder, so that a replay answers each trial what its agent was
answered when it was recorded.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sounding._files import loads, read_regular, write_text
from sounding._secrets import redact_json
from sounding.runner._collect import READ_LIMIT
from sounding.services import LlmProxy
from sounding.store import TrialKey

CASSETTE_SCHEMA = "sounding.cassette/1"


class CassetteError(ValueError):
    """A cassette that cannot be read: the trial it belongs to is an error naming it."""


def cassette_path(suite_root: Path, key: TrialKey) -> Path:
    """Where a trial's model calls are recorded: one file per cell, case, scenario, trial."""
    return suite_root / "cassettes" / key.cell / key.case / key.scenario / f"{key.trial}.json"


def llm_proxy(
    upstreams: dict[str, str] | None,
    mode: str,
    cassette: Path,
    over_budget: Callable[[list[dict[str, Any]]], str | None],
) -> contextlib.AbstractContextManager[LlmProxy | None]:
    """The trial's own proxy to the agent's model API, when `[capture] llm` names
    `upstreams`; with `--llm replay`, one that answers from the trial's cassette alone."""
    if not upstreams:
        return contextlib.nullcontext()
    if mode != "replay":
        return LlmProxy(upstreams, over_budget=over_budget)
    return LlmProxy(upstreams, replay=_recorded(cassette), over_budget=over_budget)


def record_cassette(cassette: Path, calls: list[dict[str, Any]], secrets: dict[str, str]) -> None:
    """Write a cassette: each call's request and answer as they came, with no secret value
    (an API key travels in a header, which is never kept)."""
    kept = ("key", "api", "path", "request", "status", "content_type", "raw")
    document = {"schema": CASSETTE_SCHEMA, "calls": [{k: c.get(k) for k in kept} for c in calls]}
    cassette.parent.mkdir(parents=True, exist_ok=True)
    write_text(cassette, redact_json(json.dumps(document, indent=1), secrets))


def _recorded(cassette: Path) -> list[dict[str, Any]]:
    """The calls a cassette holds: none when there is no cassette (every request is then
    unanswered, and says so); a file that is no cassette is refused, naming it."""
    found = read_regular(cassette, READ_LIMIT)
    if found is None:
        return []
    try:
        document = loads(found[0])
    except ValueError as exc:
        document = f"not JSON ({exc})"
    calls = document.get("calls") if isinstance(document, dict) else None
    if not isinstance(calls, list) or not all(isinstance(call, dict) for call in calls):
        why = document if isinstance(document, str) else f"no {CASSETTE_SCHEMA} document"
        raise CassetteError(
            f"{cassette} is {why}: record it again with `sounding run --llm record`"
        )
    return calls


def unanswered(cassette: Path, proxy: LlmProxy) -> str:
    """Why a replayed trial is no measurement: a request its cassette has no answer to."""
    first = proxy.unanswered[0]
    more = f" (and {len(proxy.unanswered) - 1} more)" if len(proxy.unanswered) > 1 else ""
    return (
        f"--llm replay: {cassette} holds no answer to the agent's "
        f"{first['api']} request POST {first['path']} (key {first['key']}){more}; "
        "record it again with `sounding run --llm record`"
    )
