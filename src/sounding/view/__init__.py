"""`sounding view`: a local web app over a results folder, read-only: the runs, a run's
verdicts and charts, a scenario's trials, a trial's whole record, two runs side by side,
and a run in progress as its trials finish. Needs `sounding[view]` (Starlette, uvicorn)."""

from sounding.view._app import create_app
from sounding.view._index import ViewError
from sounding.view._serve import view_command

__all__ = ["ViewError", "create_app", "view_command"]
