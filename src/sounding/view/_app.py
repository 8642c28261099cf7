"""The web app: a Starlette application over one results folder, read-only.

Every page is rendered on the server from what `sounding.store` reads; the shipped script
only submits the filters and, on a run in progress, polls its progress and swaps in the
page's new content. Pages carry a Content-Security-Policy that runs no script but the
shipped one, so text from a run can never run as code, even if escaping were missed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sounding.report import RunComparison, compare_runs
from sounding.report._trial import text
from sounding.store import ResultsError, TrialKey
from sounding.view._compare import compare_page
from sounding.view._index import ResultsFolder, RunState, ViewError
from sounding.view._markup import document
from sounding.view._pages import (
    Filters,
    progress,
    run_page,
    runs_page,
    runs_progress,
    scenario_page,
)
from sounding.view._trial import trial_page

STATIC = Path(__file__).resolve().parent / "static"
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_log = logging.getLogger("sounding.view")

Page = Callable[[ResultsFolder, Request], str]


class BadRequest(ValueError):
    """A query the viewer cannot read (a page that is not a number, ...): says which."""


def create_app(root: Path, *, hosts: tuple[str, ...] = LOOPBACK) -> Starlette:
    """The viewer of the results folder `root`. Requests naming another host than `hosts`
    are refused (a page elsewhere cannot reach the viewer through a DNS name it controls);
    `("*",)` accepts any."""
    folder = ResultsFolder(root)
    routes = [
        Route("/", _page(folder, lambda f, r: runs_page(f))),
        Route("/run/{run_id}", _page(folder, _run)),
        Route("/run/{run_id}/scenario", _page(folder, _scenario)),
        Route("/run/{run_id}/trial", _page(folder, _trial)),
        Route("/compare", _pick_comparison),
        Route("/compare/{a}/{b}", _page(folder, _compare)),
        Route("/api/runs", _json(folder, _runs_progress)),
        Route("/api/run/{run_id}/progress", _json(folder, _run_progress)),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))]
    return Starlette(routes=routes, middleware=middleware)


def _page(folder: ResultsFolder, render: Page) -> Callable[[Request], Response]:
    def endpoint(request: Request) -> Response:
        try:
            return _html(render(folder, request))
        except ViewError as exc:
            return _html(_problem("Not found", str(exc)), 404)
        except BadRequest as exc:
            return _html(_problem("Bad request", str(exc)), 400)
        except Exception:  # a fault of the viewer: logged with its traceback, the page says so
            _log.exception("sounding view failed on %s", request.url.path)
            message = "an internal error of sounding view (its traceback is in the terminal)"
            return _html(_problem("Internal error", message + ": please report it"), 500)

    return endpoint


def _html(body: str, status: int = 200) -> HTMLResponse:
    headers = {"Content-Security-Policy": _POLICY, "X-Content-Type-Options": "nosniff"}
    return HTMLResponse(body, status_code=status, headers=headers)


def _problem(title: str, message: str) -> str:
    return document(title, f'<h1>{text(title)}</h1><p class="problem">{text(message)}</p>')


def _json(
    folder: ResultsFolder, answer: Callable[[ResultsFolder, Request], object]
) -> Callable[[Request], Response]:
    def endpoint(request: Request) -> Response:
        try:
            found = answer(folder, request)
        except ViewError as exc:
            return Response(json.dumps({"error": str(exc)}), 404, media_type="application/json")
        return Response(json.dumps(found), media_type="application/json")

    return endpoint


def _number(request: Request, name: str, default: int | None = None) -> int:
    given = request.query_params.get(name)
    if given is None and default is not None:
        return default
    if given is None or not given.isdigit() or int(given) < 1:
        raise BadRequest(f"`{name}` must be a whole number from 1 (given: {given!r}); fix the URL")
    return int(given)


def _text(request: Request, name: str) -> str:
    given = request.query_params.get(name)
    if given is None:
        raise BadRequest(f"the URL names no `{name}`: open it from the run's page")
    return given


def _run(folder: ResultsFolder, request: Request) -> str:
    state = folder.run(request.path_params["run_id"])
    q = request.query_params
    filters = Filters(
        verdict=q.get("verdict", ""),
        case=q.get("case", ""),
        cell=q.get("cell", ""),
        check=q.get("check", ""),
        page=_number(request, "page", 1),
    )
    return run_page(folder, state, filters)


def _scenario_key(request: Request) -> tuple[str, str, str]:
    return (_text(request, "cell"), _text(request, "case"), _text(request, "scenario"))


def _scenario(folder: ResultsFolder, request: Request) -> str:
    state = folder.run(request.path_params["run_id"])
    return scenario_page(folder, state, _scenario_key(request), _number(request, "page", 1))


def _trial(folder: ResultsFolder, request: Request) -> str:
    state = folder.run(request.path_params["run_id"], fresh=False)
    return trial_page(state, TrialKey(*_scenario_key(request), _number(request, "n")))


def _pick_comparison(request: Request) -> Response:
    a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
    if not a or not b:
        return _html(_problem("Bad request", "choose a baseline `a` and a candidate `b`"), 400)
    return RedirectResponse(f"/compare/{quote(a, safe='')}/{quote(b, safe='')}", status_code=303)


def _compare(folder: ResultsFolder, request: Request) -> str:
    states = (folder.run(request.path_params["a"]), folder.run(request.path_params["b"]))
    comparison = folder.comparison(states, _compared)
    chosen = None
    if "scenario" in request.query_params:
        key = _scenario_key(request)
        chosen = (key, _number(request, "ta", 1), _number(request, "tb", 1))
    return compare_page(comparison, states, chosen)


def _compared(states: tuple[RunState, RunState]) -> RunComparison:
    try:
        return compare_runs(states[0].root, states[1].root)
    except ResultsError as exc:
        raise ViewError(str(exc)) from exc


def _run_progress(folder: ResultsFolder, request: Request) -> object:
    return progress(folder.run(request.path_params["run_id"]))


def _runs_progress(folder: ResultsFolder, request: Request) -> object:
    return runs_progress(folder)
