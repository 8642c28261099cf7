"""`sounding score RESULTS_DIR`: today's rules on a stored run, with no agent run again."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest


def _suite(root: Path, calls: Path) -> None:
    (root / "cases").mkdir(parents=True)
    (root / "agent.py").write_text(
        "import os, sys\n"
        f"open({str(calls)!r}, 'a').write('x')\n"
        "prompt = sys.stdin.read()\n"
        "print('the answer is 42' if os.environ['SOUNDING_TRIAL'] != '3' else 'no idea')\n"
    )
    (root / "sounding.toml").write_text(
        f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n'
    )
    (root / "cases/q.yaml").write_text(
        "scenarios:\n  - id: answer\n    user: what is it?\n    trials: 3\n"
        "    expect: [{final_answer_contains: answer}]\n"
    )


def test_rescoring_applies_todays_case_file_and_names_what_flipped(
    tmp_path: Path, sounding: Any
) -> None:
    root, calls = tmp_path / "suite", tmp_path / "calls"
    _suite(root, calls)
    first = sounding("run", str(root))
    assert "FLAKY q/answer  2/3" in first.stdout
    (run,) = (root / "results").iterdir()
    assert len(calls.read_text()) == 3

    same = sounding("score", str(run))
    assert "re-scored 3 trials: 0 verdicts changed" in same.stdout

    case = root / "cases/q.yaml"
    case.write_text(case.read_text().replace("contains: answer", "contains: '42'"))
    changed = sounding("score", str(run), "--json")
    document: dict[str, Any] = json.loads(changed.stdout)
    assert document["schema"] == "sounding.rescore/1"
    assert document["trials"] == 3 and document["changed"] == []

    case.write_text(case.read_text().replace("contains: '42'", "contains: idea"))
    flipped = sounding("score", str(run))
    lines = flipped.stdout.splitlines()
    assert "q/answer#1: fail → pass" not in lines
    assert any(
        line.startswith(
            "q/answer#1: pass → fail  (expect[0] final_answer_contains: passed → failed"
        )
        for line in lines
    ), flipped.stdout
    assert any(line.startswith("q/answer#3: fail → pass") for line in lines)
    assert "re-scored 3 trials: 3 verdicts changed" in flipped.stdout
    assert flipped.returncode == 1
    assert len(calls.read_text()) == 3, "re-scoring ran the agent"


def test_write_stores_the_rescored_run_that_reports_and_compare_read(
    tmp_path: Path, sounding: Any
) -> None:
    root, calls = tmp_path / "suite", tmp_path / "calls"
    _suite(root, calls)
    assert "FLAKY q/answer  2/3" in sounding("run", str(root)).stdout
    (run,) = (root / "results").iterdir()
    case = root / "cases/q.yaml"
    case.write_text(case.read_text().replace("contains: answer", "contains: idea"))
    done = sounding("score", str(run), "--write")
    assert done.returncode == 1, done.stdout + done.stderr
    written = Path(done.stdout.strip().splitlines()[-1].split(": ", 1)[1])
    assert written.parent == run.parent and written != run
    plan = json.loads((written / "run.json").read_text())
    assert plan["rescored_from"] == run.name
    summary = json.loads((written / "summary.json").read_text())
    (line,) = summary["scenarios"]
    assert (line["verdict"], line["passed"]) == ("flaky", 1)  # only trial 3 said "idea"
    assert not list(written.glob("trials/*/*/*/stdout.txt"))  # the evidence stays where it is
    page = tmp_path / "report.html"
    assert sounding("report", str(written), "--html", str(page)).returncode == 0
    assert "no idea" in page.read_text()  # read from the first run's trial folders
    compared = sounding("compare", str(run), str(written), "--json")
    assert json.loads(compared.stdout)["scenarios"][0]["scenario"] == "answer"
    again = sounding("score", str(written), "--write")  # a re-scored run re-scores too
    assert "0 verdicts changed" in again.stdout, again.stdout + again.stderr
    newest = Path(again.stdout.strip().splitlines()[-1].split(": ", 1)[1])
    assert json.loads((newest / "run.json").read_text())["rescored_from"] == run.name
    assert len(calls.read_text()) == 3, "re-scoring ran the agent"


def test_a_folder_that_is_not_a_run_is_a_usage_error(tmp_path: Path, sounding: Any) -> None:
    done = sounding("score", str(tmp_path))
    assert done.returncode == 2 and "not the folder of a run" in done.stderr


def test_a_run_an_older_sounding_wrote_is_rescored_alike(
    tmp_path: Path, sounding: Any, as_older_run: Any
) -> None:
    root, calls = tmp_path / "suite", tmp_path / "calls"
    _suite(root, calls)
    sounding("run", str(root))
    (run,) = (root / "results").iterdir()
    as_older_run(run)  # nested folders, each run record in a record.json of its own
    case = root / "cases/q.yaml"
    case.write_text(case.read_text().replace("contains: answer", "contains: idea"))
    flipped = sounding("score", str(run))
    assert "re-scored 3 trials: 3 verdicts changed" in flipped.stdout, flipped.stdout
    assert len(calls.read_text()) == 3  # the agent never ran again


REFUND_AGENT = """
import json, os, sys
sys.stdin.read()
with open(os.environ["SOUNDING_TRACE"], "a") as trace:
    trace.write(json.dumps({"type": "tool_call", "id": "c1", "name": "issue_refund",
                            "args": {"amount_cents": 24000}}) + "\\n")
    trace.write(json.dumps({"type": "tool_result", "id": "c1", "result": "ok"}) + "\\n")
