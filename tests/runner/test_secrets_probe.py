"""A probe that leaks each secret every way it can: no stored file and no report holds one.

The agent prints its secrets, writes them to its trace (plain and in an escaped JSON
string), to files of its workspace (text and bytes), into the trial's SQLite database and
to an HTTP mock; a command check and a custom check quote them back. Then every file
under results/ and every report is searched for the values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

TOKEN = "sk-live-4f9a7c2e91d3"  # an [agent] env secret, by its name
QUOTED = 'pa"ss\\word-77x'  # a secret JSON writes escaped
PASSWORD = "hunter2-db-pass"  # the password of a server URL

AGENT = """
import json, os, sqlite3, sys, urllib.request
sys.stdin.read()
token, quoted = os.environ["API_TOKEN"], os.environ["QUOTED_SECRET"]
server = os.environ.get("SOUNDING_DB_URL", "")
print("my token is", token, "and", quoted, "and", server)
print("stderr", token, file=sys.stderr)
with open(os.environ["SOUNDING_TRACE"], "a") as trace:
    trace.write(json.dumps({"type": "tool_call", "id": "c1", "name": "leak",
                            "args": {"t": token, "q": quoted}}) + "\\n")
    trace.write(json.dumps({"type": "final", "text": "done " + token}) + "\\n")
open("notes.txt", "w").write("the token: " + token + " " + quoted)
open("blob.bin", "wb").write(b"\\0\\1" + token.encode() + b"\\2")
db = sqlite3.connect(os.environ["SOUNDING_NOTES_PATH"])
db.execute("CREATE TABLE leak (v TEXT)")
db.execute("INSERT INTO leak VALUES (?)", (token + " " + quoted,))
db.commit()
request = urllib.request.Request(os.environ["SOUNDING_MOCK_URL"] + "/send?k=" + token,
    data=json.dumps({"secret": token}).encode(), headers={"X-Token": token}, method="POST")
urllib.request.urlopen(request).read()
"""

CASE = """
services:
  - {name: notes, type: sql}
  - {name: mock, type: http_mock, record: true, routes: [{method: POST, path: /send}]}
scenarios:
  - id: leak
    user: leak everything
    expect:
      - command_exit: {command: "cat notes.txt", exit_code: 1}
      - file_content: {path: notes.txt, contains: nothing-like-this}
"""


def test_no_secret_lands_in_any_stored_file_or_report(suite: Any, tmp_path: Path) -> None:
    suite.agent(
        AGENT, extra_config=f"env = {{API_TOKEN = '{TOKEN}', QUOTED_SECRET = '{QUOTED}'}}\n"
    )
    suite.write("cases/leak.yaml", CASE)
    done = suite.run()
    assert done.returncode == 1, done.stdout + done.stderr
    run = suite.runs()[0]
    reports = tmp_path / "reports"
    for option in ("--html", "--markdown", "--json", "--junit"):
        target = reports / f"report{option.replace('--', '.')}"
        made = suite.sounding("report", str(run), option, str(target))
        assert made.returncode == 0, made.stderr
    leaks = {
        path: secret
        for folder in (run, reports)
        for path in folder.rglob("*")
        if path.is_file()
        for secret in (TOKEN, QUOTED, PASSWORD)
        if secret.encode() in path.read_bytes()
    }
    assert leaks == {}, leaks
    assert "[secret API_TOKEN]" in (run / "trials/default/leak/leak#1/stdout.txt").read_text()


def test_the_password_of_a_server_url_reaches_the_agent_but_no_stored_file(
    suite: Any, postgres_url: str
) -> None:
    server = postgres_url.replace(
        "postgresql+psycopg://postgres@", f"postgresql://postgres:{PASSWORD}@"
    )
    suite.agent("import os, sys\nsys.stdin.read()\nprint(os.environ['SOUNDING_DB_URL'])\n")
    toml = (suite.root / "sounding.toml").read_text()
    (suite.root / "sounding.toml").write_text(f'{toml}[services.db]\nserver = "{server}"\n')
    suite.write(
        "cases/url.yaml",
        "services: [{name: db, type: sql}]\n"
        f"scenarios:\n  - {{id: s, user: hi, expect: [{{final_answer_contains: '{PASSWORD}'}}]}}\n",
    )
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr  # the agent had it
    run = suite.runs()[0]
    leaks = [p for p in run.rglob("*") if p.is_file() and PASSWORD.encode() in p.read_bytes()]
    assert leaks == []
    assert "[secret DB_SERVER_PASSWORD]" in (run / "trials/default/url/s#1/stdout.txt").read_text()
