"""End to end in headless Chromium (Playwright driving Debian's chromium): a user opens a
run, filters it to its failures, opens a trial and sees its tool calls, compares two runs,
and watches a run in progress gain trials. Every page is screenshotted and checked for
visible errors: no page error, no console error, no error words, not blank."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.chromium, pytest.mark.xdist_group("view")]  # its run made once

ERROR_WORDS = re.compile(r"Traceback|undefined|NaN|Internal error")


class Page:
    """One browser page, with every page error and console error it met."""

    def __init__(self, page: Any, blank: int, shots: Path) -> None:
        self.page, self.blank, self.shots = page, blank, shots
        self.problems: list[str] = []
        page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        page.on("console", self._console)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"console: {message.text}")

    def check(self, name: str) -> None:
        """The page as shown: no error met, no error words, and a screenshot with content
        (several times the size of a blank page's, taken by the same browser)."""
        shot = self.page.screenshot(path=str(self.shots / f"{name}.png"), full_page=True)
        assert self.problems == [], self.problems
        shown = self.page.inner_text("body")
        assert not ERROR_WORDS.search(shown), shown
        assert len(shot) > 3 * self.blank, f"{name}: the screenshot looks blank"


@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=str(chromium), args=["--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, tmp_path: Path) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    raw = context.new_page()
    raw.goto("about:blank")
    blank = len(raw.screenshot())
    yield Page(raw, blank, tmp_path)
    context.close()


def test_open_a_run_filter_to_failures_and_see_a_trial_s_tool_calls(
    viewer: Any, page: Page
) -> None:
    p = page.page
    p.goto(viewer.url)
    page.check("runs")
    p.click("a[href='/run/base']")
    p.wait_for_url("**/run/base")
    assert p.locator("table.verdicts tbody tr").count() == 3
    page.check("run")
    p.select_option("select[name=verdict]", "failing")  # the page submits the filter itself
    p.wait_for_url("**/run/base?*verdict=failing*")
    verdicts = p.locator("table.verdicts tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.verdict)"
    )
    assert sorted(verdicts) == ["fail", "flaky"]
    page.check("run-failing")
    p.click("table.verdicts tr[data-verdict=fail] a.dot >> nth=0")
    p.wait_for_url("**/run/base/trial?*")
    calls = p.locator("#tool-calls tr.call")
    assert calls.count() == 1 and "issue_refund" in calls.inner_text()
    assert '"order": "A-7"' in calls.inner_text()
    assert p.locator("#stdout pre").inner_text().startswith("<script>alert(1)</script>")
    page.check("trial")


def test_open_a_comparison_and_two_trials_side_by_side(viewer: Any, page: Page) -> None:
    p = page.page
    p.goto(viewer.url)
    p.select_option("form.compare select[name=a]", "base")
    p.select_option("form.compare select[name=b]", "cand")
    p.click("form.compare button")
    p.wait_for_url("**/compare/base/cand")
    assert p.locator("table.comparison tbody tr").count() == 4
    page.check("compare")
    p.click("table.comparison a:text('shop/wobbly')")
    p.wait_for_url("**/compare/base/cand?*scenario=wobbly*")
    p.click(".side-b .picker a:text('#2')")
    p.wait_for_url("**tb=2*")
    assert p.locator(".side-by-side .side").count() == 2
    assert "FAIL" in p.locator(".side-b h3").inner_text().upper()
    page.check("compare-side-by-side")


def test_watch_a_run_in_progress_gain_trials(viewer: Any, page: Page, make_live: Any) -> None:
    folder: Path = viewer.folder
    live = make_live(folder / "base", folder / "watched")
    trials = live.trials()
    live.land(trials[0])
    p = page.page
    p.goto(viewer.url + "run/watched")
    assert p.locator("#finished").inner_text() == "1"
    page.check("live-1")
    for n, trial in enumerate(trials[1:4], 2):
        live.land(trial)
        expect(p.locator("#finished")).to_have_text(str(n))  # no eval: the page's CSP forbids it
    assert p.locator("a.dot").count() == 4
    for trial in trials[4:]:
        live.land(trial)
    live.finish()
    expect(p.locator("body[data-live]")).to_have_count(0, timeout=10_000)
    assert p.locator("#finished").inner_text() == "9"
    assert p.locator("svg.curve").count() == 1
    page.check("live-finished")