print("Refunded, thanks for your patience.")
"""
REFUND_CASE = """
scenarios:
  - id: refund
    user: refund my order
    invariants:
      polite: {{description: says thanks, check: {{type: final_answer_contains, text: {word}}}}}
    expect:
      - arg_ceiling: {{name: issue_refund, arg: amount_cents, max: {ceiling}}}
"""


def test_rescoring_names_the_check_that_decided_the_new_verdict(suite: Any) -> None:
    """A tighter ceiling fails the trial; an invariant that also changed (and comes first in
    the case) did not decide it: the blocking expectation did."""
    suite.agent(REFUND_AGENT)
    suite.write("cases/money.yaml", REFUND_CASE.format(word="thanks", ceiling=30000))
    assert suite.run().returncode == 0
    suite.write("cases/money.yaml", REFUND_CASE.format(word="sorry", ceiling=15000))
    (run,) = suite.runs()
    done = suite.sounding("score", str(run))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "money/refund#1: pass → fail  (expect[0] arg_ceiling: passed → failed (call #1" in (
        done.stdout
    ), done.stdout
    # and back: the pass names the check that had decided the fail, as it stands now
    suite.write("cases/money.yaml", REFUND_CASE.format(word="thanks", ceiling=15000))
    assert suite.run().returncode == 1
    failed_run = suite.runs()[-1]
    suite.write("cases/money.yaml", REFUND_CASE.format(word="thanks", ceiling=30000))
    back = suite.sounding("score", str(failed_run))
    assert "money/refund#1: fail → pass  (expect[0] arg_ceiling: failed → passed (every" in (
        back.stdout
    ), back.stdout


JUDGED_CASE = """
scenarios:
  - id: polite
    user: write a polite note
    invariants:
      tone:
        description: the note is polite
        check: {type: llm_as_judge, criteria: Is the note polite?}
