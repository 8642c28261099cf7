"""Bad input is a clear error, never a traceback: case files, sounding.toml and records,
fuzzed from valid ones (bounded examples), and every crasher found kept as a corpus.

Each loader may only return, or raise its own error (SpecError, SuiteConfigError,
RecordError), which the command line prints with the file and line as exit 2.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
import tomli_w
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sounding.record import RecordError, parse_record
from sounding.runner import SuiteConfigError, load_suite
from sounding.spec import SpecError, load_case

CORPUS = Path(__file__).parent / "fixtures" / "fuzz"
BOUND = 10.0  # seconds one input may take to be read or refused

VALID_CASE: dict[str, Any] = {
    "defaults": {"trials": 2, "timeout": "30s"},
    "workspace": {"byproducts": ["__pycache__"]},
    "scenarios": [
        {
            "id": "refund",
            "user": ["refund order A-1", "thanks"],
            "env": {"MODE": "test"},
            "test_command": "pytest -q",
            "expect": [
                {"tool_called": {"name": "issue_refund", "args": {"order": "A-1"}}},
                {"final_answer_matches": "refund(ed)? [0-9]+"},
            ],
            "invariants": {
                "notes": {"description": "a note", "check": {"type": "file_exists", "path": "n.md"}}
            },
            "forbidden": {"tools_forbidden": ["delete_all"]},
            "scoring": {"pass_threshold": 0.8},
        }
    ],
}
VALID_RECORD = [
    {"type": "user", "text": "where is A-1?"},
    {"type": "tool_call", "id": "c1", "name": "lookup", "args": {"order": "A-1"}},
    {"type": "tool_result", "id": "c1", "result": {"status": "shipped"}},
    {"type": "final", "text": "It has shipped."},
]

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["", "\0", "a{99999999999}", "9" * 5000, "'unclosed", "../..", "~/x"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def _paths(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [here]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*here, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*here, index))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


@st.composite
def mutated(draw: Any, valid: Any) -> Any:
    """A valid document with one to three of its parts replaced by anything."""
    document = valid
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(document)))
        document = _replaced(document, path, draw(values))
    return document


def _bounded(read: Any) -> None:
    started = time.monotonic()
    read()
    assert time.monotonic() - started < BOUND, "reading or refusing took too long"


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=mutated(VALID_CASE), as_toml=st.booleans())
def test_a_fuzzed_case_file_loads_or_is_refused_with_a_spec_error(
    tmp_path: Path, document: Any, as_toml: bool
) -> None:
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")

    def read() -> None:
        try:
            load_case(path)
        except SpecError as exc:
            assert str(exc).startswith(str(path))

    _bounded(read)


OPENAI_RECORD = [
    {"role": "user", "content": "where is A-1?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "shipped"}]},
    {"role": "assistant", "content": "It has shipped."},
]
ANTHROPIC_RECORD = {
    "system": "You look orders up.",
    "messages": [
        {"role": "user", "content": "where is A-1?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "x"}],
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "It has shipped."}]},
    ],
}


def _messages_opened(value: Any, encode: bool = False) -> Any:
    """An OTLP export with its JSON-in-text attributes (gen_ai.input.messages) as values, so
    that they are fuzzed too; `encode` turns them back into text."""
    if isinstance(value, list):
        return [_messages_opened(item, encode) for item in value]
    if not isinstance(value, dict):
        return value
    opened = {k: _messages_opened(v, encode) for k, v in value.items()}
    text = opened.get("stringValue")
    if encode and not isinstance(text, str) and "stringValue" in opened:
        opened["stringValue"] = json.dumps(text)
    elif not encode and isinstance(text, str) and text.startswith("["):
        opened["stringValue"] = json.loads(text)
    return opened


RECORDS = {"jsonl": VALID_RECORD, "openai": OPENAI_RECORD, "anthropic": ANTHROPIC_RECORD}
for _export in ("tool_agent", "event_form"):
    _text = (CORPUS.parent / "otel" / f"{_export}.json").read_text(encoding="utf-8")
    RECORDS[f"otel {_export}"] = _messages_opened(json.loads(_text))


@st.composite
def fuzzed_records(draw: Any) -> tuple[str, str]:
    """A valid record of some format with parts replaced, as text, and its format."""
    seed = draw(st.sampled_from(sorted(RECORDS)))
    document, form = draw(mutated(RECORDS[seed])), seed.split()[0]
    if form == "jsonl" and isinstance(document, list):
        return form, "\n".join(json.dumps(line) for line in document)
    return form, json.dumps(_messages_opened(document, encode=True))


@settings(max_examples=300)
@given(record=fuzzed_records(), sniffed=st.booleans())
def test_a_fuzzed_record_is_read_or_refused_with_a_record_error(
    record: tuple[str, str], sniffed: bool
) -> None:
    form, text = record

    def read() -> None:
        with contextlib.suppress(RecordError):
            parse_record(text, None if sniffed else form, source="fuzzed.json")

    _bounded(read)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=mutated({"agent": {"command": "true", "attempts": 2}, "defaults": {"parallel": 2}}))
def test_a_fuzzed_sounding_toml_loads_or_is_refused(tmp_path: Path, config: Any) -> None:
    try:
        text = tomli_w.dumps(config if isinstance(config, dict) else {"agent": config})
    except (TypeError, ValueError):
        return  # not representable as TOML
    (tmp_path / "sounding.toml").write_text(text, encoding="utf-8")

    def read() -> None:
        with contextlib.suppress(SuiteConfigError):
            load_suite(tmp_path)

    _bounded(read)


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*")), ids=lambda p: p.name)
def test_every_crasher_found_is_now_a_clear_error(path: Path, tmp_path: Path) -> None:
    """Inputs that once made a loader raise something else, or run for ever."""
    if path.suffix in (".jsonl", ".json"):  # `x.anthropic.json`: read as that format
        form = path.suffixes[0][1:] if len(path.suffixes) == 2 else None
        with contextlib.suppress(RecordError):
            _bounded(lambda: parse_record(path.read_text(encoding="utf-8"), form, source=str(path)))
        return
    if path.name.endswith(".sounding.toml"):
        (tmp_path / "sounding.toml").write_bytes(path.read_bytes())
        with pytest.raises(SuiteConfigError):
            _bounded(lambda: load_suite(tmp_path))
        return
    with pytest.raises(SpecError) as caught:
        _bounded(lambda: load_case(path))
    assert str(caught.value).startswith(str(path))
