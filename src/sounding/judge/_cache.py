"""Verdicts kept on disk by the digest of their request, so re-scoring never pays twice."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

CACHE_SCHEMA = "sounding.judge-cache/1"
_DIGEST = re.compile(r"^[0-9a-f]{64}$")


class VerdictCache:
    """One JSON file per request digest under `folder`, written atomically.

    A file that cannot be read back (truncated by hand, another schema) is a miss: the
    judge is asked again and the file replaced.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, digest: str) -> Path:
        if not _DIGEST.match(digest):
            raise ValueError(f"'{digest}' is not a sha256 hex digest")
        return self.folder / f"{digest}.json"

    def get(self, digest: str) -> dict[str, Any] | None:
        try:
            entry = json.loads(self.path(digest).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("schema") != CACHE_SCHEMA:
            return None
        return entry if entry.get("digest") == digest else None

    def put(self, digest: str, entry: dict[str, Any]) -> None:
        from sounding._files import write_json

        self.folder.mkdir(parents=True, exist_ok=True)
        write_json(self.path(digest), {"schema": CACHE_SCHEMA, "digest": digest, **entry})
