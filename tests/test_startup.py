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


def test_the_pytest_plugin_loads_nothing_of_sounding_until_a_suite_is_run(tmp_path: Path) -> None:
    """Every pytest session of a project with sounding installed loads the plugin: it costs
    that session pytest's own imports, not sounding's (about 0.3 s)."""
    assert loaded_modules("import pytest_sounding", tmp_path, ["sounding"]) == []


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
