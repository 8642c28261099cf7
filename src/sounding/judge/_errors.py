"""The two ways judging goes wrong: the judge model, or a grader written by the user."""

from __future__ import annotations

from collections.abc import Mapping


class JudgeError(Exception):
    """The judge gave no usable verdict (no key, no answer, prose, a malformed call, ...).

    A check that meets it is an `error`, never a fail and never a pass.
    """


class GraderError(Exception):
    """A grader gave no usable answer: it raised, ran too long, or answered off contract.

    `details` keeps what helps to fix it (the traceback's tail, the end of stderr).
    """

    def __init__(self, message: str, details: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.details = dict(details or {})
