"""One error type for everything a case file can get wrong: where, what, and how to fix it."""

from __future__ import annotations

from collections.abc import Iterable

from sounding._problems import Problem


class SpecError(Exception):
    """A case file (or several) that cannot be used; `problems` lists every reason found."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = _in_order(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))


def _in_order(problems: Iterable[Problem]) -> list[Problem]:
    """Each problem once, files in the order met, lines in order within a file."""
    unique = list(dict.fromkeys(problems))
    files = list(dict.fromkeys(problem.file for problem in unique))
    return sorted(unique, key=lambda p: (files.index(p.file), p.line is None, p.line or 0))
