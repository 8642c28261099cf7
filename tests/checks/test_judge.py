"""`llm_as_judge` with the real `openai` client against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from sounding.checks import CheckContext, CheckResult, Evidence, Status, registry
from sounding.judge import JudgeClient, JudgeConfig
from sounding.record import RunRecord
from sounding.services import ServiceEvidence

ANSWER = "Your refund of $40 for order 7 is on its way. Sorry for the wait."


class Judged:
    """A scripted OpenAI-compatible endpoint: queued answers out, received requests kept."""

    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        self.url = ""

    def calls(self, arguments: str | dict[str, Any]) -> None:
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call = {"id": "c", "type": "function", "function": {"name": "record_verdict"}}
        call["function"]["arguments"] = raw  # type: ignore[index]
        self.answers.append({"role": "assistant", "content": None, "tool_calls": [call]})

    def says(self, text: str) -> None:
        self.answers.append({"role": "assistant", "content": text})

    @property
    def asked(self) -> str:
        """Everything the judge was sent last, as one text."""
        return json.dumps(self.received[-1])


def _handler(judged: Judged) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["content-length"])
            judged.received.append(json.loads(self.rfile.read(length)))
            message = judged.answers.pop(0)
            choice = {"index": 0, "finish_reason": "stop", "message": message}
            body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m"}
            data = json.dumps({**body, "choices": [choice]}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def judged() -> Iterator[Judged]:
    script = Judged()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    script.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield script
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def _judge(judged: Judged) -> JudgeClient:
    config = JudgeConfig(model="judge-model", base_url=judged.url, seed=11, timeout=5)
    return JudgeClient(config, environ={"OPENAI_API_KEY": "k"})


def _evidence(**fields: Any) -> Evidence:
    record = RunRecord(final_answer=fields.pop("final_answer", ANSWER), user_turns=["Refund 7"])
    base: dict[str, Any] = {"record": record, "cell": "cell-gpt-big-prompt-v2", "trial": 2}
    return Evidence(**(base | fields))


def _check(raw: Any, judged: Judged | None, evidence: Evidence | None = None) -> CheckResult:
    check = registry.get("llm_as_judge")
    judge = _judge(judged) if judged is not None else None
    context = CheckContext(evidence=evidence or _evidence(), name="tone", judge=judge)
    return check.run(check.parse(raw), context)


def _verdict(score: float, passed: bool = True, reason: str = "polite") -> dict[str, Any]:
    return {"score": score, "passed": passed, "reason": reason}


CRITERIA = {"criteria": "Polite, names the amount", "pass_threshold": 0.7}


# ---- verdicts -----------------------------------------------------------------------------


def test_a_score_at_the_threshold_passes_with_provenance(judged: Judged) -> None:
    judged.calls(_verdict(0.7, reason="names $40"))
    result = _check(CRITERIA, judged)
    assert result.status is Status.PASSED and result.score == 0.7
    assert result.reason == "judge scored 0.70 (≥ 0.70): names $40"
    assert result.details["judge_passed"] is True
    provenance = result.details["provenance"]
    assert (provenance["model"], provenance["temperature"], provenance["seed"]) == (
        "judge-model",
        0.0,
        11,
    )
    assert len(provenance["digest"]) == 64


def test_a_score_under_the_threshold_fails_whatever_the_judge_said(judged: Judged) -> None:
    judged.calls(_verdict(0.6, passed=True, reason="mostly polite"))
    result = _check(CRITERIA, judged)
    assert result.status is Status.FAILED and result.score == 0.6
    assert result.details["judge_passed"] is True
    assert result.details["judge_reason"] == "mostly polite"


def test_the_request_forces_the_tool_and_carries_no_cell_name(judged: Judged) -> None:
    judged.calls(_verdict(0.9))
    rubric = {"pass": "Apologises", "fail": "Blames the customer"}
    _check({**CRITERIA, "rubric": rubric, "temperature": 0.3}, judged)
    sent = judged.received[-1]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "record_verdict"}}
    assert (sent["temperature"], sent["seed"]) == (0.3, 11)
    system, user = (m["content"] for m in sent["messages"])
    assert "Polite, names the amount" in system and "Apologises" in system
    assert ANSWER in user and "untrusted" in system
    assert "cell-gpt-big-prompt-v2" not in judged.asked
    assert "tone" not in judged.asked


def test_a_model_override_is_asked_and_recorded(judged: Judged) -> None:
    judged.calls(_verdict(0.9))
    result = _check({**CRITERIA, "model": "bigger-judge"}, judged)
    assert judged.received[-1]["model"] == "bigger-judge"
    assert result.details["provenance"]["model"] == "bigger-judge"


def test_the_shorthand_is_the_criteria(judged: Judged) -> None:
    judged.calls(_verdict(0.5))
    assert _check("Is it polite?", judged).status is Status.PASSED  # default threshold 0.5
    assert "Is it polite?" in judged.asked


@pytest.mark.parametrize(
    "answer",
    [
        "prose",
        '{"score": 0.9, "passed": true',
        {"score": 0.9, "passed": True},
        {"score": 9, "passed": True, "reason": "out of ten"},
    ],
)
def test_no_readable_verdict_is_an_error_never_a_fail(judged: Judged, answer: Any) -> None:
    if answer == "prose":
        judged.says("Score: 0.9")
    else:
        judged.calls(answer)
    result = _check(CRITERIA, judged)
    assert result.status is Status.ERROR
    assert result.reason.startswith("the judge")


def test_no_judge_configured_is_an_error_saying_how_to_configure_one() -> None:
    result = _check(CRITERIA, None)
    assert result.status is Status.ERROR
    assert "[judge]" in result.reason and "SOUNDING_JUDGE_MODEL" in result.reason


def test_empty_material_is_an_error_and_the_judge_is_not_asked(judged: Judged) -> None:
    result = _check(CRITERIA, judged, _evidence(final_answer="  \n"))
    assert result.status is Status.ERROR
    assert result.reason.startswith("nothing to judge: input_from 'agent_output' was empty")
    assert judged.received == []


def test_judge_empty_lets_the_rubric_score_empty_material(judged: Judged) -> None:
    judged.calls(_verdict(0.0, passed=False, reason="no answer at all"))
    result = _check({**CRITERIA, "judge_empty": True}, judged, _evidence(final_answer=""))
    assert result.status is Status.FAILED and result.details["input_chars"] == 0


# ---- where the material comes from --------------------------------------------------------


def _material(judged: Judged) -> str:
    return str(judged.received[-1]["messages"][1]["content"])


def test_input_from_stdout(judged: Judged) -> None:
    judged.calls(_verdict(0.9))
    _check({**CRITERIA, "input_from": "stdout"}, judged, _evidence(stdout="printed summary"))
    assert "printed summary" in _material(judged) and ANSWER not in _material(judged)


def test_input_from_a_workspace_file(judged: Judged, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "email.txt").write_text("Dear Ana, refund sent.")
    judged.calls(_verdict(0.9))
    _check({**CRITERIA, "input_from": "out/email.txt"}, judged, _evidence(workspace=tmp_path))
    assert "Dear Ana, refund sent." in _material(judged)


def test_input_from_a_folder_gives_each_file_with_its_name(judged: Judged, tmp_path: Path) -> None:
    drafts = tmp_path / "drafts"
    (drafts / ".git").mkdir(parents=True)
    (drafts / "a.md").write_text("first draft")
    (drafts / "b.md").write_text("second draft")
    (drafts / "logo.png").write_bytes(b"\x89PNG\0\0data")
    (drafts / ".git" / "HEAD").write_text("ref: main")
    judged.calls(_verdict(0.9))
    _check({**CRITERIA, "input_from": "drafts"}, judged, _evidence(workspace=tmp_path))
    material = _material(judged)
    assert "=== drafts/a.md ===\nfirst draft" in material
    assert material.index("drafts/a.md") < material.index("drafts/b.md")
    assert "drafts/logo.png ===\n(binary file, 10 bytes, not shown)" in material
    assert "ref: main" not in material


def test_a_large_folder_is_capped_and_says_so(judged: Judged, tmp_path: Path) -> None:
    for n in range(3):
        (tmp_path / f"part{n}.txt").write_text(str(n) * 45_000)
    judged.calls(_verdict(0.9))
    result = _check({**CRITERIA, "input_from": "."}, judged, _evidence(workspace=tmp_path))
    material = _material(judged)
    assert "=== part0.txt ===" in material and "=== part2.txt ===" not in material
    assert "[1 more file(s) not shown" in material
    assert result.details["input_chars"] < 100_500


def test_a_missing_file_is_an_error_that_suggests_a_gate(judged: Judged, tmp_path: Path) -> None:
    result = _check({**CRITERIA, "input_from": "report.md"}, judged, _evidence(workspace=tmp_path))
    assert result.status is Status.ERROR
    assert "'report.md' does not exist" in result.reason and "file_exists" in result.reason
    assert judged.received == []


def test_without_a_workspace_a_file_is_unjudged(judged: Judged) -> None:
    result = _check({**CRITERIA, "input_from": "report.md"}, judged)
    assert result.status is Status.UNJUDGED


def test_a_symlink_out_of_the_workspace_is_not_read(judged: Judged, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "link.txt").symlink_to(secret)
    result = _check({**CRITERIA, "input_from": "link.txt"}, judged, _evidence(workspace=workspace))
    assert result.status is Status.ERROR and "outside" in result.reason
    assert judged.received == []


def test_input_from_the_last_request_a_service_received(judged: Judged) -> None:
    requests = [{"body": "first mail"}, {"body": {"to": "ana@example.com", "text": "renewal"}}]
    smtp = ServiceEvidence(name="smtp", type="http_mock", details={"requests": requests})
    judged.calls(_verdict(0.9))
    evidence = _evidence(services={"smtp": smtp})
    _check({**CRITERIA, "input_from": "smtp.last_request.body"}, judged, evidence)
    assert '"text": "renewal"' in _material(judged) and "first mail" not in _material(judged)


def test_a_service_that_received_nothing_is_nothing_to_judge(judged: Judged) -> None:
    smtp = ServiceEvidence(name="smtp", type="http_mock", details={"requests": []})
    raw = {**CRITERIA, "input_from": "smtp.last_request.body"}
    result = _check(raw, judged, _evidence(services={"smtp": smtp}))
    assert result.status is Status.ERROR and result.reason.startswith("nothing to judge")


def test_a_service_that_does_not_record_bodies_says_how_to_fix_it(judged: Judged) -> None:
    requests = [{"method": "POST", "path": "/mail"}]
    smtp = ServiceEvidence(
        name="smtp", type="http_mock", details={"record": False, "requests": requests}
    )
    raw = {**CRITERIA, "input_from": "smtp.last_request.body"}
    result = _check(raw, judged, _evidence(services={"smtp": smtp}))
    assert result.status is Status.ERROR and "set record: true" in result.reason


def test_an_unknown_service_is_an_error_naming_the_known_ones(judged: Judged) -> None:
    smtp = ServiceEvidence(name="smtp", type="http_mock")
    raw = {**CRITERIA, "input_from": "mail.last_request.body"}
    result = _check(raw, judged, _evidence(services={"smtp": smtp}))
    assert result.status is Status.ERROR and "(services: smtp)" in result.reason


@pytest.mark.parametrize("source", ["/etc/passwd", "../outside.txt", "a/../../b"])
def test_a_path_outside_the_workspace_is_refused_when_the_suite_loads(source: str) -> None:
    with pytest.raises(ValueError, match="input_from takes agent_output, stdout"):
        registry.get("llm_as_judge").parse({"criteria": "c", "input_from": source})


def test_params_are_checked_when_the_suite_loads() -> None:
    check = registry.get("llm_as_judge")
    assert check.family == "judge"
    for bad in (
        {"criteria": ""},
        {"criteria": "c", "pass_threshold": 1.5},
        {"criteria": "c", "x": 1},
    ):
        with pytest.raises(ValueError):
            check.parse(bad)
    with pytest.raises(ValueError):
        check.parse({"criteria": "c", "rubric": {"pass": "a", "good": "b"}})


def test_a_fifo_is_never_waited_on(judged: Judged, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    judged.calls(_verdict(0.9))
    _check({**CRITERIA, "input_from": "pipe"}, judged, _evidence(workspace=tmp_path))
    assert "(not a readable regular file, not shown)" in _material(judged)
