"""The two wire protocols a judge speaks: OpenAI-compatible chat, and Anthropic messages.

Each turns one call into one HTTP request through the provider's official client (no
retries: one call, one vote) and every way it can go wrong into a JudgeError. The client
libraries are imported when a judge is built, not when sounding is imported.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sounding.judge._config import JudgeConfig
from sounding.judge._errors import JudgeError
from sounding.judge._tool import VerdictTool
from sounding.record import Usage

ANTHROPIC_MAX_TOKENS = 1024
"""Anthropic requires max_tokens; this is sent when [judge] sets none."""

_SNIPPET = 200


@dataclass(frozen=True)
class Call:
    """Exactly what is sent: the digest of a verdict is computed from this and the tool."""

    model: str
    temperature: float | None
    seed: int | None
    max_tokens: int | None
    system: str | None
    user: str

    def messages(self) -> list[dict[str, str]]:
        system = [{"role": "system", "content": self.system}] if self.system is not None else []
        return [*system, {"role": "user", "content": self.user}]


@dataclass(frozen=True)
class Reply:
    """What came back: the tool's arguments (as text or an object) or the prose, and the
    tokens the call spent when the server said (None when it did not)."""

    answer: Any
    usage: Usage | None


def transport(config: JudgeConfig, key: str) -> Transport:
    if config.provider == "anthropic":
        return AnthropicTransport(config, key)
    return OpenAITransport(config, key)


def _where(config: JudgeConfig) -> str:
    server = config.base_url or "its default address"
    return f"the {config.role} ({config.provider} at {server})"


def _prose(tool: VerdictTool, text: str) -> JudgeError:
    said = repr(text.strip()[:_SNIPPET]) if text.strip() else "nothing"
    return JudgeError(f"{tool.caller} answered without calling {tool.name} (it said {said})")


def _only_call(tool: VerdictTool, names: list[str]) -> None:
    """One call of the verdict tool and nothing else, or a JudgeError saying what came."""
    if names != [tool.name]:
        raise JudgeError(
            f"{tool.caller} made {len(names)} tool call(s) ({', '.join(names)}) instead of "
            f"exactly one call of {tool.name}"
        )


class Transport:
    """What both protocols share: the configuration, the SDK's client, its errors as JudgeErrors."""

    def __init__(
        self, config: JudgeConfig, key: str, sdk: Any, client: Any, base_error: type[Exception]
    ) -> None:
        self._config, self._sdk, self._base_error = config, sdk, base_error
        self._client = client(
            base_url=config.base_url, api_key=key, timeout=config.timeout, max_retries=0
        )

    def ask_tool(self, call: Call, tool: VerdictTool) -> Reply:
        """`answer` is the arguments of the one call of `tool`: text or an object."""
        raise NotImplementedError

    def ask_text(self, call: Call) -> Reply:
        reply = self._text(call)
        if not reply.answer.strip():
            raise JudgeError(f"{_where(self._config)} answered with no text")
        return reply

    def _text(self, call: Call) -> Reply:
        raise NotImplementedError

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """The SDK's failures (both official clients name them alike) as one JudgeError each."""
        sdk, config, where = self._sdk, self._config, _where(self._config)
        try:
            yield
        except sdk.APITimeoutError:
            raise JudgeError(
                f"{where} did not answer within {config.timeout:g} s; "
                "raise timeout in [judge] of sounding.toml, or check that the server is up"
            ) from None
        except sdk.APIStatusError as exc:
            raise JudgeError(f"{where} answered HTTP {exc.status_code}: {_said(exc)}") from None
        except sdk.APIConnectionError as exc:
            raise JudgeError(f"{where} could not be reached: {exc}; check base_url") from None
        except self._base_error as exc:
            raise JudgeError(f"{where} failed: {type(exc).__name__}: {_said(exc)}") from None


