"""One self-contained HTML page of a run: verdicts, pass-rate charts, and every trial.

Nothing is fetched: the CSS, the script and the charts (SVG) are inline. Records hold
untrusted text (agent output, tool results), so every value goes through `text` (escaped)
and none of it is ever placed inside the script.
"""

from __future__ import annotations

from typing import Any

from sounding._words import counted
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
from sounding.report._terminal import passes, until_decided
from sounding.report._trial import checks, clip, conversation, diff, table, text, tool_calls
from sounding.store import Results, ScenarioTrials, Trial

_ARTIFACTS = (
    ("stdout.txt", "agent stdout"),
    ("stderr.txt", "agent stderr"),
    ("harness-error.txt", "harness error"),
)

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
        f"<title>{text(title)}</title><style>{_STYLE}</style></head><body>"
        f"{''.join(body)}<script>{_SCRIPT}</script></body></html>\n"
    )


def trial_id(index: int, trial: Trial) -> str:
    """The element id of a trial's drill-down: `s<scenario index>-t<trial number>`."""
    return f"s{index}-t{trial.trial}"


def _section(title: str, content: str) -> str:
    anchor = title.lower().replace(" ", "-")
    return f'<section id="{anchor}"><h2>{text(title)}</h2>{content}</section>'


def _header(results: Results) -> str:
    summary = results.finished()
    outcome = {"passed": "pass", "failed": "fail"}.get(summary.outcome, "error")
    totals = ", ".join(f'<span class="v-{v}">{n} {v}</span>' for v, n in summary.totals.items())
    decided = summary.until_decided is not None  # an adaptive run: its scenarios took their own n
    adaptive = f"<p>{text(until_decided(summary))}</p>" if decided else ""
    return (
        f"<header><h1>sounding run <code>{text(results.run_id)}</code> "
        f'<span class="v v-{outcome}">{text(summary.outcome)}</span></h1>'
        f"<p>{totals}: {counted(len(summary.scenarios), 'scenario')}, {len(results.trials)} of "
        f"{counted(len(results.planned), 'trial')} finished, exit code {summary.exit_code}</p>"
        f"{adaptive}"
        f'<p class="dim">suite <code>{text(results.plan.suite)}</code> · results '
        f"<code>{text(results.root)}</code></p></header>"
        '<nav><button data-show="all" aria-pressed="true">all scenarios</button>'
        '<button data-show="failing" aria-pressed="false">only not passing</button>'
        '<button data-open="all">open every trial</button>'
        '<button data-open="none">close every trial</button></nav>'
    )


def _verdicts(results: Results) -> str:
    spent = spent_columns(results.scenarios)
    head = ["verdict", "scenario", "passes/judged", "pass@k", "pass^k", "mean composite"]
    head += ["trials", "first failure", "duration", *(f"{SPENT[n][0]} per trial" for n in spent)]
    return table(head, (_verdict_row(i, s, spent) for i, s in enumerate(results.scenarios)))


def _verdict_row(index: int, scenario: ScenarioTrials, spent: list[str]) -> str:
    s = scenario.summary
    verdict = s.verdict.value
    failure = s.first_failure  # on a passing line: an unvalidated judge that did not count
    spans = [scenario.spending.get(name) for name in spent]
    spending = "".join(
        f'<td class="num">{text(spent_text(name, span)) if span else ""}</td>'
        for name, span in zip(spent, spans, strict=True)
    )
    return (
        f'<tr data-verdict="{verdict}"><td class="v v-{verdict}">{verdict}</td>'
        f'<td><a href="#s{index}">{text(s.label)}</a></td><td class="num">{passes(s)}</td>'
        f'<td class="num">{_number(s.pass_at_k)}</td><td class="num">{_number(s.pass_hat_k)}</td>'
        f'<td class="num">{_number(s.mean_composite)}</td><td class="dots">'
        f"{_dots(index, scenario)}</td><td>{text(clip(failure, 400))}</td>"
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
            f"<h3>cell {text(cell)}</h3>{cell_chart(members)}"
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
        f'<h3><span class="v v-{verdict}">{verdict}</span> {text(s.label)}</h3>'
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
        f'<p class="reason" id="{ident}-reason">{text(trial.reason)}</p>' if trial.reason else ""
    )
    body = [reason, _facts(trial), *_evidence(results, trial)]
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
    shown = " · ".join(f"{text(k)} {text(v)}" for k, v in facts.items() if v is not None)
    return f'<p class="dim">{shown}</p>'


def _evidence(results: Results, trial: Trial) -> list[str]:
    parts = []
    if trial.score is not None and trial.score.checks:
        parts.append(f"<h4>Checks</h4>{checks(trial.score.checks)}")
    record = trial.record
    if record is not None:
        parts.append(f"<h4>Conversation</h4>{conversation(record, trial.simulated)}")
        parts.append(f"<h4>Tool calls</h4>{tool_calls(record.tool_calls)}")
    parts.append(f"<h4>Diff</h4>{diff(results.text(trial, 'diff.patch'))}")
    for name, title in _ARTIFACTS:
        said = results.text(trial, name)
        if said:
            parts.append(
                f"<details><summary>{title}</summary><pre>{text(clip(said))}</pre></details>"
            )
    return parts


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
