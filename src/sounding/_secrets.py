"""Secret values: which variables hold one, and how they are kept out of stored artifacts.

A value the agent leaked is replaced, in every file sounding writes, by a marker naming its
variable (`[secret PAYMENTS_TOKEN]`), so a stored run never holds the secret and a re-score
still sees that it leaked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
SECRET_MIN_CHARS = 8
_MARKER = re.compile(r"\[secret ([A-Za-z_][A-Za-z0-9_]*)\]")


def looks_secret(name: str, value: str) -> bool:
    """A variable whose name says key, token, secret or password, with a value of 8+ chars."""
    return len(value) >= SECRET_MIN_CHARS and any(w in name.upper() for w in SECRET_WORDS)


def secret_values(
    environ: Mapping[str, str], named: Iterable[str] = (), among: Iterable[str] | None = None
) -> dict[str, str]:
    """The secret-looking variables of `environ`, and the `named` ones whatever their names;
    only those `among` the given names when that is given (a trial's own additions)."""
    wanted = set(named)
    names = set(environ) if among is None else set(among) | wanted
    return {
        name: environ[name]
        for name in names
        if environ.get(name) and (name in wanted or looks_secret(name, environ[name]))
    }


def marker(name: str) -> str:
    return f"[secret {name}]"


def markers_in(text: str) -> set[str]:
    """Names of the variables whose values were redacted from `text`."""
    return set(_MARKER.findall(text))


def redact(text: str, secrets: Mapping[str, str]) -> str:
    """`text` with every secret value replaced by its marker, longest values first."""
    for name, value in sorted(secrets.items(), key=lambda item: -len(item[1])):
        if value in text:
            text = text.replace(value, marker(name))
    return text


def redact_json(text: str, secrets: Mapping[str, str]) -> str:
    """`redact` for JSON text: a value is found as JSON writes it inside a string (its quotes,
    backslashes and control characters escaped)."""
    return redact(
        text, {name: json.dumps(value, ensure_ascii=False)[1:-1] for name, value in secrets.items()}
    )