class OpenAITransport(Transport):
    """Chat completions on OpenAI or any compatible server; the tool forced by tool_choice."""

    def __init__(self, config: JudgeConfig, key: str) -> None:
        import openai

        super().__init__(config, key, openai, openai.OpenAI, openai.OpenAIError)

    def ask_tool(self, call: Call, tool: VerdictTool) -> Reply:
        function = {"name": tool.name, "description": tool.description}
        tools = [{"type": "function", "function": {**function, "parameters": tool.parameters}}]
        choice = {"type": "function", "function": {"name": tool.name}}
        message, usage = self._complete(call, tools=tools, tool_choice=choice)
        calls = list(message.tool_calls or [])
        if not calls:
            raise _prose(tool, message.content or "")
        functions = [getattr(c, "function", None) for c in calls]
        _only_call(tool, [getattr(f, "name", "(not a function)") for f in functions])
        return Reply(str(getattr(functions[0], "arguments", "")), usage)

    def _text(self, call: Call) -> Reply:
        message, usage = self._complete(call)
        return Reply(str(message.content or ""), usage)

    def _complete(self, call: Call, **extra: Any) -> tuple[Any, Usage | None]:
        options: dict[str, Any] = {"temperature": call.temperature, "seed": call.seed}
        options["max_tokens"] = call.max_tokens
        sent = {k: v for k, v in options.items() if v is not None}
        messages: Any = call.messages()
        with self._errors():
            response = self._client.chat.completions.create(
                model=call.model, messages=messages, **sent, **extra
            )
        if not response.choices:
            raise JudgeError(f"{_where(self._config)} answered with no choices")
        message = response.choices[0].message
        return message, _usage(response, call, "prompt_tokens", "completion_tokens")


class AnthropicTransport(Transport):
    """Anthropic messages; the tool forced by tool_choice {type: tool}. No sampling options."""

    def __init__(self, config: JudgeConfig, key: str) -> None:
        import anthropic

        super().__init__(config, key, anthropic, anthropic.Anthropic, anthropic.AnthropicError)

    def ask_tool(self, call: Call, tool: VerdictTool) -> Reply:
        spec = {"name": tool.name, "description": tool.description}
        tools = [{**spec, "input_schema": tool.parameters}]
        choice = {"type": "tool", "name": tool.name, "disable_parallel_tool_use": True}
        blocks, usage = self._create(call, tools=tools, tool_choice=choice)
        uses = [b for b in blocks if getattr(b, "type", None) == "tool_use"]
        if not uses:
            raise _prose(tool, _text_of(blocks))
        _only_call(tool, [str(getattr(b, "name", "")) for b in uses])
        arguments = getattr(uses[0], "input", None)
        if not isinstance(arguments, Mapping):
            raise JudgeError(f"{tool.caller} called {tool.name} with no object as input")
        return Reply(arguments, usage)

    def _text(self, call: Call) -> Reply:
        blocks, usage = self._create(call)
        return Reply(_text_of(blocks), usage)

    def _create(self, call: Call, **extra: Any) -> tuple[list[Any], Usage | None]:
        if call.system is not None:
            extra["system"] = call.system
        with self._errors():
            response = self._client.messages.create(
                model=call.model,
                max_tokens=call.max_tokens or ANTHROPIC_MAX_TOKENS,
                messages=[{"role": "user", "content": call.user}],
                **extra,
            )
        blocks = list(getattr(response, "content", None) or [])
        return blocks, _usage(response, call, "input_tokens", "output_tokens")


def _usage(response: Any, call: Call, given: str, made: str) -> Usage | None:
    """The tokens the server counted (its usage's fields `given` and `made`), at the model
    that answered; None when it counted none."""
    usage = getattr(response, "usage", None)
    counts = (getattr(usage, given, None), getattr(usage, made, None))
    if not all(isinstance(c, int) and not isinstance(c, bool) for c in counts):
        return None
    model = getattr(response, "model", None)
    return Usage(
        input_tokens=counts[0],
        output_tokens=counts[1],
        model=model if isinstance(model, str) and model else call.model,
    )


def _text_of(blocks: list[Any]) -> str:
    return "\n".join(str(b.text) for b in blocks if getattr(b, "type", None) == "text")


def _said(exc: Exception) -> str:
    return str(exc).strip()[:_SNIPPET] or type(exc).__name__
