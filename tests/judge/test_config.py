"""The judge's configuration and the preflight made before any trial."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from sounding.judge import JudgeConfig, JudgeError, preflight
from sounding.judge._config import api_key


def test_defaults_pin_a_deterministic_judge() -> None:
    config = JudgeConfig.model_validate({"model": "gpt-4o-mini"})
    assert (config.provider, config.temperature, config.timeout) == ("openai", 0.0, 60.0)
    assert (config.seed, config.max_tokens, config.allow_same_model) == (None, None, False)
    assert config.key_env == "OPENAI_API_KEY"
    assert JudgeConfig(provider="anthropic", model="claude").key_env == "ANTHROPIC_API_KEY"
    assert JudgeConfig(model="m", api_key_env="MY_KEY").key_env == "MY_KEY"


@pytest.mark.parametrize(
    "raw",
    [
        {"model": "m", "provider": "gemini"},
        {"model": "m", "temperature": 3},
        {"model": "m", "timeout": 0},
        {"model": "m", "modle": "x"},
        {"provider": "openai"},
    ],
)
def test_a_bad_table_is_refused(raw: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        JudgeConfig.model_validate(raw)


def test_load_applies_the_environment_overrides() -> None:
    env = {"SOUNDING_JUDGE_MODEL": "qwen2.5", "SOUNDING_JUDGE_BASE_URL": "http://gpu:8000/v1"}
    config = JudgeConfig.load({"model": "gpt-4o", "cache_dir": "cache"}, env)
    assert config is not None
    assert (config.model, config.base_url, config.cache_dir) == (
        "qwen2.5",
        "http://gpu:8000/v1",
        Path("cache"),
    )


def test_load_takes_a_relative_cache_dir_from_the_suite_folder(tmp_path: Path) -> None:
    config = JudgeConfig.load({"model": "m", "cache_dir": "results/cache"}, {}, root=tmp_path)
    assert config is not None and config.cache_dir == tmp_path / "results" / "cache"
    absolute = JudgeConfig.load({"model": "m", "cache_dir": "/var/cache/j"}, {}, root=tmp_path)
    assert absolute is not None and absolute.cache_dir == Path("/var/cache/j")


def test_load_without_a_judge_is_none_and_the_environment_alone_is_enough() -> None:
    assert JudgeConfig.load(None, {}) is None
    config = JudgeConfig.load(None, {"SOUNDING_JUDGE_MODEL": "llama3"})
    assert config is not None and config.model == "llama3"


def test_load_names_the_table_the_key_and_what_is_allowed() -> None:
    with pytest.raises(
        JudgeError,
        match=r"\[judge\] in sounding.toml: temprature: unknown key .*did you mean .temperature.",
    ):
        JudgeConfig.load({"model": "m", "temprature": 0}, {})


def test_preflight_refuses_a_missing_key_naming_the_variable() -> None:
    config = JudgeConfig(provider="anthropic", model="claude-judge")
    with pytest.raises(JudgeError, match=r"\$ANTHROPIC_API_KEY.*export ANTHROPIC_API_KEY="):
        preflight(config, models_under_test=set(), environ={})
    with pytest.raises(JudgeError, match=r"\$ANTHROPIC_API_KEY"):
        preflight(config, models_under_test=set(), environ={"ANTHROPIC_API_KEY": "  "})
    preflight(config, models_under_test=set(), environ={"ANTHROPIC_API_KEY": "k"})


@pytest.mark.parametrize("host", ["127.0.0.1:8766", "localhost", "[::1]:80"])
def test_a_server_on_this_machine_needs_no_key(host: str) -> None:
    config = JudgeConfig(model="m", base_url=f"http://{host}/v1")
    assert api_key(config, environ={}) == "local"
    assert api_key(config, environ={"OPENAI_API_KEY": "mine"}) == "mine"
    with pytest.raises(JudgeError, match=r"\$OPENAI_API_KEY"):
        api_key(JudgeConfig(model="m", base_url="http://10.0.0.5/v1"), environ={})


def test_preflight_reads_the_named_variable() -> None:
    config = JudgeConfig(model="m", api_key_env="LOCAL_KEY")
    with pytest.raises(JudgeError, match=r"\$LOCAL_KEY"):
        preflight(config, models_under_test=set(), environ={"OPENAI_API_KEY": "k"})
    preflight(config, models_under_test=set(), environ={"LOCAL_KEY": "k"})


@pytest.mark.parametrize("tested", ["gpt-4o", "GPT-4o", "openai/gpt-4o", "gpt-4o:latest"])
def test_preflight_refuses_a_judge_that_is_a_model_under_test(tested: str) -> None:
    config = JudgeConfig(model="gpt-4o")
    with pytest.raises(JudgeError, match=r"is also a model under test.*allow_same_model"):
        preflight(config, models_under_test={tested, "other"}, environ={"OPENAI_API_KEY": "k"})


def test_preflight_holds_per_check_judge_models_to_the_same_rule() -> None:
    env = {"OPENAI_API_KEY": "k"}
    config = JudgeConfig(model="judge")
    preflight(config, models_under_test={"agent-model"}, environ=env)
    with pytest.raises(JudgeError, match="'agent-model' is also a model under test"):
        preflight(
            config, models_under_test={"agent-model"}, judge_models=["agent-model"], environ=env
        )


def test_allow_same_model_accepts_it_knowingly() -> None:
    config = JudgeConfig(model="gpt-4o", allow_same_model=True)
    preflight(config, models_under_test={"gpt-4o"}, environ={"OPENAI_API_KEY": "k"})


def test_agreement_keys_default_to_every_judge_check_gating() -> None:
    config = JudgeConfig.model_validate({"model": "m"})
    assert (config.min_agreement, config.min_samples) == (None, 20)
    set_ = JudgeConfig.model_validate({"model": "m", "min_agreement": 0.6, "min_samples": 5})
    assert (set_.min_agreement, set_.min_samples) == (0.6, 5)


@pytest.mark.parametrize("raw", [{"min_agreement": 1.5}, {"min_samples": 0}])
def test_agreement_keys_out_of_range_are_refused(raw: dict[str, object]) -> None:
    with pytest.raises(JudgeError, match=r"\[judge\] in sounding.toml: min_"):
        JudgeConfig.load({"model": "m", **raw}, {})


def test_the_simulator_takes_no_agreement_keys() -> None:
    from sounding.simulator import SimulatorConfig

    with pytest.raises(JudgeError, match=r"min_agreement belong in \[judge\]: the simulator"):
        SimulatorConfig.load({"model": "m", "min_agreement": 0.6}, {})
