"""The suite: `sounding.toml` (agent, defaults, output, judge, simulator, services, executor)
and its
case files."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sounding._problems import Locator, validation_problems
from sounding._process import split_command
from sounding._words import did_you_mean
from sounding.record import LIST_PRICES
from sounding.runner._cells import Cell, CellError, CellsConfig, build_cells
from sounding.services import ANTHROPIC_UPSTREAM, OPENAI_UPSTREAM, ServiceSettings
from sounding.spec import SpecError, case_files, read_toml

CONFIG_NAME = "sounding.toml"


class SuiteConfigError(ValueError):
    """`sounding.toml` is missing or wrong; the message says where and how to fix it."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentConfig(_Strict):
    """The agent under test: a command (argv, no shell) or a Python callable `module:function`."""

    command: str | list[str] | None = None
    callable: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    attempts: int = Field(default=3, ge=1, le=20)
    model: str | None = None
    sandbox: Literal["none", "bwrap"] = "none"
    network: Literal["auto", "on", "off"] = "auto"  # in the sandbox; auto: on for services

    @model_validator(mode="after")
    def _one_kind(self) -> AgentConfig:
        if (self.command is None) == (self.callable is None):
            raise ValueError("set exactly one of agent.command or agent.callable")
        if self.callable is not None and ":" not in self.callable:
            raise ValueError(f"agent.callable '{self.callable}' must read 'module:function'")
        if self.callable is not None and self.sandbox != "none":
            raise ValueError(
                "agent.sandbox applies to a command agent: a callable runs inside sounding's "
                "own process; make it a command to sandbox it"
            )
        return self

    @property
    def argv(self) -> list[str]:
        return split_command(self.command or "")


class DefaultsConfig(_Strict):
    parallel: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)  # a trial's budget, input and output
    max_cost_usd: float | None = Field(default=None, gt=0)  # a trial's budget, at [prices]


class OutputConfig(_Strict):
    dir: str = "results"


class PriceConfig(_Strict):
    """What a model costs, in US dollars per million tokens."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class CaptureConfig(_Strict):
    """What sounding records of the agent from outside it."""

    otlp: bool = False  # an OTLP/HTTP receiver for the agent's OpenTelemetry spans
    llm: bool = False  # a proxy to the agent's model API (OpenAI, Anthropic)
    mode: Literal["live", "record", "replay"] = "live"  # of that proxy; `--llm` overrides
    openai_upstream: str = OPENAI_UPSTREAM
    anthropic_upstream: str = ANTHROPIC_UPSTREAM

    @property
    def upstreams(self) -> dict[str, str]:
        return {"openai": self.openai_upstream, "anthropic": self.anthropic_upstream}


class ExecutorConfig(_Strict):
    """Where the trials run (docs/scale.md): threads of this process (`local`), or Ray tasks
    (`ray`) on a Ray instance started for the run or at `address`."""

    kind: Literal["local", "ray"] = "local"
    address: str | None = None  # of a running Ray cluster; else RAY_ADDRESS, else a new one
    num_cpus: float = Field(default=1, gt=0)  # the CPUs each trial's Ray task declares
    # seconds past a trial's timeouts before its Ray task is cancelled (None: 60, or 10 for
    # a callable agent, which nothing else stops)
    grace: float | None = Field(default=None, gt=0)
    # where a Ray worker writes a trial: in place, in a results folder every worker sees at
    # the same path ("shared"), or in a folder of its own, sent back here ("driver")
    artifacts: Literal["shared", "driver"] = "shared"


class SuiteFile(_Strict):
    agent: AgentConfig
    defaults: DefaultsConfig = Field(default_factory=DefaultsConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)
    capture: CaptureConfig = Field(default_factory=CaptureConfig)
    prices: dict[str, PriceConfig] = Field(default_factory=dict)
    judge: dict[str, Any] | None = None
    simulator: dict[str, Any] | None = None  # the model playing simulated users
    services: dict[str, dict[str, Any]] = Field(default_factory=dict)
    cells: CellsConfig = Field(default_factory=CellsConfig)
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)


@dataclass(frozen=True)
class Suite:
    """A suite folder with its validated configuration."""

    root: Path
    config: SuiteFile

    @staticmethod
    def exists(root: Path) -> bool:
        """Whether `root` is a suite folder (it holds sounding.toml)."""
        return (root / CONFIG_NAME).is_file()

    @property
    def prices(self) -> dict[str, tuple[float, float]]:
        """Each model's price per million input and output tokens: the list prices that ship
        with sounding, replaced or added to by `[prices]`."""
        table = self.config.prices
        own = {name: (p.input_per_mtok, p.output_per_mtok) for name, p in table.items()}
        return {**LIST_PRICES, **own}

    @property
    def agent_env(self) -> dict[str, str]:
        """`[agent] env`, with `{suite}` replaced by the suite folder's absolute path."""
        env = self.config.agent.env
        return {key: value.replace("{suite}", str(self.root)) for key, value in env.items()}

    @cached_property
    def cells(self) -> list[Cell]:
        """The cells of `[cells]`, built (and checked) once."""
        return build_cells(self.config.cells)

    @property
    def models_under_test(self) -> set[str]:
        """The agent's model and every cell's: a judge may be none of them."""
        models = {cell.delta.model for cell in self.cells}
        models.add(self.config.agent.model)
        return {model for model in models if model}

    @property
    def reference_cell(self) -> str:
        return self.config.cells.reference or self.cells[0].name

    @property
    def cases_dir(self) -> Path:
        return self.root / "cases"

    @property
    def results_dir(self) -> Path:
        return (self.root / self.config.output.dir).resolve()

    def case_files(self, names: list[str] | None = None) -> list[Path]:
        """Case files by name (file name without folder and extension), or all of them."""
        found = case_files(self.cases_dir)
        if not names:
            return found
        by_name = {p.stem: p for p in found}
        for name in names:
            if name not in by_name:
                hint = did_you_mean(name, by_name)
                raise SuiteConfigError(
                    f"{self.cases_dir}: no case '{name}'{hint} (cases: {', '.join(by_name)})"
                )
        return [by_name[name] for name in names]

    def sql_servers(self) -> dict[str, str]:
        """Server URLs for `sql` services: `[services.<name>] server`, or SOUNDING_SQL_SERVER
        when it is set and not empty."""
        servers = {
            name: str(s["server"]) for name, s in self.config.services.items() if "server" in s
        }
        return ServiceSettings(servers=servers).with_environment(os.environ).servers


def load_suite(path: Path) -> Suite:
    """Read `sounding.toml` from a suite folder; every problem names the file and key."""
    root = path.resolve()
    config_path = root / CONFIG_NAME
    if not config_path.is_file():
        raise SuiteConfigError(
            f"{root}: no {CONFIG_NAME} here; run `sounding init {path}` to make a suite"
        )
    try:
        raw, lines = read_toml(config_path.read_text(encoding="utf-8"), str(config_path))
    except SpecError as exc:
        raise SuiteConfigError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteConfigError(
            f"{config_path}: cannot read it ({exc}): save it as UTF-8 text"
        ) from None
    try:
        suite = Suite(root, SuiteFile.model_validate(raw))
    except ValidationError as exc:
        locator = Locator(str(config_path), lines)
        problems = validation_problems(exc, SuiteFile, (), locator)
        raise SuiteConfigError("\n".join(str(problem) for problem in problems)) from None
    try:
        suite.cells  # noqa: B018 - a typo in a cell fails here, before anything runs
    except CellError as exc:
        raise SuiteConfigError(f"{config_path}: {exc}") from None
    return suite
