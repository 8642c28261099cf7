"""Reading the documents of a run: each file's `schema` is read first, fields by name.

Every problem is a `ResultsError` that names the file and says how to fix it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from sounding._files import read_json
from sounding._problems import validation_problems
from sounding._words import counted

M = TypeVar("M", bound=BaseModel)


class ResultsError(Exception):
    """A results folder (or one of its files) that cannot be read; says which and how to fix."""


def read_document(path: Path, schemas: tuple[str, ...]) -> dict[str, Any]:
    """The JSON object in `path`, once its `schema` field says it is one this version reads."""
    try:
        document = read_json(path)
    except (OSError, ValueError) as exc:
        raise ResultsError(
            f"{path}: not readable as JSON ({exc}); a run killed while writing never leaves "
            "half a file, so it was changed by hand: restore it or re-run the trial"
        ) from exc
    if not isinstance(document, dict):
        raise ResultsError(f"{path}: expected a JSON object with a `schema` field")
    found = document.get("schema")
    if found not in schemas:
        raise ResultsError(schema_message(path, found, schemas[-1]))
    return document


def schema_message(path: Path, found: Any, schema: str) -> str:
    if found is None:
        return f"{path}: no `schema` field, so this is not a sounding file ({schema} expected)"
    return (
        f"{path}: schema {found!r} is not one this version of sounding reads ({schema}); "
        "read it with the sounding that wrote it, or upgrade sounding"
    )


def validated(model: type[M], path: Path, document: Mapping[str, Any]) -> M:
    """`document` as a `model`, or a ResultsError naming the file and the first bad field."""
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        first = validation_problems(exc, model)[0]
        raise ResultsError(
            f"{path}: {first.said} ({counted(exc.error_count(), 'problem')}); "
            "the file does not match its schema: it was changed by hand, re-run the trial"
        ) from exc
