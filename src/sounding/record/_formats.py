"""Record formats: one registry, each format with its name, its signs and its reader.

With no format named, every format looks at the text and may claim it, saying why. The
surest claim decides; equally sure claims of two formats are mixed signals, refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property
from pathlib import Path
from typing import Any

from sounding._files import json_kind, loads
from sounding.record._build import RecordError, closest
from sounding.record._model import RunRecord

NOT_JSON: Any = object()
"""What `Sample.json` is for a text that is not one JSON document."""


class Sign(IntEnum):
    """How surely a text is in a format."""

    SHAPE = 1  # its shape fits (plain text messages): read so when nothing surer claims it
    CONTENT = 2  # something inside belongs to the format (a 'tool_use' block)
    KEY = 3  # a top-level key names the format ('schema', 'resourceSpans', 'traj')


Claim = tuple[Sign, str]


@dataclass
class Sample:
    """A text to read as a record: where it comes from, and its JSON, decoded once."""

    text: str
    source: str
    trace_id: str | None = None

    @cached_property
    def json(self) -> Any:
        """The decoded text, or `NOT_JSON`."""
        try:
            return loads(self.text)
        except json.JSONDecodeError:
            return NOT_JSON

    def document(self, fix: str = "one JSON document, or JSON Lines (.jsonl)") -> Any:
        """The decoded text; a syntax error names its line and column."""
        try:
            return self.json if self.json is not NOT_JSON else loads(self.text)
        except json.JSONDecodeError as exc:
            raise RecordError(
                self.source,
                f"not JSON: {exc.msg}",
                f"fix the JSON there; a record file is {fix}",
                line=exc.lineno,
                column=exc.colno,
            ) from None


Sniff = Callable[[Sample], Claim | None]
Read = Callable[[Sample], RunRecord]
Each = Callable[[Sample], Iterator[tuple[str, "RunRecord | RecordError"]]]


@dataclass(frozen=True)
class RecordFormat:
    """A registered format: how a text shows it (`sniff`), and how it is read."""

    name: str
    title: str
    sniff: Sniff
    read: Read
    suffixes: tuple[str, ...] = ()  # a file with one of these names is in this format
    picks_trace: bool = False  # a trace id picks one trace of a text that holds several
    each: Each | None = None  # reads every trace of a text as a record of its own, by id


class RecordFormats:
    """The one place record formats resolve, in the order they registered."""

    def __init__(self) -> None:
        self._formats: dict[str, RecordFormat] = {}

    def format(
        self,
        name: str,
        *,
        title: str,
        sniff: Sniff,
        suffixes: tuple[str, ...] = (),
        picks_trace: bool = False,
        each: Each | None = None,
    ) -> Callable[[Read], Read]:
        """Register the reader of format `name`; a second registration is refused."""

        def register(read: Read) -> Read:
            if name in self._formats:
                raise ValueError(f"record format '{name}' is registered twice")
            found = RecordFormat(name, title, sniff, read, suffixes, picks_trace, each)
            self._formats[name] = found
            return read

        return register

    def __iter__(self) -> Iterator[RecordFormat]:
        return iter(self._formats.values())

    def names(self) -> tuple[str, ...]:
        return tuple(self._formats)

    def get(self, name: str, source: str) -> RecordFormat:
        """The format of `name`; an unknown name is a RecordError naming the closest."""
        if name in self._formats:
            return self._formats[name]
        fix = f"{closest(name, self.names())}formats: {self.listed()}"
        raise RecordError(source, f"unknown record format '{name}'", fix)

    def named_by(self, path: Path) -> str | None:
        """The format a file's name says (`.jsonl` the event stream's), if any says one."""
        return next((f.name for f in self if path.suffix.lower() in f.suffixes), None)

    def choose(self, sample: Sample, name: str | None) -> RecordFormat:
        """The format `name`, or with none named, the one the text shows."""
        return self.get(name, sample.source) if name is not None else self.detect(sample)[0]

    def detect(self, sample: Sample) -> tuple[RecordFormat, str]:
        """The format whose claim on the text is surest, and why; a RecordError says why
        none is, naming the formats tried."""
        if not sample.text.strip():
            raise RecordError(
                sample.source,
                "empty: no format to detect",
                "an empty trace is read with the format 'jsonl' (the record of an agent that "
                "wrote nothing)",
            )
        claims = [(found, claim) for found in self if (claim := found.sniff(sample))]
        if not claims:
            raise self._unclaimed(sample)
        surest = max(sign for _found, (sign, _why) in claims)
        top = [(found, why) for found, (sign, why) in claims if sign == surest]
        if len(top) > 1:
            mixed = " but ".join(f"{why} ({found.title})" for found, why in top)
            fix = f"pass the format explicitly (one of: {self.listed()})"
            raise RecordError(sample.source, f"cannot tell the format: {mixed}", fix)
        return top[0]

    def _unclaimed(self, sample: Sample) -> RecordError:
        data = sample.document(
            "one JSON document (a stored record, an OpenAI or Anthropic conversation) or "
            "JSON Lines (one event per line)"
        )
        if isinstance(data, dict):
            what = f"an object (its keys: {', '.join(list(data)[:8]) or 'none'})"
        elif isinstance(data, list):
            what = "a list whose items are not all messages, nor all spans"
        else:
            what = f"a JSON {json_kind(data)}"
        problem = f"cannot tell the format: {what} is none of the formats tried ({self.listed()})"
        return RecordError(
            sample.source, problem, "pass the format explicitly if it is one of them"
        )

    def listed(self) -> str:
        return ", ".join(self._formats)
