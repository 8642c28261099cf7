"""The self-contained HTML page: escaped, offline, and a drill-down per trial that opens."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from sounding.report import html_report, trial_id
from sounding.scoring import TrialScore, TrialVerdict, aggregate
from sounding.store import Results, RunPlan, RunSummary, ScenarioSummary, TrialKey, load_results

WRONG_REASON = (
    "expect[0] final_answer_contains: the answer does not contain '<script>alert(1)</script>'"
)


@pytest.fixture(scope="module")
def page(mixed_run: Path) -> str:
    return html_report(load_results(mixed_run))


def test_the_page_needs_nothing_from_the_network(page: str) -> None:
    assert page.startswith("<!doctype html>")
    assert re.findall(r"https?://[^\s\"'<>]+", page) == ["http://www.w3.org/2000/svg"] * page.count(
        "<svg"
    )
    tags = re.findall(r"<[a-z][^>]*>", page)
    assert not [
        tag for tag in tags if re.search(r"^<(link|img|iframe)\b|\b(src|href)=\"?[^\"#]", tag)
    ]
    assert "@import" not in page and "url(" not in page
    assert page.count("<script>") == 1 and page.count("<style>") == 1


def test_untrusted_text_is_escaped(page: str) -> None:
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(2)&gt;" in page


def test_every_trial_has_a_drill_down_with_its_evidence(mixed_run: Path, page: str) -> None:
    results = load_results(mixed_run)
    for index, scenario in enumerate(results.scenarios):
        for trial in scenario.trials:
            assert f'<details class="trial" id="{trial_id(index, trial)}">' in page
    wrong = page[page.index('id="s1-t1"') : page.index('id="s1-t2"')]
    for heading in ("Checks", "Conversation", "Tool calls", "Diff"):
        assert f"<h4>{heading}</h4>" in wrong
    assert "hello again" in wrong and "+note for wrong" in wrong and "lookup" in wrong


def test_the_charts_draw_each_rate_with_its_interval(page: str) -> None:
    chart = page[page.index("<svg") : page.index("</svg>")]
    assert chart.count("<title>") == 1 + 5  # the chart's own and one per scenario
    assert "basic/flaky-any: 2/3 passed, 0.6667 [" in chart
    assert "basic/broken: no judged trial (3 errored)" in chart
    assert "median cost per trial" in page and "5 errored left out" not in page
    assert "12 judged trials, 3 errored left out" in page
    assert "0/0 (3 errors: 3 agent)" in page and "5 scenarios, 15 of 15 trials finished" in page


def test_each_cell_draws_its_pass_hat_k_curve(page: str) -> None:
    start = page.index('<svg class="chart curve"')
    chart = page[start : page.index("</svg>", start)]
    points = re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', chart)
    assert len(points) == 3  # k = 1, 2, 3
    xs, ys = [float(x) for x, _ in points], [float(y) for _, y in points]
    assert xs == sorted(xs) and ys == sorted(ys)  # k rightwards; pass^k falls, so y grows
    zero, one = (
        float(re.search(rf'y1="([\d.]+)"[^>]*/><text[^>]*>{v}</text>', chart)[1])
        for v in ("0.00", "1.00")
    )
    for y, value in zip(ys, (7 / 12, 5 / 12, 3 / 12), strict=True):
        assert y == pytest.approx(zero + value * (one - zero), abs=0.1)
    assert "<title>k = 2: pass^k 0.417, over 4 scenarios</title>" in chart
    assert re.findall(r">0\.\d{3}<", chart) == [">0.583<", ">0.417<", ">0.250<"]
    table = page[page.index('<table class="curve">') :]
    assert '<td class="num">2</td><td class="num">4</td><td class="num">0.750</td>' in table


def test_a_long_curve_keeps_its_values_in_tooltips(tmp_path: Path) -> None:
    """Twenty trials: twenty points, each value in its tooltip, no label crowding the line."""
    keys = [TrialKey("default", "long", "task", n) for n in range(1, 21)]
    verdicts = [TrialVerdict.PASS] * 15 + [TrialVerdict.FAIL] * 5
    result = aggregate(
        TrialScore(verdict=v, composite=None, threshold=1.0, checks=[]) for v in verdicts
    )
    line = ScenarioSummary(**result.model_dump(), cell="default", case="long", scenario="task")
    plan = RunPlan(run_id="r", suite="suite", trials=keys)
    page = html_report(Results(tmp_path, plan, [], RunSummary(run_id="r", scenarios=[line])))
    start = page.index('<svg class="chart curve"')
    chart = page[start : page.index("</svg>", start)]
    assert chart.count("<circle") == 20 and chart.count("<title>") == 21
    assert "<title>k = 20: pass^k 0.000, over 1 scenario</title>" in chart
    assert f"<title>k = 2: pass^k {105 / 190:.3f}, over 1 scenario</title>" in chart
    assert re.findall(r">0\.\d{3}<", chart) == []  # values in tooltips only
    ticks = re.findall(r'text-anchor="middle">(\d+)</text>', chart)
    assert ticks == [str(k) for k in range(1, 21, 2)]


def test_each_scenario_gives_pass_at_k_and_pass_hat_k_at_every_k(page: str) -> None:
    flaky = page[page.index('id="s3"') : page.index('id="s3-t1"')]
    cells = re.findall(r'<td class="num">([\d.]+)</td>', flaky)
    assert cells == ["0.667", "1.000", "1.000", "0.667", "0.333", "0.000"]
    broken = page[page.index('id="s4"') : page.index('id="s4-t1"')]
    assert '<table class="curve">' not in broken  # nothing judged, no curve


def test_every_check_gets_its_rate_with_an_interval_folded_under_one_line(page: str) -> None:
    folded = re.search(r'<details class="metrics"><summary>(\d+) metrics</summary>', page)
    assert folded, "the metrics table is folded, closed until a reader opens it"
    table = page[page.index('<table class="metrics">') :]
    table = table[: table.index("</table>")]
    assert "expect[0] final_answer_contains: rate" in table
    assert "12 judged trials; 10,000 draws, seed 20260729" in table


@pytest.mark.chromium
def test_the_page_loads_cleanly_and_a_click_opens_a_failing_trial(
    mixed_run: Path, page: str, browser: Any, tmp_path: Path
) -> None:
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    browser.call("Page.navigate", url=path.as_uri())
    browser.wait_for("Page.loadEventFired")
    reason = "document.getElementById('s1-t1-reason')"
    assert browser.evaluate(f"{reason}.checkVisibility()") is False
    browser.click("#s1-t1 > summary")
    assert browser.evaluate(f"{reason}.checkVisibility()") is True
    assert browser.evaluate(f"{reason}.innerText") == WRONG_REASON
    assert browser.evaluate("document.getElementById('s1-t2').open") is False
    problems = [
        e
        for e in browser.events
        if e.get("method") in ("Runtime.exceptionThrown", "Log.entryAdded")
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
    ]
    assert problems == []
    requested = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert requested == [path.as_uri()]


@pytest.mark.chromium
def test_a_link_to_a_trial_opens_it_and_the_filter_hides_passing_rows(
    page: str, browser: Any, tmp_path: Path
) -> None:
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    browser.call("Page.navigate", url=path.as_uri() + "#s3-t2")
    browser.wait_for("Page.loadEventFired")
    assert browser.evaluate("document.getElementById('s3-t2').open") is True
    browser.click("button[data-show=failing]")
    hidden = browser.evaluate(
        "Array.from(document.querySelectorAll('tr[data-verdict]')).map(r => r.hidden)"
    )
    assert hidden == [True, False, False, False, False]


@pytest.mark.chromium
def test_the_browser_harness_does_see_page_errors(browser: Any) -> None:
    browser.call("Page.navigate", url="data:text/html,<script>undefinedFunction()</script>")
    browser.wait_for("Page.loadEventFired")
    thrown = browser.wait_for("Runtime.exceptionThrown")
    assert "undefinedFunction" in str(thrown["params"])


TRACING_AGENT = """
import json, os, sys
prompt = sys.stdin.read().strip()
with open(os.environ["SOUNDING_TRACE"], "a") as trace:
    trace.write(json.dumps({"type": "user", "text": prompt}) + "\\n")
    trace.write(json.dumps({"type": "assistant", "text": "on it"}) + "\\n")
    trace.write(json.dumps({"type": "final", "text": "done"}) + "\\n")
