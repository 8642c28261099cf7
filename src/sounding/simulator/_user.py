"""A simulated user: the `[simulator]` model plays the user once a scenario's fixed turns
are said, each of its turns one forced call of `user_turn`.

It is an LLM client like the judge, with the judge's contract: one call per turn (no
retries), its answer read strictly, cached by the digest of the request, so that the same
conversation gets the same user again. Whatever goes wrong with it (prose, bad arguments, an
HTTP error, a timeout) ends the conversation with an `error`: its trial is an error of the
simulator, never a failure of the agent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from sounding._secrets import redact
from sounding.judge import JudgeClient, JudgeConfig, JudgeError, VerdictRequest, verdict_tool
from sounding.spec import Simulation

TURN_TOOL = verdict_tool(
    {"message": "string", "done": "bool"},
    hints={
        "message": "What you say to the assistant now, as the user would write it.",
        "done": "true when your goal is reached or clearly cannot be: the conversation ends "
        "and this message is not sent.",
    },
    description="Say the user's next message. Call this exactly once.",
    tool_name="user_turn",
    caller="the simulator",
)


class SimulatorConfig(JudgeConfig):
    """`[simulator]` in sounding.toml: the keys of `[judge]`, for the model playing users."""

    role: ClassVar[str] = "simulator"
    env_prefix: ClassVar[str] = "SOUNDING_SIMULATOR"
    same_model: ClassVar[str] = (
        "a model playing the user of its own agent answers itself, and its mistakes land "
        "on both sides"
    )


def instructions(simulation: Simulation) -> str:
    """What the simulator is told once: who it plays, what it wants, what it may say."""
    facts = "\n".join(f"- {key}: {json.dumps(value)}" for key, value in simulation.knows.items())
    lines = [
        "You are playing a user who talks to an AI assistant, to test that assistant. Stay in "
        "character; never say you are simulated.",
        f"Who you are: {simulation.persona}" if simulation.persona else "",
        f"Your goal: {simulation.goal}",
        "Facts you know and may give when they are asked for or needed (give no other "
        "identifier, number or detail; asked for one you do not have, say you do not know it):",
        facts or "- none",
        "Each time, call user_turn once with your next message. Set done to true when your "
        "goal is reached, or when it clearly cannot be reached.",
    ]
    return "\n".join(line for line in lines if line)


ANSWER_LIMIT = 4000
"""How much of each answer of the agent the simulator reads: what an agent prints (megabytes,
say) must not make the simulator's requests unbounded."""


def transcript(said: list[str], answers: list[str]) -> str:
    """The conversation so far, as the simulator reads it; an answer past `ANSWER_LIMIT`
    characters is cut, and says so."""
    if not said:
        return "The conversation has not started yet. Write your first message."
    lines = []
    for index, turn in enumerate(said):
        lines.append(f"USER: {turn}")
        if index < len(answers):
            answer = answers[index]
            if len(answer) > ANSWER_LIMIT:
                answer = (
                    f"{answer[:ANSWER_LIMIT]} [... {len(answer) - ANSWER_LIMIT} more characters]"
                )
            lines.append(f"ASSISTANT: {answer}")
    return "The conversation so far:\n\n" + "\n\n".join(lines) + "\n\nWhat do you say next?"


@dataclass
class SimulatedUser:
    """One trial's simulated user: asked for each turn after the fixed ones.

    `next_turn` gives the message to send, or None when the conversation is over: the user
    said `done`, it has taken `max_turns` turns, or it failed (`error` then says why).
    `turns` keeps every turn it took, sent or not, with the provenance of its answer.

    It reads the scenario's own turns (`fixed`) and its own messages, never what a cell
    added to them: every cell meets the same user. Secrets in the agent's answers reach it
    as their markers, as the stored trial holds them.
    """

    client: JudgeClient
    simulation: Simulation
    fixed: list[str] = field(default_factory=list)
    secrets: Mapping[str, str] = field(default_factory=dict)
    lead: str = ""  # what a cell puts before the first turn, when the user says it
    turns: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    def next_turn(self, said: list[str], answers: list[str]) -> str | None:
        if self.error is not None or self.ending in ("done", "max_turns"):
            return None
        own = [*self.fixed, *(turn["message"] for turn in self.turns)]
        request = VerdictRequest(
            system=instructions(self.simulation),
            user=redact(transcript(own, answers), self.secrets),
            tool=TURN_TOOL,
        )
        try:
            verdict = self.client.verdict(request)
        except JudgeError as exc:
            self.error = f"the simulated user gave no turn: {exc}"
            return None
        message, done = str(verdict.values["message"]), bool(verdict.values["done"])
        if not done and not message.strip():
            self.error = "the simulated user gave no turn: user_turn had an empty message"
            return None
        self.turns.append(
            {
                "turn": len(said) + 1,  # the conversation's turn, 1 the first
                "message": message,
                "done": done,
                "provenance": verdict.provenance.model_dump(),
                "cached": verdict.cached,
            }
        )
        if done:
            return None
        return f"{self.lead}{message}" if not said and self.lead else message

    @property
    def ending(self) -> str:
        """How the conversation ended: the user said `done`, it took `max_turns` turns, it
        failed (`error`), or else the agent ended it (a failed turn: `agent`)."""
        if self.error is not None:
            return "error"
        if self.turns and self.turns[-1]["done"]:
            return "done"
        return "max_turns" if len(self.turns) >= self.simulation.max_turns else "agent"
