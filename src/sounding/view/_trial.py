"""A trial's page: what it spent, its checks with their reasons, the judge's verdicts with
who gave them, the conversation and its tool calls, the workspace diff, the agent's
output and what the services recorded. Every value is the agent's or the run's: escaped."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from sounding._files import read_regular
from sounding.record import RunRecord
from sounding.report._trial import as_json, checks, conversation, diff, table, text, tool_calls
from sounding.scoring import Measured
from sounding.services import ServiceError, load_service_evidence
from sounding.store import Trial, TrialKey, scenario_label
from sounding.view._index import RunState, ScenarioKey, scenario_of
from sounding.view._markup import document, href, link, money, scenario_query, verdict

_SHOWN = 200_000  # bytes of one artifact (stdout, diff, ...) shown; the rest stays in the folder
_OUTPUTS = (
    ("stdout.txt", "stdout"),
    ("stderr.txt", "stderr"),
    ("harness-error.txt", "harness error"),
)


def trial_page(state: RunState, key: TrialKey) -> str:
    trial = state.trial(key)
    evidence = state.evidence_folder(key)
    parts = [
        _header(state, trial),
        _checks(trial),
        _judged(trial),
        _metrics(trial),
        exchange(trial),
        _diff(evidence),
        *(_output(evidence, name, title) for name, title in _OUTPUTS),
        _services(evidence),
    ]
    crumbs = [
        (href("run", state.run_id), state.run_id),
        (scenario_url(state, scenario_of(key)), scenario_label(*scenario_of(key))),
    ]
    return document(key.label, "".join(parts), crumbs=crumbs)


def scenario_url(state: RunState, key: ScenarioKey) -> str:
    return href("run", state.run_id, "scenario", **scenario_query(key))


def trial_url(state: RunState, key: TrialKey) -> str:
    return href("run", state.run_id, "trial", **scenario_query(scenario_of(key)), n=key.trial)


def _header(state: RunState, trial: Trial) -> str:
    usage = trial.usage
    facts = {
        "duration": f"{trial.duration_ms / 1000:.2f} s",
        "attempts": trial.attempts,
        "input tokens": usage.get("input_tokens"),
        "output tokens": usage.get("output_tokens"),
        "agent cost": money(trial.cost_usd),
        "judge cost": money(trial.judge_cost_usd),
        "simulator cost": money(trial.simulator_cost_usd),
        "error kind": trial.error_kind,
        "exit code": trial.exit_code,
        "model": usage.get("model"),
    }
    shown = " · ".join(f"{text(k)} {text(v)}" for k, v in facts.items() if v not in (None, "–"))
    reason = f'<p class="reason">{text(trial.reason)}</p>' if trial.reason else ""
    return (
        f"<h1>{verdict(trial.verdict.value)} {text(trial.key.label)}</h1>{reason}"
        f'<p class="facts">{shown}</p>{_neighbours(state, trial.key)}'
    )


def _neighbours(state: RunState, key: TrialKey) -> str:
    """Links to the trial before and after this one in its scenario."""
    same = scenario_of(key)
    mine = sorted(r.key.trial for r in state.rows if scenario_of(r.key) == same)
    before = [n for n in mine if n < key.trial]
    after = [n for n in mine if n > key.trial]
    links = []
    if before:
        links.append(link(trial_url(state, TrialKey(*same, before[-1])), "← previous trial"))
    if after:
        links.append(link(trial_url(state, TrialKey(*same, after[0])), "next trial →"))
    return f'<nav class="pager">{" · ".join(links)}</nav>' if links else ""


def _section(title: str, body: str, ident: str) -> str:
    return f'<section id="{ident}"><h2>{text(title)}</h2>{body}</section>'


def _checks(trial: Trial) -> str:
    return _section("Checks", checks(trial.score.checks if trial.score else []), "checks")


def _judged(trial: Trial) -> str:
    """Each verdict a judge gave, with its provenance: provider, model, temperature, seed,
    the digest of the exact request, and whether it came from the cache."""
    rows = [_judge_row(m) for m in (trial.score.checks if trial.score else [])]
    found = [row for row in rows if row]
    if not found:
        return ""
    head = [
        "check",
        "score",
        "judge said",
        "provider",
        "model",
        "temperature",
        "seed",
        "digest",
        "cached",
    ]
    return _section("Judge verdicts", table(head, found, "judge"), "judge")


def _judge_row(m: Measured) -> str:
    details = m.result.details or {}
    made = details.get("provenance")
    if not isinstance(made, Mapping):
        return ""
    cells = [
        m.name,
        f"{m.result.score:.2f}",
        details.get("judge_reason", m.result.reason),
        *(made.get(k) for k in ("provider", "model", "temperature", "seed", "digest")),
        details.get("cached"),
    ]
    return "<tr>" + "".join(f"<td>{text('–' if c is None else c)}</td>" for c in cells) + "</tr>"


def _metrics(trial: Trial) -> str:
    if not trial.metrics:
        return ""
    rows = [
        f"<tr><td>{text(name)}</td><td>{text(as_json(value))}</td>"
        f"<td>{text(trial.metric_reasons.get(name, ''))}</td></tr>"
        for name, value in trial.metrics.items()
    ]
    return _section("Validator metrics", table(["metric", "value", "reason"], rows), "metrics")


def exchange(trial: Trial) -> str:
    """The trial's conversation and its tool calls, a section each."""
    record = trial.record or RunRecord()
    said = conversation(record, trial.simulated, _SHOWN)
    calls = tool_calls(record.tool_calls, _SHOWN)
    return _section("Conversation", f'<div class="conversation">{said}</div>', "conversation") + (
        _section("Tool calls", calls, "tool-calls")
    )


