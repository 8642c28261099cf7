"""The viewer's pages over real runs, through `sounding view` serving on loopback."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

SCRIPT_TAG = "<script>alert(1)</script>"
Viewer = Any
SCENARIO = {"cell": "default", "case": "shop"}

pytestmark = pytest.mark.xdist_group("view")  # one worker: its run is made once


def get(viewer: Viewer, path: str, **query: object) -> httpx.Response:
    url = viewer.url.rstrip("/") + path + ("?" + urlencode(query) if query else "")
    return httpx.get(url, timeout=20)


def rows(page: str, table: str) -> list[str]:
    body = page[page.index(f'<table class="{table}">') :]
    return re.findall(r"<tr[ >].*?</tr>", body[: body.index("</table>")], re.S)[1:]


def test_the_runs_page_lists_each_run_with_its_outcome_totals_and_cost(viewer: Viewer) -> None:
    page = get(viewer, "/").text
    runs = rows(page, "runs")
    assert len(runs) == 2 and 'href="/run/cand"' in runs[0] and 'href="/run/base"' in runs[1]
    assert "failed" in runs[0] and "9 of 9" in runs[0] and "$0.0180" in runs[0]
    assert re.search(r"v-pass\">pass</span> 1 .*v-flaky\">flaky</span> 1 .*fail</span> 1", runs[0])
    assert '<form class="compare" action="/compare"' in page


def test_the_run_page_filters_by_verdict_and_by_check(viewer: Viewer) -> None:
    whole = rows(get(viewer, "/run/base").text, "verdicts")
    verdicts = {
        re.search(r">shop/(\w+)<", r)[1]: re.search(r'data-verdict="(\w+)"', r)[1] for r in whole
    }
    assert verdicts == {"steady": "pass", "wobbly": "flaky", "broken": "fail"}
    failing = rows(get(viewer, "/run/base", verdict="failing").text, "verdicts")
    assert len(failing) == 2 and all("shop/steady" not in r for r in failing)
    check = "expect[0] final_answer_contains"
    by_check = rows(get(viewer, "/run/base", check=check).text, "verdicts")
    assert len(by_check) == 2
    assert rows(get(viewer, "/run/base", cell="other").text, "verdicts") == [
        '<tr><td colspan="9" class="dim">nothing to show</td></tr>'
    ]


def test_the_run_page_draws_the_curve_and_each_rate_with_its_interval(viewer: Viewer) -> None:
    page = get(viewer, "/run/base").text
    assert page.count('<svg class="chart curve"') == 1
    assert "shop/wobbly: 2/3 passed, 0.6667 [" in page
    assert page.count('class="dot v-') == 9


def test_a_trial_shows_its_record_and_agent_text_only_as_text(viewer: Viewer) -> None:
    answer = get(viewer, "/run/base/trial", **SCENARIO, scenario="broken", n=2)
    page = answer.text
    assert "script-src 'self'" in answer.headers["content-security-policy"]
    assert SCRIPT_TAG not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    for section in ("checks", "conversation", "tool-calls", "diff", "stdout", "services"):
        assert f'<section id="{section}">' in page
    calls = rows(page, "calls")
    assert len(calls) == 1 and "issue_refund" in calls[0] and "&quot;order&quot;" in calls[0]
    assert "r-1" in calls[0]  # the result the mock gave
    (request,) = rows(page, "requests")
    assert "POST" in request and "/refunds" in request and "A-7" in request
    assert "+refund noted for broken" in page
    assert "input tokens 102" in page and "agent cost $0.0020" in page
    assert "the answer does not contain &#x27;refunded&#x27;" in page
    assert page.count("<script") == 1  # the shipped one


def test_a_scenario_shows_its_trials_and_the_checks_of_each(viewer: Viewer) -> None:
    page = get(viewer, "/run/base/scenario", **SCENARIO, scenario="wobbly").text
    trials = rows(page, "checks")
    assert [re.search(r'data-verdict="(\w+)"', r)[1] for r in trials] == ["pass", "fail", "pass"]
    assert 'class="s-failed" title="the answer does not contain &#x27;refunded' in trials[1]
    assert '<table class="curve">' in page and page.count('class="dot v-') == 3


def test_two_runs_side_by_side(viewer: Viewer) -> None:
    page = get(viewer, "/compare/base/cand").text
    states = rows(page, "comparison")
    assert len(states) == 4  # three scenarios and the cell
    assert all('data-state="inconclusive"' in row for row in states)
    (wobbly,) = [row for row in states if ">shop/wobbly<" in row]
    assert wobbly.count("2/3 = 0.67") == 2 and "v-flaky" in wobbly
    side = get(viewer, "/compare/base/cand", **SCENARIO, scenario="wobbly", ta=1, tb=2).text
    columns = side[side.index('<div class="side-by-side">') :]
    assert columns.count('<section id="conversation">') == 2
    assert 'trial #1</a> <span class="v v-pass">' in columns
    assert 'trial #2</a> <span class="v v-fail">' in columns
    picked = httpx.get(viewer.url + "compare?a=base&b=cand", timeout=20, follow_redirects=True)
    assert picked.url.path == "/compare/base/cand"


@pytest.mark.parametrize(
    ("path", "query", "status", "message"),
    [
        ("/run/nope", {}, 404, "holds no run &#x27;nope&#x27;: the runs page lists those"),
        ("/run/base/trial", {**SCENARIO, "scenario": "steady", "n": 9}, 404, "planned no trial"),
        ("/run/base/trial", {**SCENARIO, "scenario": "steady", "n": "x"}, 400, "`n` must be"),
        ("/run/base/scenario", {"cell": "default"}, 400, "names no `case`"),
        ("/run/base", {"page": "0"}, 400, "`page` must be a whole number"),
        ("/compare/base/nope", {}, 404, "holds no run &#x27;nope&#x27;"),
    ],
)
def test_a_bad_address_says_what_is_wrong(
    viewer: Viewer, path: str, query: dict[str, object], status: int, message: str
) -> None:
    answer = get(viewer, path, **query)
    assert answer.status_code == status and message in answer.text


def test_a_request_for_another_host_is_refused(viewer: Viewer) -> None:
    answer = httpx.get(viewer.url, headers={"Host": "evil.example"}, timeout=20)
    assert answer.status_code == 400


def test_a_run_in_progress_grows_and_nothing_is_written(
    viewer: Viewer, make_live: Any, files_of: Any
) -> None:
    folder: Path = viewer.folder
    live = make_live(folder / "base", folder / "live")
    trials = live.trials()
    progress = "/api/run/live/progress"
    seen = []
    for trial in trials[:4]:
        live.land(trial)
        before = files_of(folder)
        seen.append(json.loads(get(viewer, progress).text)["finished"])
        page = get(viewer, "/run/live").text
        assert 'data-live="/api/run/live/progress"' in page
        get(viewer, "/")
        get(viewer, "/run/live/trial", **SCENARIO, scenario="broken", n=1)
        assert files_of(folder) == before
    assert seen == [1, 2, 3, 4]
    half = folder / "live" / trials[4].relative_to(folder / "base")
    half.mkdir(parents=True)  # a trial being written: its folder, no trial.json yet
    (half / "stdout.txt").write_text("partial")
    assert json.loads(get(viewer, progress).text)["finished"] == 4
    (half / "trial.json").write_text('{"schema": "sounding.trial/2", "cell"')  # by hand, broken
    page = get(viewer, "/run/live").text
    assert "Not shown" in page and "not readable as JSON" in page
    (half / "trial.json").unlink()
    for name in ("stdout.txt", ""):
        (half / name).unlink() if name else half.rmdir()
    for trial in trials[4:]:
        live.land(trial)
    live.finish()
    done = json.loads(get(viewer, progress).text)
    assert done["live"] is False and done["finished"] == 9 and done["status"] == "failed"
    assert "data-live" not in get(viewer, "/run/live").text


def test_an_adaptive_run_says_how_it_stopped_its_scenarios(
    viewer: Viewer, fresh_suite: Path, sounding: Any
) -> None:
    suite = fresh_suite
    adaptive = ("--until-decided", "--min-rate", "0.5", "--max-trials", "6")
    done = sounding("run", str(suite), "--parallel", "2", *adaptive)
    assert done.returncode == 1, done.stdout + done.stderr  # a flaky and a failing scenario
    (run,) = (suite / "results").iterdir()
    shutil.copytree(run, viewer.folder / "adaptive")
    said = re.search(r"until decided \(.*\n", done.stdout)
    assert said is not None, done.stdout
    page = get(viewer, "/run/adaptive").text
    assert said[0].strip() in page
    assert "until decided" not in get(viewer, "/run/base").text  # a fixed run says nothing
