"""The pieces every page of the viewer is made of: the page around its content, links,
verdicts, numbers and pagers.

Everything a run holds (names, reasons, agent output) is untrusted text: it enters a page
only through `text` (HTML-escaped) or `href` (a URL built from escaped, quoted parts), never
through the script, which reads nothing but `data-` attributes of the page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar
from urllib.parse import quote, urlencode

from sounding.report._trial import text

PAGE_SIZE = 50  # rows of a table per page

VERDICTS = ("pass", "flaky", "fail", "error")

T = TypeVar("T")


def href(*parts: str, **query: object) -> str:
    """An escaped URL of the viewer: `/run/<id>/...` from path parts, with a query."""
    path = "/" + "/".join(quote(part, safe="") for part in parts)
    wanted = {k: str(v) for k, v in query.items() if v not in (None, "")}
    return text(path + ("?" + urlencode(wanted) if wanted else ""))


def scenario_query(key: tuple[str, str, str]) -> dict[str, str]:
    """The query that names a scenario in the viewer's URLs."""
    return dict(zip(("cell", "case", "scenario"), key, strict=True))


def link(url: str, label: object) -> str:
    """A link; `url` comes from `href` (already escaped)."""
    return f'<a href="{url}">{text(label)}</a>'


def verdict(value: str) -> str:
    return f'<span class="v v-{text(value)}">{text(value)}</span>'


def money(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


def number(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def pager(page: int, total: int, base: Mapping[str, object]) -> str:
    """`page` of `total` rows: links to the previous and next page, keeping the filters."""
    pages = max(1, -(-total // PAGE_SIZE))
    if pages == 1:
        return ""

    def to(n: int, label: str) -> str:
        return f'<a href="{text("?" + urlencode(_query(base, n)))}" data-page="{n}">{label}</a>'

    back = to(page - 1, "← previous") if page > 1 else '<span class="dim">← previous</span>'
    ahead = to(page + 1, "next →") if page < pages else '<span class="dim">next →</span>'
    return f'<nav class="pager">{back} page {page} of {pages} ({total:,} rows) {ahead}</nav>'


def _query(base: Mapping[str, object], page: int) -> dict[str, str]:
    return {**{k: str(v) for k, v in base.items() if v not in (None, "")}, "page": str(page)}


def page_of(rows: Sequence[T], page: int) -> Sequence[T]:
    start = (max(page, 1) - 1) * PAGE_SIZE
    return rows[start : start + PAGE_SIZE]


def select(name: str, label: str, options: Iterable[str], chosen: str) -> str:
    """A filter: a `<select>` whose first option, `all`, sets nothing."""
    items = [f'<option value=""{"" if chosen else " selected"}>all</option>']
    for option in options:
        mark = " selected" if option == chosen else ""
        items.append(f'<option value="{text(option)}"{mark}>{text(option)}</option>')
    return f'<label>{text(label)} <select name="{text(name)}">{"".join(items)}</select></label>'


def document(
    title: str,
    body: str,
    *,
    crumbs: Sequence[tuple[str, str]] = (),
    live: str = "",
    stamp: str = "",
) -> str:
    """The whole page: the shipped stylesheet and script, the trail back to the runs, and
    `body`. `live` is the progress URL a page that changes polls (empty: nothing polls);
    the page reloads its content when the `stamp` it answers differs from this one's."""
    trail = " / ".join(link(url, label) for url, label in [(href(""), "runs"), *crumbs])
    poll = f' data-live="{live}" data-stamp="{text(stamp)}"' if live else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text(title)} · sounding view</title>"
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
        '<link rel="stylesheet" href="/static/view.css"></head>'
        f'<body{poll}><header><nav class="crumbs">{trail}</nav></header>'
        f'<main id="main">{body}</main><script src="/static/view.js"></script></body></html>'
    )