"""


def test_scoring_a_record_uses_the_suites_judge(suite: Any, llm_server: Any) -> None:
    judge = f'[judge]\nprovider = "openai"\nbase_url = "{llm_server.url}/v1"\nmodel = "judge-1"\n'
    suite.agent("print('x')", extra_config=judge)
    case = suite.write("cases/note.yaml", JUDGED_CASE)
    record = suite.write("note.jsonl", '{"type": "final", "text": "Dear team, thanks."}\n')
    llm_server.openai_call({"score": 1.0, "passed": True, "reason": "courteous"})
    done = suite.sounding(
        "score", str(case), "--record", str(record), env={**os.environ, "OPENAI_API_KEY": "local"}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert llm_server.hits == 1 and llm_server.last()["model"] == "judge-1"
    assert "Dear team, thanks." in json.dumps(llm_server.last()["messages"])


SERVICE_AGENT = """
import json, os, sys, urllib.request
sys.stdin.read()
body = json.dumps({"to": "ops@example.com"}).encode()
request = urllib.request.Request(os.environ["SOUNDING_MAIL_URL"] + "/send", data=body,
                                 headers={"Authorization": "Bearer t"}, method="POST")
urllib.request.urlopen(request).read()
print("sent")
"""
SERVICE_CASE = """
services:
  - {name: mail, type: http_mock, record: true, routes: [{method: POST, path: /send, status: 202}]}
  - {name: db, type: sql}
scenarios:
  - id: notify
    user: tell ops
    expect:
      - http_mock_assertions:
          service: mail
          assertions: [{field: request_count, filters: {method: POST, path: /send}, equals: 1}]
      - sql: {service: db, query: SELECT 1, equals: 1}
    forbidden:
      http_except: [mail]
      db_writes_outside: []
"""


def test_scoring_a_trial_json_reads_what_its_services_recorded(suite: Any) -> None:
    """A stored trial scored against its case file sees its services as re-scoring does:
    the mock's recorded requests and the kept database, not nothing."""
    suite.agent(SERVICE_AGENT)
    case = suite.write("cases/mail.yaml", SERVICE_CASE)
    assert suite.run().returncode == 0
    (run,) = suite.runs()
    trial = run / "trials/default/mail/notify#1/trial.json"
    done = suite.sounding("score", str(case), "--record", str(trial))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout and "ERROR" not in done.stdout and "UNJUDGED" not in done.stdout


def drop_kept(server: str, stored: dict[str, Any]) -> None:
    """The database `--keep` left, and its reader login, dropped once the test is done."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(server, poolclass=sqlalchemy.NullPool)
    with engine.begin() as connection:
        connection.exec_driver_sql(f"DROP DATABASE `{stored['details']['database']}`")
        reader = sqlalchemy.engine.make_url(stored["url"]).username
        connection.exec_driver_sql(f"DROP USER IF EXISTS '{reader}'")
    engine.dispose()


@pytest.mark.mariadb
def test_a_kept_server_database_is_rescored_through_its_reader_login(
    tmp_path: Path, sounding: Any, mariadb_url: str
) -> None:
    root = tmp_path / "suite"
    (root / "cases").mkdir(parents=True)
    (root / "sounding.toml").write_text(
        f'[agent]\ncommand = ["{sys.executable}", "-c", "print(42)"]\n'
        f'[services.db]\nserver = "{mariadb_url}"\n'
    )
    (root / "cases/q.yaml").write_text(
        "services: [{name: db, type: sql, engine: mysql}]\n"
        "scenarios:\n  - id: s\n    user: hi\n"
        "    expect: [{sql: {service: db, query: 'SELECT 1', equals: 1}}]\n"
    )
    assert "PASS " in sounding("run", str(root), "--keep").stdout
    (run,) = (root / "results").iterdir()
    again = sounding("score", str(run))
    assert "re-scored 1 trial: 0 verdicts changed" in again.stdout, again.stdout
    trial = next(run.glob("trials/*/*/*/trial.json"))
    one = sounding("score", str(root / "cases/q.yaml"), "--record", str(trial))
    assert "PASSED   expect[0] sql" in one.stdout, one.stdout
    stored = json.loads((trial.parent / "services/services.json").read_text())
    drop_kept(mariadb_url, stored["services"]["db"])
