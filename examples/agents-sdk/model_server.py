"""A scripted OpenAI-compatible model for the example: offline, no key, the same answers
every time. Asked about an order, it calls `lookup_order` with the id it finds in the
question; given the tool's result, it answers from it.

    python examples/agents-sdk/model_server.py [PORT]    (default 8765; 0 for any free one)
"""

import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def reply(messages: list[dict]) -> dict:
    """The assistant's next message for a conversation."""
    last = messages[-1]
    if last["role"] == "tool":
        order = json.loads(last["content"])
        if "error" in order:
            return {"role": "assistant", "content": "I could not find that order."}
        text = f"Your order is {order['status']} with {order['carrier']}, due {order['eta']}."
        return {"role": "assistant", "content": text}
    question = last["content"] if isinstance(last["content"], str) else json.dumps(last["content"])
    found = re.search(r"[A-Z]-\d{4}", question)
    if found is None:
        return {"role": "assistant", "content": "Which order? Please give its id, like A-1001."}
    arguments = json.dumps({"order_id": found.group()})
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup_order", "arguments": arguments},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        message = reply(request["messages"])
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        body = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": request["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)  # port 0: any free one
    print(f"scripted model on http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()
