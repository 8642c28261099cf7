"""The scripted simulated user of the airline example: an OpenAI-compatible chat server that
plays each scenario's traveller, with no model, no key and no network.

sounding asks it for every next user turn as it would ask a real model: a system message
(who the user is, `Your goal: ...`, the facts they know as `- key: "value"`), the
conversation so far as the user message, and `user_turn` as the one tool to call. This
server picks the script whose topic appears in the goal, and says the script's line for the
assistant's last answer. Its answers depend on nothing but the request: the same
conversation always gets the same user.

A goal it has no script for is answered in prose, with no tool call, as a model that
ignores `tool_choice` would: sounding makes that trial an error of the simulator.

    python examples/airline/user_server.py [PORT]

PORT defaults to $AIRLINE_USER_PORT, else 8766; 0 takes any free port. The first line it
prints is its address.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

NOT_STARTED = "The conversation has not started yet."


@dataclass(frozen=True)
class Line:
    """What the user says when the assistant's last answer contains `when` (any case)."""

    when: str
    say: str
    done: bool = False  # the goal is reached or lost: the conversation ends, `say` unsent


@dataclass(frozen=True)
class Script:
    """One traveller: the first message, then the first line whose `when` matches."""

    topic: str  # a phrase of the scenario's goal that picks this script
    opening: str  # said when the scenario has no fixed opening turn
    lines: tuple[Line, ...]
    otherwise: Line = Line("", "Sorry, I do not follow. Can you say that again?")


SCRIPTS = (
    Script(
        topic="on time",
        opening="Hello! I fly tomorrow, my very first flight, and I am nervous. Is it on time?",
        lines=(
            Line("reservation number", "Oh, of course: it is {reservation_id}."),
            Line("delayed", "Thank you, that is all I needed to know.", done=True),
            Line("on time", "Thank you, that is all I needed to know.", done=True),
        ),
    ),
    Script(
        topic="next day",
        opening="Hi, I need to change my flight.",
        lines=(
            Line("charged", "I never asked for an upgrade and I will not pay for one.", done=True),
            Line("reservation number", "{reservation_id}. Same trip, one day later, same cabin."),
            Line("Shall I move", "Yes, go ahead."),
            Line("is now on", "Good. That is all.", done=True),
        ),
    ),
    Script(
        topic="Cancel",
        opening="I need to cancel my trip and get my money back.",
        lines=(
            Line("refunded", "Thank you so much, that is a relief.", done=True),
            Line("reservation number", "It is {reservation_id}."),
            Line(
                "not refundable",
                "Please, it is a family emergency: my mother is in hospital. "
                "I really need the money back.",
            ),
            Line("cannot refund", "I understand. Then please cancel it anyway."),
            Line("is cancelled", "I see. Thank you.", done=True),
        ),
    ),
)


def goal_and_facts(system: str) -> tuple[str, dict[str, Any]]:
    """The user's goal and known facts, as sounding's instructions state them."""
    found = re.search(r"^Your goal: (.*)$", system, re.MULTILINE)
    facts = re.findall(r"^- (\w+): (.*)$", system, re.MULTILINE)
    return (found.group(1) if found else ""), {key: json.loads(value) for key, value in facts}


def last_answer(conversation: str) -> str | None:
    """The assistant's last answer in the transcript; None before the conversation starts."""
    if conversation.startswith(NOT_STARTED):
        return None
    blocks = re.split(r"\n\n(?=USER: |ASSISTANT: )", conversation)
    answers = [block for block in blocks if block.startswith("ASSISTANT: ")]
    return answers[-1].removeprefix("ASSISTANT: ") if answers else ""


def next_line(script: Script, answer: str | None) -> Line:
    """The line the script says to the assistant's last answer (the opening before any)."""
    if answer is None:
        return Line("", script.opening)
    for line in script.lines:
        if line.when.lower() in answer.lower():
            return line
    return script.otherwise


def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message of the completion: one `user_turn` call, or prose without a
    script."""
    goal, facts = goal_and_facts(messages[0]["content"])
    script = next((s for s in SCRIPTS if s.topic.lower() in goal.lower()), None)
    if script is None:
        return {"role": "assistant", "content": "Hi there! So, about my flight..."}
    line = next_line(script, last_answer(messages[-1]["content"]))
    arguments = json.dumps({"message": line.say.format(**facts), "done": line.done})
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "user_turn", "arguments": arguments},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def completion(request: dict[str, Any]) -> dict[str, Any]:
    """A chat completion, as an OpenAI-compatible server answers one."""
    message = reply(request["messages"])
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": request["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class Handler(BaseHTTPRequestHandler):
    """POST /v1/chat/completions; every other path is a 404."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path.rstrip("/").endswith("/chat/completions"):
            self.send_json(200, completion(request))
        else:
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    def send_json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass  # quiet: the trials keep what the user said


def port() -> int:
    """The port to listen on: the first argument, else $AIRLINE_USER_PORT, else 8766."""
    if len(sys.argv) > 1:
        return int(sys.argv[1])
    return int(os.environ.get("AIRLINE_USER_PORT", "8766"))


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", port()), Handler)
    print(f"scripted simulated user on http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()