def _read(folder: Path, name: str) -> str | None:
    """At most `_SHOWN` bytes of an artifact, read without following a link; None when
    absent."""
    found = read_regular(folder / name, _SHOWN)
    if found is None:
        return None
    data, size = found
    shown = data.decode("utf-8", errors="replace")
    left = size - len(data)
    return shown + (f"\n… {left:,} more bytes in {folder / name}" if left > 0 else "")


def _diff(folder: Path) -> str:
    return _section("Workspace diff", diff(_read(folder, "diff.patch"), _SHOWN), "diff")


def _output(folder: Path, name: str, title: str) -> str:
    found = _read(folder, name)
    if found is None:
        return ""
    body = f"<pre>{text(found)}</pre>" if found else '<p class="dim">empty</p>'
    return _section(title, body, name.split(".")[0])


def _services(folder: Path) -> str:
    try:
        services = load_service_evidence(folder)
    except ServiceError as exc:
        return _section("Services", f'<p class="s-error">{text(exc)}</p>', "services")
    if not services:
        return ""
    parts = []
    for name, found in services.items():
        parts.append(f"<h3>{text(name)} <span class=dim>({text(found.type)})</span></h3>")
        parts.append(_requests(found.details))
    return _section("Services", "".join(parts), "services")


def _requests(details: Mapping[str, Any]) -> str:
    requests = details.get("requests")
    if not isinstance(requests, list):
        shown = {k: v for k, v in details.items() if k != "requests"}
        return f"<pre>{text(as_json(shown))}</pre>"
    rows = list(_request_rows(requests))
    return table(["#", "method", "path", "query", "body"], rows, "requests")


def _request_rows(requests: list[Any]) -> Iterator[str]:
    for n, entry in enumerate(requests, 1):
        if not isinstance(entry, Mapping):
            continue
        query = as_json(entry["query"]) if entry.get("query") else ""
        yield (
            f"<tr><td class=num>{n}</td><td>{text(entry.get('method', ''))}</td>"
            f"<td>{text(entry.get('path', ''))}</td><td>{text(query)}</td>"
            f"<td><pre>{text(entry.get('body', ''))}</pre></td></tr>"
        )
