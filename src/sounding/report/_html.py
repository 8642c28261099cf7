"""One self-contained HTML page of a run: verdicts, pass-rate charts, and every trial.

Nothing is fetched: the CSS, the script and the charts (SVG) are inline. Records hold
untrusted text (agent output, tool results), so every value goes through `html.escape`
and none of it is ever placed inside the script.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from sounding._words import counted
from sounding.record import Message, RunRecord, ToolCall
from sounding.report._cells import cells_report
from sounding.report._charts import (
    SPENT,
    cell_chart,
    cell_curve,
    metrics_table,
    scenario_curve_table,
    spent_columns,
    spent_text,
)
from sounding.report._renderers import renderers
from sounding.report._terminal import passes
from sounding.scoring import UNVALIDATED, Measured
from sounding.store import Results, ScenarioTrials, Trial

_CLIP = 20_000  # characters of one text shown in the page; the rest stays in the folder
_ARTIFACTS = (("stdout.txt", "agent stdout"), ("stderr.txt", "agent stderr"))

_STYLE = """
:root{--pass:#1a7f37;--flaky:#9a6700;--fail:#cf222e;--error:#8250df;--line:#d0d7de;
--soft:#f6f8fa;--ink:#1f2328;--dim:#59636e}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);
margin:0 auto;max-width:1200px;padding:16px 24px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;
border-bottom:1px solid var(--line)}h3{font-size:15px;margin:18px 0 6px}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--soft);border:1px solid var(--line);padding:8px;overflow:auto;
white-space:pre-wrap;word-break:break-word;max-height:480px;margin:4px 0}
table{border-collapse:collapse;margin:6px 0;width:100%}
th,td{border:1px solid var(--line);padding:4px 6px;text-align:left;vertical-align:top}
th{background:var(--soft)}td.num{text-align:right;white-space:nowrap}table.curve{width:auto}
.v{font-weight:600;text-transform:uppercase;white-space:nowrap}
.v-pass,.s-passed{color:var(--pass)}.v-flaky,.s-unjudged{color:var(--flaky)}
.v-fail,.s-failed{color:var(--fail)}.v-error,.s-error{color:var(--error)}
.s-skipped,.dim{color:var(--dim)}
.dots{white-space:nowrap}
.dots a{display:inline-block;width:12px;height:12px;border-radius:6px;margin:1px}
.dots a.v-pass{background:var(--pass)}.dots a.v-fail{background:var(--fail)}
.dots a.v-error{background:var(--error)}
details.trial{border:1px solid var(--line);border-radius:6px;margin:6px 0}
details.metrics>summary{cursor:pointer;color:var(--dim)}
details.trial>summary{cursor:pointer;padding:6px 10px;background:var(--soft)}
details.trial>.body{padding:6px 12px}
.reason{border-left:4px solid var(--fail);padding:4px 8px;background:#fff5f5}
.msg{border-left:3px solid var(--line);padding:2px 8px;margin:6px 0}
.msg .role{font-weight:600;color:var(--dim)}
.diff .add{color:var(--pass)}.diff .del{color:var(--fail)}.diff .hunk{color:var(--error)}
nav button{font:inherit;margin-right:6px;padding:3px 10px;border:1px solid var(--line);
background:#fff;border-radius:6px;cursor:pointer}
nav button[aria-pressed=true]{background:var(--soft)}
svg text{font:12px system-ui,sans-serif;fill:var(--ink)}
"""

_SCRIPT = """
(() => {
  "use strict";
  const all = (selector) => document.querySelectorAll(selector);
  function reveal() {
    const id = decodeURIComponent(window.location.hash.slice(1));
    const target = id ? document.getElementById(id) : null;
    if (!target) { return; }
    for (let node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    target.scrollIntoView({block: "start"});
  }
  function show(mode) {
    all("[data-verdict]").forEach((item) => {
      item.hidden = mode === "failing" && item.dataset.verdict === "pass";
    });
    all("button[data-show]").forEach((button) => {
      button.setAttribute("aria-pressed", String(button.dataset.show === mode));
    });
  }
  all("button[data-show]").forEach((button) => {
    button.addEventListener("click", () => show(button.dataset.show));
  });
  all("button[data-open]").forEach((button) => button.addEventListener("click", () => {
    all("details.trial").forEach((trial) => { trial.open = button.dataset.open === "all"; });
  }));
  window.addEventListener("hashchange", reveal);
  reveal();
})();
"""


@renderers.renderer("html", title="HTML", help="Write one self-contained HTML page.")
def html_report(results: Results) -> str:
    """The whole page as one string."""
    title = f"sounding run {results.run_id}: {results.finished().outcome}"
    cells = cells_report(results)
    trials = "".join(_scenario(results, i, s) for i, s in enumerate(results.scenarios))
    body = [
        _header(results),
        _section("Verdicts", _verdicts(results)),
        _section("Pass rates by cell", _cells(results)),
        *([_section("Cells against the reference", cells.html())] if cells else []),
        _section("Trials", trials),
    ]
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"{''.join(body)}<script>{_SCRIPT}</script></body></html>\n"
    )


def trial_id(index: int, trial: Trial) -> str:
    """The element id of a trial's drill-down: `s<scenario index>-t<trial number>`."""
    return f"s{index}-t{trial.trial}"


def _section(title: str, content: str) -> str:
    anchor = title.lower().replace(" ", "-")
    return f'<section id="{anchor}"><h2>{escape(title)}</h2>{content}</section>'


def _header(results: Results) -> str:
    summary = results.finished()
    outcome = {"passed": "pass", "failed": "fail"}.get(summary.outcome, "error")
    totals = ", ".join(f'<span class="v-{v}">{n} {v}</span>' for v, n in summary.totals.items())
    return (
        f"<header><h1>sounding run <code>{escape(results.run_id)}</code> "
        f'<span class="v v-{outcome}">{escape(summary.outcome)}</span></h1>'
        f"<p>{totals}: {counted(len(summary.scenarios), 'scenario')}, {len(results.trials)} of "
        f"{counted(len(results.planned), 'trial')} finished, exit code {summary.exit_code}</p>"
        f'<p class="dim">suite <code>{escape(results.plan.suite)}</code> · results '
        f"<code>{escape(str(results.root))}</code></p></header>"
        '<nav><button data-show="all" aria-pressed="true">all scenarios</button>'
        '<button data-show="failing" aria-pressed="false">only not passing</button>'
        '<button data-open="all">open every trial</button>'
        '<button data-open="none">close every trial</button></nav>'
    )


def _verdicts(results: Results) -> str:
    spent = spent_columns(results.scenarios)
    head = (
        "<tr><th>verdict</th><th>scenario</th><th>passes/judged</th><th>pass@k</th>"
        "<th>pass^k</th><th>mean composite</th><th>trials</th><th>first failure</th>"
        "<th>duration</th>"
        + "".join(f"<th>{SPENT[name][0]} per trial</th>" for name in spent)
        + "</tr>"
    )
    rows = "".join(_verdict_row(i, s, spent) for i, s in enumerate(results.scenarios))
    return f"<table>{head}{rows}</table>"


def _verdict_row(index: int, scenario: ScenarioTrials, spent: list[str]) -> str:
    s = scenario.summary
    verdict = s.verdict.value
    failure = "" if verdict == "pass" else s.first_failure
    spans = [scenario.spending.get(name) for name in spent]
    spending = "".join(
        f'<td class="num">{escape(spent_text(name, span)) if span else ""}</td>'
        for name, span in zip(spent, spans, strict=True)
    )
    return (
        f'<tr data-verdict="{verdict}"><td class="v v-{verdict}">{verdict}</td>'
        f'<td><a href="#s{index}">{escape(s.label)}</a></td><td class="num">{passes(s)}</td>'
        f'<td class="num">{_number(s.pass_at_k)}</td><td class="num">{_number(s.pass_hat_k)}</td>'
        f'<td class="num">{_number(s.mean_composite)}</td><td class="dots">'
        f"{_dots(index, scenario)}</td><td>{escape(_clip(failure, 400))}</td>"
        f'<td class="num">{s.duration_ms / 1000:.2f}s</td>{spending}</tr>'
    )


def _dots(index: int, scenario: ScenarioTrials) -> str:
    return "".join(
        f'<a class="v-{t.verdict.value}" href="#{trial_id(index, t)}" '
        f'title="trial {t.trial}: {t.verdict.value}"></a>'
        for t in scenario.trials
    )


def _cells(results: Results) -> str:
    parts = []
    curves = results.finished().curves
    for cell in results.cells:
        members = [s for s in results.scenarios if s.summary.cell == cell]
        trials = [t for s in members for t in s.trials]
        parts.append(
            f"<h3>cell {escape(cell)}</h3>{cell_chart(members)}"
            f"{cell_curve(curves.get(cell, []))}{metrics_table(trials)}"
        )
    return "".join(parts)


def _scenario(results: Results, index: int, scenario: ScenarioTrials) -> str:
    s = scenario.summary
    verdict = s.verdict.value
    trials = "".join(_trial(results, index, t) for t in scenario.trials)
    missing = s.trials - len(scenario.trials)
    left = f"{counted(missing, 'trial')} left no trial.json"
    note = f'<p class="dim">{left}</p>' if missing > 0 else ""
    curve = scenario_curve_table(s.pass_at, s.pass_hat) if s.pass_at else ""
    return (
        f'<section class="scenario" id="s{index}" data-verdict="{verdict}">'
        f'<h3><span class="v v-{verdict}">{verdict}</span> {escape(s.label)}</h3>'
        f"{curve}{trials or '<p class=dim>no finished trial</p>'}{note}</section>"
    )


def _trial(results: Results, index: int, trial: Trial) -> str:
    ident = trial_id(index, trial)
    verdict = trial.verdict.value
    composite = trial.score.composite if trial.score else None
    summary = (
        f'<summary>trial {trial.trial} <span class="v v-{verdict}">{verdict}</span> · '
        f"composite {_number(composite)} · {trial.duration_ms / 1000:.2f}s</summary>"
    )
    reason = (
        f'<p class="reason" id="{ident}-reason">{escape(trial.reason)}</p>' if trial.reason else ""
    )
    body = [reason, _facts(trial), _checks(trial), *_evidence(results, trial)]
    inner = f'<div class="body">{"".join(body)}</div>'
    return f'<details class="trial" id="{ident}">{summary}{inner}</details>'


def _facts(trial: Trial) -> str:
    facts: dict[str, Any] = {
        "state": trial.state,
        "attempts": trial.attempts,
        "threshold": trial.score.threshold if trial.score else None,
        **trial.usage,
        **{f"judge {k}": v for k, v in trial.judge_usage.items()},
    }
    shown = " · ".join(
        f"{escape(str(k))} {escape(str(v))}" for k, v in facts.items() if v is not None
    )
    return f'<p class="dim">{shown}</p>'


def _checks(trial: Trial) -> str:
    if trial.score is None or not trial.score.checks:
        return ""
    head = (
        "<tr><th>check</th><th>kind</th><th>status</th><th>score</th><th>weight</th>"
        "<th>reason</th></tr>"
    )
    rows = "".join(_check_row(m) for m in trial.score.checks)
    return f"<h4>Checks</h4><table>{head}{rows}</table>"


def _check_row(m: Measured) -> str:
    status = m.result.status.value
    gate = " (gate)" if m.gate else ""
    gate += f" ({UNVALIDATED}: not counted)" if m.unvalidated else ""
    details = m.result.details
    more = f"<pre>{escape(_json(details))}</pre>" if details else ""
    return (
        f"<tr><td>{escape(m.name)}<br><span class=dim>{escape(m.type)}</span></td>"
        f'<td>{m.kind.value}{gate}</td><td class="s-{status}">{status}</td>'
        f'<td class="num">{m.result.score:.2f}</td><td class="num">{m.weight:g}</td>'
        f"<td>{escape(m.result.reason)}{more}</td></tr>"
    )


def _evidence(results: Results, trial: Trial) -> list[str]:
    parts = []
    record = trial.record
    if record is not None:
        parts += [_conversation(record, trial.simulated), _tool_calls(record.tool_calls)]
    parts.append(_diff(results.text(trial, "diff.patch")))
    for name, title in (*_ARTIFACTS, ("harness-error.txt", "harness error")):
        text = results.text(trial, name)
        if text:
            parts.append(
                f"<details><summary>{title}</summary><pre>{escape(_clip(text))}</pre></details>"
            )
    return parts


def _conversation(record: RunRecord, simulated: dict[str, Any] | None) -> str:
    """The turns and messages, a simulated user's turns marked as such, and how a
    simulated user ended the conversation."""
    played = [t for t in (simulated or {}).get("turns", []) if not t.get("done")]
    by_simulator = {str(t.get("message")) for t in played}

    def who(role: str, text: str) -> str:
        marked = role == "user" and any(text.endswith(m) for m in by_simulator if m)
        return "user (simulated)" if marked else role

    said = {m.text for m in record.messages if m.role == "user"}
    turns = [_message(who("user", t), t) for t in record.user_turns if t not in said]
    if record.task and not record.user_turns:
        turns.append(_message("task", record.task))
    turns += [_message(who(m.role, m.text), m.shown, m) for m in record.messages]
    if record.final_answer is not None:
        turns.append(_message("final answer", record.final_answer))
    if simulated is not None:
        turns.append(_message("simulated user", _ending(simulated)))
    if record.error:
        turns.append(_message("error", record.error))
    return "<h4>Conversation</h4>" + ("".join(turns) or '<p class="dim">no messages</p>')


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


def _message(role: str, text: str, message: Message | None = None) -> str:
    calls = ""
    if message is not None and message.tool_call_ids:
        calls = f" → calls {escape(', '.join(message.tool_call_ids))}"
    if message is not None and message.tool_call_id:
        calls = f" ← result of {escape(message.tool_call_id)}"
    body = f"<pre>{escape(_clip(text))}</pre>" if text else ""
    return f'<div class="msg"><span class="role">{escape(role)}</span>{calls}{body}</div>'


def _tool_calls(calls: list[ToolCall]) -> str:
    if not calls:
        return '<h4>Tool calls</h4><p class="dim">no tool calls</p>'
    head = "<tr><th>#</th><th>tool</th><th>args</th><th>result</th></tr>"
    rows = "".join(_call_row(n, call) for n, call in enumerate(calls, 1))
    return f"<h4>Tool calls</h4><table>{head}{rows}</table>"


def _call_row(number: int, call: ToolCall) -> str:
    flag = ' <span class="s-failed">error</span>' if call.is_error else ""
    args_note = f"<p class=s-error>{escape(call.args_error)}</p>" if call.args_error else ""
    result = "" if call.result is None else f"<pre>{escape(_clip(call.result))}</pre>"
    return (
        f'<tr><td class="num">{number}</td><td>{escape(call.name)}{flag}<br>'
        f'<span class="dim">id {escape(call.id)} · turn {call.turn}</span></td>'
        f"<td>{args_note}<pre>{escape(_clip(_json(call.args)))}</pre></td><td>{result}</td></tr>"
    )


def _diff(text: str | None) -> str:
    if not text:
        return '<h4>Diff</h4><p class="dim">no change to the workspace</p>'
    lines = "\n".join(map(_diff_line, _clip(text).splitlines()))
    return f'<h4>Diff</h4><pre class="diff">{lines}</pre>'


def _diff_line(line: str) -> str:
    """The line, marked as added, deleted or a hunk header (file headers are left plain)."""
    if line.startswith(("+++", "---")):
        return escape(line)
    kind = "hunk" if line.startswith("@@") else {"+": "add", "-": "del"}.get(line[:1])
    return f'<span class="{kind}">{escape(line)}</span>' if kind else escape(line)


def _json(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _clip(text: str, limit: int = _CLIP) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… {len(text) - limit:,} more characters in the trial's folder"