print("done")
"""


def test_the_conversation_shows_each_user_turn_once(tmp_path: Path, sounding: Any) -> None:
    suite = tmp_path / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "agent.py").write_text(TRACING_AGENT)
    (suite / "sounding.toml").write_text(
        f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n'
    )
    (suite / "cases/talk.yaml").write_text(
        "defaults: {trials: 1}\n"
        "scenarios:\n  - {id: s, user: refund order 7, expect: [final_answer_contains: done]}\n"
    )
    done = sounding("run", str(suite))
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = (suite / "results").iterdir()
    page = html_report(load_results(run))
    conversation = page[page.index("<h4>Conversation</h4>") : page.index("<h4>Tool calls</h4>")]
    assert conversation.count("refund order 7") == 1, conversation
    roles = re.findall(r'<span class="role">([^<]*)</span>', conversation)
    assert roles == ["user", "assistant", "assistant", "final answer"]


def test_a_check_is_weighed_over_its_own_scenarios_trials_under_its_name() -> None:
    """Two scenarios whose first expectation is a tool_called of other tools: never one row
    (`expect[0] tool_called` merged), and no scenario counts as unjudged in the other's."""
    from sounding.checks import CheckResult
    from sounding.report._charts import metrics_table
    from sounding.scoring import Kind, Measured
    from sounding.store import Trial

    def trial(scenario: str, number: int, ok: bool) -> Trial:
        result = CheckResult.passed() if ok else CheckResult.failed("no such call")
        name, kind = "expect[0] tool_called", Kind.EXPECT
        check = Measured(name=name, kind=kind, type="tool_called", result=result)
        verdict = TrialVerdict.PASS if ok else TrialVerdict.FAIL
        score = TrialScore(verdict=verdict, composite=1.0, threshold=1.0, checks=[check])
        return Trial(cell="default", case="c", scenario=scenario, trial=number, score=score)

    trials = [trial("lookup", n, True) for n in (1, 2)] + [
        trial("refund", n, False) for n in (1, 2)
    ]
    table = metrics_table(trials)
    assert "c/lookup · expect[0] tool_called: rate</td><td class=num>1.00" in table
    assert "c/refund · expect[0] tool_called: rate</td><td class=num>0.00" in table
    assert table.count(">2 judged trials;") == 2 and ">expect[0] tool_called" not in table
