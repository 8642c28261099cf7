"""What the `[capture] llm` proxy adds to a model call, and how fast a cassette replays.

1. Latency: a model API on loopback (a child process that answers every chat completion
   at once) is called N times by a client in another child process: directly, then
   through sounding's proxy (served from this process, as it is from `sounding run`),
   each call a fresh request with the conversation of a tool-calling agent. The floor is
   the direct call, in the same run; the figure is the median of (proxied - direct).
2. Replay: a cassette of M calls, each a different request, answered by a replaying proxy
   to a client calling it M times.

    python benchmarks/bench_proxy.py [--calls 500] [--cassette 1000]

Targets: the proxy adds at most 2 ms per call at the median; M = 1,000 replays in at most
1 s (the client's own time included).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from _bench import BenchError, figure, heading, target

from sounding.services import LlmProxy
from sounding.services._llm_proxy import request_key

ADDED_MS_TARGET = 2.0
REPLAY_TARGET_S = 1.0

UPSTREAM = """
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
ANSWER = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "It has shipped."}}],
    "usage": {"prompt_tokens": 90, "completion_tokens": 5}}).encode()
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)
    def log_message(self, *args):
        pass
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""

CLIENT = """
import json, sys, time
import httpx
base, calls = sys.argv[1], int(sys.argv[2])
with httpx.Client() as client:
    times = []
    for n in range(calls):
        body = {"model": "m", "messages": [
            {"role": "system", "content": "You look orders up. " * 20},
            {"role": "user", "content": f"Where is my order A-{n}?"}]}
        started = time.perf_counter()
        answer = client.post(f"{base}/chat/completions", json=body)
        times.append(time.perf_counter() - started)
        assert answer.status_code == 200, answer.text
print(json.dumps(times))
"""


def client_times(base: str, calls: int) -> list[float]:
    """Seconds of each call the client child made to `base`."""
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, base, str(calls)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise BenchError(f"the client failed:\n{done.stderr}")
    times: list[float] = json.loads(done.stdout)
    return times


def latency(calls: int) -> None:
    heading(f"bench_proxy: {calls} chat completions, direct and through the proxy")
    upstream = subprocess.Popen([sys.executable, "-c", UPSTREAM], stdout=subprocess.PIPE, text=True)
    try:
        assert upstream.stdout is not None
        direct_url = f"http://127.0.0.1:{upstream.stdout.readline().strip()}/v1"
        with LlmProxy({"openai": direct_url}) as proxy:
            proxied_url = proxy.env()["OPENAI_BASE_URL"]
            client_times(direct_url, 20)  # warm both paths up
            client_times(proxied_url, 20)
            direct = client_times(direct_url, calls)
            proxied = client_times(proxied_url, calls)
            kept = len(proxy.exchanges())
    finally:
        upstream.kill()
        upstream.wait()
    if kept != calls + 20:
        raise BenchError(f"the proxy kept {kept} exchanges of {calls + 20}")
    low, high = statistics.median(direct) * 1000, statistics.median(proxied) * 1000
    figure("direct call, median", f"{low:.2f} ms")
    figure("through the proxy, median", f"{high:.2f} ms")
    figure("ratio proxied / direct", f"{high / low:.2f}")
    target("added by the proxy, median", high - low <= ADDED_MS_TARGET, f"{high - low:.2f} ms")


def replay(size: int) -> None:
    heading(f"bench_proxy: a cassette of {size} calls, replayed")
    cassette = []
    for n in range(size):
        body = {
            "model": "m",
            "messages": [
                {"role": "system", "content": "You look orders up. " * 20},
                {"role": "user", "content": f"Where is my order A-{n}?"},
            ],
        }
        raw = json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})
        key = request_key("/chat/completions", body)
        cassette.append({"key": key, "status": 200, "content_type": "application/json", "raw": raw})
    with LlmProxy({}, replay=cassette) as proxy:
        started = time.perf_counter()
        client_times(proxy.env()["OPENAI_BASE_URL"], size)
        seconds = time.perf_counter() - started
        if proxy.unanswered:
            raise BenchError(f"{len(proxy.unanswered)} calls found no answer in the cassette")
    figure("calls answered", f"{size} of {size}")
    target("replayed in", seconds <= REPLAY_TARGET_S, f"{seconds:.2f} s (target <= 1 s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="calls each way")
    parser.add_argument("--cassette", type=int, default=1000, help="calls in the cassette")
    args = parser.parse_args(argv)
    if min(args.calls, args.cassette) < 1:
        parser.error("--calls and --cassette need at least 1")
    try:
        latency(args.calls)
        replay(args.cassette)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
