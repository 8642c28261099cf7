"""The judge's configuration (`[judge]` in sounding.toml) and the checks made before any trial.

The simulated user's model (`[simulator]`) is configured with the same keys: its
configuration is a `JudgeConfig` of another role.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sounding._problems import validation_problems
from sounding.judge._errors import JudgeError

Provider = Literal["openai", "anthropic"]

KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""The environment variable holding each provider's key unless `api_key_env` names another."""

ENV_MODEL = "SOUNDING_JUDGE_MODEL"
ENV_BASE_URL = "SOUNDING_JUDGE_BASE_URL"
DEFAULT_MIN_SAMPLES = 20


class JudgeConfig(BaseModel):
    """Which model judges, where it is served, and how it is asked.

    `base_url` points the `openai` provider at any OpenAI-compatible server (vLLM, Ollama,
    llama.cpp, LiteLLM). The key is never written here: `api_key_env` names the variable
    that holds it. Anthropic's current API takes no sampling parameters, so `temperature`
    and `seed` are sent to `openai` servers only.

    `min_agreement` and `min_samples` say when a judge check may gate: when its agreement
    with people (`sounding agreement`) reached `min_agreement` over at least `min_samples`
    trials. Unset, every judge check gates.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: ClassVar[str] = "judge"  # its table in sounding.toml, and its name in messages
    env_prefix: ClassVar[str] = "SOUNDING_JUDGE"  # ..._MODEL and ..._BASE_URL override
    same_model: ClassVar[str] = "a model grading its own work is not a judge"

    provider: Provider = "openai"
    model: str = Field(min_length=1)
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    seed: int | None = None
    timeout: float = Field(default=60.0, gt=0)
    max_tokens: int | None = Field(default=None, gt=0)
    allow_same_model: bool = False
    cache_dir: Path | None = None
    min_agreement: float | None = Field(default=None, ge=-1.0, le=1.0)
    min_samples: int = Field(default=DEFAULT_MIN_SAMPLES, ge=1)

    @model_validator(mode="after")
    def _agreement_is_the_judges(self) -> JudgeConfig:
        """Only the judge's verdicts are checked against people: another role refuses the keys."""
        given = {"min_agreement", "min_samples"} & self.model_fields_set
        if given and self.role != "judge":
            keys = " and ".join(sorted(given))
            raise ValueError(f"{keys} belong in [judge]: the {self.role} gives no verdicts")
        return self

    @property
    def server(self) -> str | None:
        """The server asked: `base_url` without a trailing `/`, None for the provider's own."""
        return self.base_url.rstrip("/") if self.base_url else None

    @property
    def key_env(self) -> str:
        """The environment variable the key is read from."""
        return self.api_key_env or KEY_ENV[self.provider]

    @classmethod
    def load(
        cls,
        raw: Mapping[str, Any] | None,
        environ: Mapping[str, str] | None = None,
        *,
        root: Path | None = None,
    ) -> JudgeConfig | None:
        """The `[judge]` table with SOUNDING_JUDGE_MODEL / SOUNDING_JUDGE_BASE_URL applied
        (for another role, its own table and variables).

        None when neither the table nor SOUNDING_JUDGE_MODEL names a judge. A relative
        `cache_dir` is taken relative to `root` (the suite folder) when it is given.
        """
        env = os.environ if environ is None else environ
        data = dict(raw or {})
        for key in ("model", "base_url"):
            if value := env.get(f"{cls.env_prefix}_{key.upper()}"):
                data[key] = value
        if not data:
            return None
        try:
            config = cls.model_validate(data)
        except ValidationError as exc:
            raise JudgeError(_describe(cls, exc)) from None
        if root is not None and config.cache_dir is not None:
            config = config.model_copy(update={"cache_dir": root / config.cache_dir})
        return config


def _describe(config: type[JudgeConfig], exc: ValidationError) -> str:
    said = "; ".join(problem.said for problem in validation_problems(exc, config))
    return f"[{config.role}] in sounding.toml: {said}"


def api_key(config: JudgeConfig, environ: Mapping[str, str] | None = None) -> str:
    """The judge's key, or a JudgeError that names the variable and how to set it. A server
    on this machine (`base_url` on 127.0.0.1, ::1 or localhost) needs none: it gets `local`."""
    env = os.environ if environ is None else environ
    key = env.get(config.key_env, "").strip()
    if not key and _on_this_machine(config.base_url):
        return "local"
    if not key:
        raise JudgeError(
            f"the {config.role} ({config.provider} model '{config.model}') needs an API key "
            f"in ${config.key_env}, which is not set: export {config.key_env}=... before "
            f"running, or name another variable with api_key_env in [{config.role}] of "
            "sounding.toml (a local server that checks no key accepts any value: "
            f"{config.key_env}=local)"
        )
    return key


def _on_this_machine(url: str | None) -> bool:
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname if url else None
    return host in ("127.0.0.1", "::1", "localhost")


def _bare(name: str) -> str:
    """A model's name as compared: `openai/gpt-4o:latest` is `gpt-4o`, case aside."""
    return name.strip().casefold().rsplit("/", 1)[-1].removesuffix(":latest")


def preflight(
    config: JudgeConfig,
    *,
    models_under_test: set[str],
    judge_models: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> None:
    """Refuse, before any trial, a judge that has no key or that would grade itself.

    `judge_models` are the per-check `model:` overrides, held to the same rule.
    """
    api_key(config, environ)
    if config.allow_same_model:
        return
    for judge in sorted({config.model, *judge_models}):
        for tested in sorted(models_under_test):
            if _bare(judge) == _bare(tested):
                role = config.role
                raise JudgeError(
                    f"the {role} model '{judge}' is also a model under test ('{tested}'): "
                    f"{config.same_model}. Pin another model in [{role}] (or in the check's "
                    f"model:), or set allow_same_model = true in [{role}] to accept it"
                )
