"""`Trace`, the writer, against `load_record`, the reader: one pair."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sounding.record import TRACE_ENV, Trace, load_record


def test_what_trace_writes_load_record_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    ticks = iter(range(1001, 2000))
    with Trace(path, clock=lambda: float(next(ticks))) as trace:
        trace.meta(model="gpt-x", seed=3, variant="b")
        trace.task("Refund order A-1")
        trace.passage("kb-7", "Broken goods are refunded.", source="kb")
        lookup = trace.tool_call("get_order", {"order_id": "A-1"})
        trace.tool_result(lookup, {"status": "broken", "payment": "pay-9"})
        trace.usage(input_tokens=10, output_tokens=2, cost_usd=0.01, model="gpt-x")
        trace.user("go ahead")
        trace.hook("ceiling", "allow", "under 150")
        trace.approval("ap-1", tool="refund", by="lead")
        refund = trace.tool_call("refund", {"payment": "pay-9", "cents": 900}, id="r-1")
        trace.tool_result(refund, "declined", is_error=True)
        trace.audit("http_call", {"host": "pay.example"})
        trace.usage(input_tokens=5, output_tokens=1)
        trace.final("Refund declined.")
    run = load_record(path)
    assert [(c.id, c.name, c.args, c.turn) for c in run.tool_calls] == [
        (lookup, "get_order", {"order_id": "A-1"}, 1),
        ("r-1", "refund", {"payment": "pay-9", "cents": 900}, 2),
    ]
    assert json.loads(run.tool_calls[0].result or "") == {"status": "broken", "payment": "pay-9"}
    assert (run.tool_calls[1].result, run.tool_calls[1].is_error) == ("declined", True)
    assert (run.task, run.user_turns, run.final_answer) == (
        "Refund order A-1",
        ["Refund order A-1", "go ahead"],
        "Refund declined.",
    )
    assert (run.usage.input_tokens, run.usage.output_tokens) == (15, 3)
    assert (run.model, run.seed, run.metadata) == ("gpt-x", 3, {"variant": "b"})
    assert run.passages_returned == {"kb-7"}
    assert run.hooks[0].decision == "allow" and run.approved(run.tool_calls[1])
    assert run.audit[0].details == {"host": "pay.example"}
    assert "pay-9" in run.ids_seen_before(1)
    assert run.duration_ms == pytest.approx(13_000.0)


def test_the_path_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "env.jsonl"
    monkeypatch.setenv(TRACE_ENV, str(path))
    with Trace() as trace:
        assert trace.enabled
        trace.final("ok")
    assert load_record(path).final_answer == "ok"


def test_without_a_path_it_writes_nothing_and_still_gives_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TRACE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with Trace() as trace:
        assert not trace.enabled
        first, second = trace.tool_call("a"), trace.tool_call("b")
        trace.tool_result(first, "x")
        trace.final("done")
    assert first != second
    assert list(tmp_path.iterdir()) == []


def test_each_event_is_on_disk_before_the_next_call(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    trace = Trace(path)
    trace.tool_call("search", {"q": "x"}, id="s1")
    assert load_record(path).tools_called == ["search"]
    trace.close()


def test_a_killed_agent_leaves_every_finished_line_readable(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    agent = (
        "import sys, time\n"
        "from sounding.record import Trace\n"
        "trace = Trace()\n"
        "trace.task('long job')\n"
        "for i in range(3):\n"
        "    call = trace.tool_call('step', {'i': i})\n"
        "    trace.tool_result(call, f'done {i}')\n"
        "trace.tool_call('hang', {})\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    env = {TRACE_ENV: str(path), "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    with subprocess.Popen(
        [sys.executable, "-c", agent], stdout=subprocess.PIPE, env=env, text=True
    ) as process:
        try:
            assert process.stdout is not None and process.stdout.readline() == "ready\n"
        finally:
            process.kill()
            process.wait(timeout=10)
    assert process.returncode == -9
    run = load_record(path)
    assert run.tools_called == ["step", "step", "step", "hang"]
    assert [c.result for c in run.tool_calls] == ["done 0", "done 1", "done 2", None]


def test_an_exception_in_the_block_is_recorded_and_still_raised(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    with pytest.raises(KeyError), Trace(path) as trace:
        trace.task("t")
        raise KeyError("order")
    assert load_record(path).error == "KeyError: 'order'"
    with pytest.raises(ValueError, match="is closed"):
        trace.final("too late")


def test_values_json_cannot_hold_are_written_as_text(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    with Trace(path) as trace:
        trace.tool_call("read", {"path": Path("/tmp/x")}, id="r")
    assert load_record(path).tool_calls[0].args == {"path": "/tmp/x"}


def test_threads_writing_at_once_never_mix_lines(tmp_path: Path) -> None:
    path = tmp_path / "threads.jsonl"

    def work(trace: Trace, worker: int) -> None:
        for i in range(100):
            call = trace.tool_call("work", {"worker": worker, "i": i, "pad": "x" * 500})
            trace.tool_result(call, "ok")

    with Trace(path) as trace:
        threads = [threading.Thread(target=work, args=(trace, w)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    run = load_record(path)
    assert len(run.tool_calls) == 400
    assert all(call.result == "ok" for call in run.tool_calls)
