"""Start-up stays light: database drivers and LLM clients load only when a run needs them.

Each probe runs in a fresh interpreter, since this test process has long imported them all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ["anthropic", "openai", "psycopg", "pymysql", "sqlalchemy"]


def heavy_loaded(code: str, cwd: Path) -> list[str]:
    """The heavy packages a fresh interpreter holds after running `code`."""
    return loaded_modules(code, cwd, HEAVY)


def test_importing_sounding_loads_no_database_driver_or_llm_client(tmp_path: Path) -> None:
    code = "import sounding, sounding.cli, sounding.checks, sounding.spec, sounding.services"
    assert heavy_loaded(code, tmp_path) == []


def test_validating_a_sql_declaration_loads_no_database_driver(tmp_path: Path) -> None:
    (tmp_path / "seed.sql").write_text("CREATE TABLE t (x INTEGER);\n", encoding="utf-8")
    code = (
        "from pathlib import Path\n"
        "from sounding.services import validate_service_specs\n"
        "spec = {'name': 'db', 'type': 'sql', 'seed': 'seed.sql'}\n"
        "assert validate_service_specs([spec], suite_dir=Path('.')) == []\n"
    )
    assert heavy_loaded(code, tmp_path) == []


def test_starting_a_sql_service_loads_sqlalchemy(tmp_path: Path) -> None:
    """The probe sees a late import: SQLAlchemy arrives with the first database."""
    code = (
        "from pathlib import Path\n"
        "from sounding.services import start_services\n"
        "spec = {'name': 'db', 'type': 'sql'}\n"
        "with start_services([spec], trial_dir=Path('trial'), suite_dir=Path('.')) as s:\n"
        "    assert s.env['DATABASE_URL'].startswith('sqlite:///')\n"
    )
    assert "sqlalchemy" in heavy_loaded(code, tmp_path)


def loaded_modules(code: str, cwd: Path, names: list[str]) -> list[str]:
    """Which of `names` a fresh interpreter holds after running `code`."""
    report = f"import json, sys\nprint(json.dumps([n for n in {names!r} if n in sys.modules]))\n"
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{report}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_starting_the_command_line_loads_only_what_every_command_needs(tmp_path: Path) -> None:
    """The runner, services, record importers, reports, YAML and rich load when a command
    uses them, not when the command line starts: `sounding --help` pays for none of them."""
    later = [
        "sounding.runner._run",
        "sounding.services",
        "sounding.validators",
        "sounding.report",
        "sounding.record._otel",
        "sounding.record._openai",
        "sounding.record._anthropic",
        "http.server",
        "rich",
        "yaml",
    ]
    assert loaded_modules("import sounding.cli", tmp_path, later) == []


def test_importing_sounding_builds_no_model_validator(tmp_path: Path) -> None:
    """Every model is built at first use (`sounding._deferred`): none at start-up."""
    code = (
        "import sounding.cli\n"
        "from pydantic import BaseModel\n"
        "def every(cls):\n"
        "    for sub in cls.__subclasses__():\n"
        "        yield sub\n"
        "        yield from every(sub)\n"
        "built = sorted(m.__qualname__ for m in set(every(BaseModel))\n"
        "               if m.__module__.startswith('sounding') and m.__pydantic_complete__)\n"
        "assert not built, built\n"
    )
    assert loaded_modules(code, tmp_path, []) == []


def test_a_run_loads_only_the_parts_its_suite_uses(tmp_path: Path) -> None:
    """No services, no judge, no validators declared: none of their machinery loads."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "sounding.toml").write_text('[agent]\ncallable = "agent:answer"\n')
    (tmp_path / "agent.py").write_text("def answer(prompt, context):\n    return 'ok'\n")
    case = "scenarios:\n  - {id: a, user: hi, expect: [{final_answer_contains: ok}]}\n"
    (tmp_path / "cases" / "c.yaml").write_text(case)
    code = (
        "from sounding.cli import main\n"
        "try:\n"
        "    main(['run', '.'], standalone_mode=False)\n"
        "except SystemExit as stop:\n"
        "    assert stop.code == 0, stop.code\n"
    )
    unused = [
        "sounding.services._set",
        "sounding.services._sql",
        "sounding.judge._client",
        "sounding.validators._form",
        "sounding.validators._program",
        "sounding.report._cells",
    ]
    assert loaded_modules(code, tmp_path, unused) == []
