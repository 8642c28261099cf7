"""The ray executor: the quickstart gives the same verdicts on Ray as on local threads, a
run resumes across executors, and what Ray cannot run yet is refused before any trial.

Ray starts in seconds: the in-process tests share one local instance (the module's
`ray_instance`), and each command-line test starts Ray once. Without Ray installed they
skip, except where SOUNDING_REQUIRE_SERVICES=1 (CI installs it with the dev extra).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sounding.runner import (
    RunHooks,
    RunInterrupted,
    RunOptions,
    SuiteConfigError,
    load_suite,
    prepare_run,
    run_suite,
)
from sounding.scoring import StopRule

ROOT = Path(__file__).resolve().parents[2]


def _need_ray() -> Any:
    """The `ray` package, or a skip naming why (a failure where CI requires it)."""
    try:
        import ray
    except ImportError:
        reason = "Ray is not installed: pip install 'sounding[ray]' to test the ray executor"
        if os.environ.get("SOUNDING_REQUIRE_SERVICES") == "1":
            pytest.fail(f"SOUNDING_REQUIRE_SERVICES=1 but {reason}")
        pytest.skip(reason)
    return ray


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[None]:
    """One local Ray instance for the module's in-process runs (they find it started)."""
    ray = _need_ray()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture
def quickstart(tmp_path: Path) -> Path:
    suite = tmp_path / "quickstart"
    shutil.copytree(ROOT / "examples/quickstart", suite, ignore=shutil.ignore_patterns("results"))
    return suite


def _verdicts(out: str) -> list[str]:
    """The scenario lines of `sounding run`, without their durations."""
    return [re.sub(r"\d+\.\d+s", "", line) for line in out.splitlines()[:3]]


def test_the_quickstart_gives_the_same_verdicts_on_ray(quickstart: Path, sounding: Any) -> None:
    _need_ray()
    local = sounding("run", str(quickstart))
    on_ray = sounding("run", str(quickstart), "--executor", "ray", "--parallel", "2")
    assert on_ray.returncode == local.returncode == 1, on_ray.stdout + on_ray.stderr
    assert _verdicts(on_ray.stdout) == _verdicts(local.stdout)
    assert "12 trials" in on_ray.stdout


def _interrupted_after(first: int) -> RunHooks:
    """Hooks that ask the run to stop once `first` trials have finished."""
    finished: list[object] = []
    return RunHooks(on_trial=finished.append, interrupted=lambda: len(finished) >= first)


@pytest.mark.parametrize(("first", "then"), [("local", "ray"), ("ray", "local")])
def test_a_run_resumes_on_the_other_executor(
    quickstart: Path, ray_instance: None, first: str, then: str
) -> None:
    suite = load_suite(quickstart)
    options = RunOptions(parallel=1, executor=first)
    with pytest.raises(RunInterrupted) as stopped:
        run_suite(suite, options, prepare_run(suite, options), _interrupted_after(2))
    assert stopped.value.root is not None and 2 <= stopped.value.finished < 12
    resumed = RunOptions(parallel=2, executor=then, resume=stopped.value.root.name)
    result = run_suite(suite, resumed, prepare_run(suite, resumed))
    assert result.ran == 12 - stopped.value.finished
    lines = {(s.scenario, s.verdict.value, s.passed) for s in result.summary.scenarios}
    assert lines == {
        ("where-is-my-order", "pass", 4),
        ("refund-after-lookup", "flaky", 1),
        ("refund-over-the-ceiling", "fail", 0),
    }


def test_errors_not_the_agents_run_again_on_ray(quickstart: Path, ray_instance: None) -> None:
    """A trial whose error is not the agent's (a service did not start) runs again, as long
    as `--retry-errors` allows; the tries that erred are set aside under retried/."""
    case = quickstart / "cases/support.yaml"
    broken = '[python3, -c, "raise SystemExit(1)", "{port}"]'  # a service that never starts
    service = f"services:\n  - {{name: api, type: process, command: {broken}, deadline: 2}}\n"
    case.write_text(case.read_text().replace("\nexpect:", f"\n{service}expect:", 1))
    suite = load_suite(quickstart)
    options = RunOptions(executor="ray", retry_errors=2, scenarios=["where-is-my-order"])
    result = run_suite(suite, options, prepare_run(suite, options))
    assert result.ran == 4
    assert result.summary.totals["error"] == 1
    assert len(list(result.layout.root.glob("retried/**/trial.json"))) == 2


def test_what_ray_cannot_run_yet_is_refused_before_any_trial(quickstart: Path) -> None:
    _need_ray()
    suite = load_suite(quickstart)
    options = RunOptions(executor="ray")
    settings = prepare_run(suite, options)
    callable_agent = replace(settings.agent, kind="callable", function=print)
    with pytest.raises(SuiteConfigError, match="callable agent"):
        run_suite(suite, options, replace(settings, agent=callable_agent))
    with pytest.raises(SuiteConfigError, match="--until-decided"):
        run_suite(suite, replace(options, until_decided=StopRule()), settings)
    with pytest.raises(SuiteConfigError, match="--ray-address goes with --executor ray"):
        run_suite(suite, RunOptions(ray_address="127.0.0.1:6379"), settings)
    assert not (quickstart / "results").exists() or not any((quickstart / "results").iterdir())


def test_without_ray_the_executor_names_the_extra(quickstart: Path, tmp_path: Path) -> None:
    """As a missing package looks: `import ray` fails; the run exits 2 before any trial."""
    missing = tmp_path / "no-ray"
    missing.mkdir()
    (missing / "ray.py").write_text("raise ImportError('No module named ray')\n")
    path = os.pathsep.join([str(missing), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    with_toml = quickstart / "sounding.toml"
    with_toml.write_text(with_toml.read_text() + '\n[executor]\nkind = "ray"\n')
    for args in (["--executor", "ray"], []):
        done = subprocess.run(
            [sys.executable, "-m", "sounding.cli", "run", str(quickstart), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert "pip install 'sounding[ray]'" in done.stderr
    assert not (quickstart / "results").exists()
