"""The judge as checks use it: one forced tool call per request, cached, with provenance."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from sounding._files import read_json, write_json
from sounding.judge._config import JudgeConfig, api_key
from sounding.judge._errors import JudgeError
from sounding.judge._prompt import VerdictRequest
from sounding.judge._providers import ANTHROPIC_MAX_TOKENS, Call, Reply, transport
from sounding.judge._tool import Value, VerdictTool
from sounding.record import Usage

CACHE_SCHEMA = "sounding.judge-cache/1"


class Provenance(BaseModel):
    """Who judged and how, recorded with every verdict; `digest` names the exact request."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: str
    model: str
    temperature: float | None
    seed: int | None
    digest: str


def judged_by(provenance: Any) -> str:
    """`provider/model` of a verdict's provenance as stored (a mapping); empty when it
    names none."""
    if not isinstance(provenance, dict):
        return ""
    provider, model = provenance.get("provider"), provenance.get("model")
    return f"{provider}/{model}" if isinstance(provider, str) and isinstance(model, str) else ""


class Verdict(BaseModel):
    """The judge's answer: one value per declared metric. `cached` when read from disk;
    `usage`, the tokens asking for it spent now (None when cached or not counted)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    values: dict[str, Value]
    provenance: Provenance
    cached: bool = False
    usage: Usage | None = None


class JudgeClient:
    """The configured judge model. Implements `sounding.checks.Judge`.

    Every request is one call (no retries, no votes). Answers are cached under
    `config.cache_dir`, one JSON file per request digest; `rejudge=True` asks again anyway
    and replaces the cached answer. A file that cannot be read back (truncated by hand,
    another schema) is a miss: the judge is asked again and the file replaced.

    `spent` holds the tokens of every call this client made, as the server counted them;
    `metered()` gives each trial a client of its own to count them apart.
    """

    def __init__(
        self,
        config: JudgeConfig,
        *,
        rejudge: bool = False,
        cached_only: bool = False,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.rejudge = rejudge
        self.cached_only = cached_only  # a request the cache cannot answer is a JudgeError
        self._key = api_key(config, environ)
        self._transport = transport(config, self._key)
        self.spent: list[Usage] = []

    def __copy__(self) -> JudgeClient:
        """A shallow copy, sharing the connection (`metered`), not a rebuilt client."""
        twin = object.__new__(JudgeClient)
        twin.__dict__.update(self.__dict__)
        return twin

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled (sent to a Ray worker), a client is its settings and key: the copy opens
        connections of its own and counts its own calls."""
        return (_rebuilt, (self.config, self.rejudge, self.cached_only, self._key))

    def metered(self) -> JudgeClient:
        """The same judge (server, cache, connection) counting its calls in a `spent` of its
        own: what one trial's checks cost, kept apart from the agent's tokens."""
        twin = copy.copy(self)
        twin.spent = []
        return twin

    def verdict(self, request: VerdictRequest) -> Verdict:
        """Ask for one verdict through the request's tool; JudgeError when none comes back."""
        call = self._call(request.system, request.user, request.model, request.temperature)
        provenance = self._provenance(call, request.tool)
        stored = self._recall(provenance.digest)
        if stored is not None:
            # a cached answer that no longer reads is asked for again
            with contextlib.suppress(JudgeError):
                values = request.tool.read(stored.get("values", {}))
                return Verdict(values=values, provenance=provenance, cached=True)
        self._refuse_uncached(provenance.digest)
        reply = self._spend(self._transport.ask_tool(call, request.tool))
        values = request.tool.read(reply.answer)
        self._keep(provenance, values=values)
        return Verdict(values=values, provenance=provenance, usage=reply.usage)

    def text(self, prompt: str) -> str:
        """Ask the judge model a plain question and return its prose (for graders' `t.llm`)."""
        call = self._call(None, prompt, None, None)
        provenance = self._provenance(call, None)
        stored = self._recall(provenance.digest)
        if stored is not None and isinstance(stored.get("text"), str):
            return str(stored["text"])
        self._refuse_uncached(provenance.digest)
        answer = str(self._spend(self._transport.ask_text(call)).answer)
        self._keep(provenance, text=answer)
        return answer

    def _refuse_uncached(self, digest: str) -> None:
        if self.cached_only:
            raise JudgeError(
                f"the {self.config.role} has no cached answer to this request (digest "
                f"{digest[:12]}) in {self.config.cache_dir}, and a replay asks no model: "
                "run once without --llm replay to record its answers"
            )

    def _spend(self, reply: Reply) -> Reply:
        if reply.usage is not None:
            self.spent.append(reply.usage)
        return reply

    def _call(
        self, system: str | None, user: str, model: str | None, temperature: float | None
    ) -> Call:
        config, model = self.config, model or self.config.model
        if config.provider == "anthropic":  # its API refuses sampling parameters
            limit = config.max_tokens or ANTHROPIC_MAX_TOKENS
            return Call(model, None, None, limit, system, user)
        temperature = config.temperature if temperature is None else temperature
        return Call(model, temperature, config.seed, config.max_tokens, system, user)

    def _provenance(self, call: Call, tool: VerdictTool | None) -> Provenance:
        return Provenance(
            provider=self.config.provider,
            model=call.model,
            temperature=call.temperature,
            seed=call.seed,
            digest=request_digest(self.config, call, tool),
        )

    def _recall(self, digest: str) -> dict[str, Any] | None:
        if self.config.cache_dir is None or self.rejudge:
            return None
        try:
            entry = read_json(self.config.cache_dir / f"{digest}.json")
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("schema") != CACHE_SCHEMA:
            return None
        return entry if entry.get("digest") == digest else None

    def _keep(self, provenance: Provenance, **answer: Any) -> None:
        if self.config.cache_dir is None:
            return
        self.config.cache_dir.mkdir(parents=True, exist_ok=True)
        digest = provenance.digest
        entry = {"schema": CACHE_SCHEMA, "digest": digest, "provenance": provenance.model_dump()}
        write_json(self.config.cache_dir / f"{digest}.json", entry | answer)


def request_digest(config: JudgeConfig, call: Call, tool: VerdictTool | None) -> str:
    """sha256 of the exact request and where it goes: provider, server, messages, tool
    schema, model, temperature, seed, limits. Another server is another judge."""
    payload = {
        "provider": config.provider,
        "base_url": config.server,
        "model": call.model,
        "temperature": call.temperature,
        "seed": call.seed,
        "max_tokens": call.max_tokens,
        "messages": call.messages(),
        "tool": None
        if tool is None
        else {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }
    return digest(payload)


def digest(payload: Any) -> str:
    """sha256 of `payload` as canonical JSON: an equal value has the same digest."""
    import hashlib  # OpenSSL loads with the first judged check, not with sounding

    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _rebuilt(config: JudgeConfig, rejudge: bool, cached_only: bool, key: str) -> JudgeClient:
    """A pickled client, unpickled: the same judge, its key given as its variable holds it."""
    return JudgeClient(
        config, rejudge=rejudge, cached_only=cached_only, environ={config.key_env: key}
    )
