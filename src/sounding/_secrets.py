"""Secret values: which variables hold one, and how they are kept out of stored artifacts.

A value the agent leaked is replaced, in every file sounding writes, by a marker naming its
variable (`[secret PAYMENTS_TOKEN]`), so a stored run never holds the secret and a re-score
still sees that it leaked.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

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


def redact_bytes(data: bytes, secrets: Mapping[str, str]) -> bytes:
    """`redact` for the bytes of a file, text or not; a value is also found as JSON writes
    it inside a string."""
    for name, value in sorted(secrets.items(), key=lambda item: -len(item[1])):
        for written in {value, json.dumps(value, ensure_ascii=False)[1:-1]}:
            data = data.replace(written.encode(), marker(name).encode())
    return data


def url_passwords(urls: Mapping[str, str]) -> dict[str, str]:
    """The passwords in server URLs (`postgresql://user:pw@host/db`), as secrets named for
    the URL's key: an agent is given them, a stored file never holds them."""
    found = {}
    for name, url in urls.items():
        password = urlsplit(url).password
        if password:
            found[f"{_variable(name)}_SERVER_PASSWORD"] = unquote(password)
    return found


def _variable(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", name).upper().strip("_") or "SQL"


def redact_sqlite(path: Path, secrets: Mapping[str, str]) -> None:
    """Replace each secret value in every text of a SQLite database the trial kept, then
    rebuild the file (VACUUM), so no page of it holds the old value."""
    if not secrets:
        return
    db = sqlite3.connect(path)
    try:
        with db:
            changed = sum(_redact_column(db, t, c, secrets) for t, c in _columns(db))
        if changed:
            db.execute("VACUUM")
    finally:
        db.close()


def _columns(db: sqlite3.Connection) -> list[tuple[str, str]]:
    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return [
        (table, row[1])
        for table in tables
        if not table.startswith("sqlite_")
        for row in db.execute(f"PRAGMA table_info({_quoted(table)})")
    ]


def _redact_column(
    db: sqlite3.Connection, table: str, column: str, secrets: Mapping[str, str]
) -> int:
    changed = 0
    name_q, column_q = _quoted(table), _quoted(column)
    for name, value in sorted(secrets.items(), key=lambda item: -len(item[1])):
        update = (
            f"UPDATE {name_q} SET {column_q} = replace({column_q}, ?, ?) "
            f"WHERE instr({column_q}, ?) > 0"
        )
        changed += db.execute(update, (value, marker(name), value)).rowcount
    return changed


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
