"""The answer contract, read strictly: every way off it is a problem in words."""

from __future__ import annotations

import pytest

from sounding.validators import Answer, read_answer

DECLARED = ["in_scope"]


def test_a_full_answer_is_read() -> None:
    text = b'{"metrics": {"in_scope": true, "n": 2}, "reasons": {"n": "two files"}, "unjudged": {}}'
    assert read_answer(text, DECLARED) == Answer({"in_scope": True, "n": 2}, {"n": "two files"})


def test_reasons_and_unjudged_are_optional() -> None:
    assert read_answer(b'{"metrics": {"in_scope": false}}', DECLARED) == Answer({"in_scope": False})


@pytest.mark.parametrize(
    ("stdout", "problem"),
    [
        (b"\xff\xfe", "printed bytes that are not UTF-8 text on stdout"),
        (b"", "printed no JSON object on stdout (Expecting value): ''"),
        (b"[1, 2]", "printed an array, expected an object with 'metrics'"),
        (
            b'{"metric": {}}',
            "answered with unknown key 'metric' (allowed: metrics, reasons, unjudged)",
        ),
        (b'{"reasons": {}}', "answered without 'metrics': print {\"metrics\": {...}}"),
        (b'{"metrics": [true]}', "answered 'metrics' as an array, expected an object"),
        (
            b'{"metrics": {"in_scope": true}, "reasons": {"in_scope": 1}}',
            "answered 'reasons' with a non-string for key 'in_scope'",
        ),
        (
            b'{"metrics": {"in_scope": true}, "unjudged": ["in_scope"]}',
            "answered 'unjudged' as an array, expected an object of strings",
        ),
        (
            b'{"metrics": {"in_scope": true}, "unjudged": {"in_scope": "no tree"}}',
            "returned metric 'in_scope' both as a value and as unjudged: give one or the other",
        ),
        (
            b'{"metrics": {"other": 1}}',
            "did not return the declared metric 'in_scope' (returned: other)",
        ),
    ],
)
def test_an_answer_off_contract_says_what_is_wrong(stdout: bytes, problem: str) -> None:
    assert read_answer(stdout, DECLARED) == problem


def test_several_missing_metrics_are_named_together() -> None:
    found = read_answer(b'{"metrics": {}}', ["a", "b"])
    assert found == "did not return the declared metrics 'a', 'b' (returned: none)"
