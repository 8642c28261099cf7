"""Before any trial runs: resolve the agent, the judge and the services, or say what is wrong."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sounding._sandbox import unavailable
from sounding.judge import JudgeConfig, JudgeError, preflight
from sounding.runner._agent import load_callable
from sounding.runner._config import CONFIG_NAME, AgentConfig, Suite
from sounding.runner._plan import RunOptions
from sounding.runner._run import resumed_options
from sounding.runner._trial import Agent, TrialSettings
from sounding.services import ServiceSettings, missing_driver

if TYPE_CHECKING:
    from sounding.judge import JudgeClient

JUDGE_CACHE = ".sounding/judge-cache"
SIMULATOR_CACHE = ".sounding/simulator-cache"


class RunSetupError(RuntimeError):
    """The run cannot start; nothing has run yet."""


def prepare_run(suite: Suite, options: RunOptions, agent: Agent | None = None) -> TrialSettings:
    """What every trial of the run shares (the agent, the judge, the services' settings),
    checked before the first trial. `agent` stands in for the suite's own when given
    (`sounding audit` runs others); the suite's is then not resolved."""
    if agent is None:
        agent = make_agent(suite, suite.config.agent)
    judge = make_judge(suite)
    _check_drivers(suite)
    capture = suite.config.capture
    if capture.otlp and importlib.util.find_spec("opentelemetry.proto") is None:
        raise RunSetupError(
            f"{suite.root / CONFIG_NAME}: capture.otlp reads the agent's spans with the "
            "OpenTelemetry protobuf package, which is not installed: pip install 'sounding[otel]'"
        )
    options = resumed_options(suite, options)  # a resumed run goes on as it started
    services = ServiceSettings(keep=options.keep, servers=suite.sql_servers())
    mode = options.llm or capture.mode
    simulator = make_simulator(suite, replay=mode == "replay")
    llm = capture.upstreams if capture.llm or mode != "live" else None
    return TrialSettings(
        agent,
        suite.root,
        judge,
        services,
        capture_otlp=capture.otlp,
        capture_llm=llm,
        llm_mode=mode,
        prices=suite.prices,
        max_tokens=suite.config.defaults.max_tokens,
        max_cost_usd=suite.config.defaults.max_cost_usd,
        simulator=simulator,
    )


def make_judge(suite: Suite, *, rejudge: bool = False) -> JudgeClient | None:
    """The suite's judge (`[judge]` in sounding.toml), refused now if it cannot work later."""
    return _model_client(suite, JudgeConfig, suite.config.judge, JUDGE_CACHE, rejudge=rejudge)


def make_simulator(suite: Suite, *, replay: bool = False) -> JudgeClient | None:
    """The model playing simulated users (`[simulator]`), refused now if it cannot work.
    In a replay (`--llm replay`) it answers from its cache alone: the conversation is
    replayed offline, and a turn it never gave is an error of the simulator."""
    from sounding.simulator import SimulatorConfig

    table = suite.config.simulator
    return _model_client(suite, SimulatorConfig, table, SIMULATOR_CACHE, cached_only=replay)


def _model_client(
    suite: Suite,
    kind: type[JudgeConfig],
    table: dict[str, Any] | None,
    cache: str,
    *,
    rejudge: bool = False,
    cached_only: bool = False,
) -> JudgeClient | None:
    """A model the harness asks (the judge, the simulator) as its table configures it,
    answers cached in the suite; None when the table names none."""
    try:
        config = kind.load(table, root=suite.root)
        if config is None:
            return None
        if config.cache_dir is None:
            config = config.model_copy(update={"cache_dir": suite.root / cache})
        preflight(config, models_under_test=suite.models_under_test)
        from sounding.judge import JudgeClient  # with its LLM clients: only when asked for

        return JudgeClient(config, rejudge=rejudge, cached_only=cached_only)
    except JudgeError as exc:
        raise RunSetupError(f"{suite.root / CONFIG_NAME}: {exc}") from None


def make_agent(suite: Suite, config: AgentConfig, where: str = "") -> Agent:
    """The agent `config` describes, with the suite's `[agent] env`, ready to run; refused
    now if it cannot start. `where` names it in errors (default: `[agent]` of the suite)."""
    where = where or f"{suite.root / CONFIG_NAME}: agent"
    if config.callable is not None:
        try:
            function = load_callable(config.callable, suite.root)
        except (ImportError, AttributeError) as exc:
            raise RunSetupError(
                f"{where}.callable '{config.callable}' cannot be loaded: {exc}"
            ) from None
        return Agent(
            "callable",
            function=function,
            env=suite.agent_env,
            attempts=config.attempts,
            target=config.callable,
        )
    argv = [arg.replace("{suite}", str(suite.root)) for arg in config.argv]
    if not argv:
        raise RunSetupError(f"{where}.command is empty")
    if os.sep not in argv[0] and shutil.which(argv[0]) is None:
        raise RunSetupError(
            f"{where}.command starts with '{argv[0]}', which is not on PATH; give a full "
            "path, or `{suite}/...` for a program inside the suite"
        )
    sandboxed = config.sandbox == "bwrap"
    if sandboxed and (why := unavailable()) is not None:
        raise RunSetupError(
            f'{where}.sandbox = "bwrap" asks for a sandbox, but {why}; a run never falls '
            "back to no sandbox"
        )
    return Agent(
        "command",
        argv,
        env=suite.agent_env,
        attempts=config.attempts,
        sandbox=sandboxed,
        network=config.network,
    )


def callable_agent(suite: Suite, function: Callable[..., Any]) -> Agent:
    """A Python function as the agent under test, in place of the suite's `[agent]`: called
    as `function(prompt, context)` once per turn, with the suite's `[agent] env` (the
    `sounding_run` fixture of the pytest plugin hands its callables over this way)."""
    if not callable(function):
        raise RunSetupError(
            f"the agent {function!r} is not callable: give a function(prompt, context)"
        )
    attempts = suite.config.agent.attempts
    return Agent("callable", function=function, env=suite.agent_env, attempts=attempts)


def _check_drivers(suite: Suite) -> None:
    """A server URL whose database driver is not installed, refused with the extra to install."""
    from_environment = bool(os.environ.get("SOUNDING_SQL_SERVER", "").strip())
    for name, url in suite.sql_servers().items():
        if problem := missing_driver(url):
            where = f"{suite.root / CONFIG_NAME}: services.{name}.server"
            if name == "sql" and from_environment:
                where = "SOUNDING_SQL_SERVER"
            raise RunSetupError(f"{where} is {problem}")
