"""Fresh workspaces per trial: fixture copies, pinned clones, given files, touched, by-products."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

EDITING_AGENT = """
import os, sys, pathlib
sys.stdin.read()
root = pathlib.Path(".")
(root / "src" / "app.py").write_text("print('fixed')\\n")
(root / "__pycache__").mkdir(exist_ok=True)
(root / "__pycache__" / "app.pyc").write_bytes(b"\\0bytecode")
(root / "old.txt").unlink()
listing = sorted(str(p) for p in root.rglob("*") if p.is_file())
print(" ".join(listing))
"""


def test_each_trial_starts_from_the_fixture_and_reports_what_it_touched(suite: Any) -> None:
    suite.agent(EDITING_AGENT)
    suite.write("fixtures/repo/src/app.py", "print('broken')\n")
    suite.write("fixtures/repo/old.txt", "stale\n")
    suite.write("fixtures/probe.txt", "given probe\n")
    suite.write(
        "cases/edit.yaml",
        """
        workspace:
          fixture: fixtures/repo
          given: {tests/probe.txt: fixtures/probe.txt}
          byproducts: ["__pycache__"]
        scenarios:
          - id: fix
            user: fix it
            trials: 2
            expect: [{final_answer_contains: tests/probe.txt}]
        """,
    )
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    run = suite.runs()[0]
    for n in (1, 2):
        folder = run / f"trials/default/edit/fix#{n}"
        changes = json.loads((folder / "trial.json").read_text())
        assert changes["touched"] == ["__pycache__/app.pyc", "old.txt", "src/app.py"]
        assert changes["byproducts"] == ["__pycache__/app.pyc"]
        diff = (folder / "diff.patch").read_text()
        assert "-print('broken')" in diff and "+print('fixed')" in diff
        assert (
            "Files a/__pycache__/app.pyc and b/__pycache__/app.pyc differ (binary: not shown)"
            in diff
        )
    assert (suite.root / "fixtures/repo/old.txt").exists(), "the fixture itself was changed"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_a_repository_is_cloned_at_a_pinned_tag(suite: Any, tmp_path: Path) -> None:
    repo = tmp_path / "upstream"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "VERSION").write_text("one\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    _git(repo, "tag", "v1")
    (repo / "VERSION").write_text("two\n")
    _git(repo, "commit", "-qam", "two")
    suite.agent("import sys; sys.stdin.read(); print(open('VERSION').read())")
    suite.write(
        "cases/clone.yaml",
        f"""
        workspace: {{repo: {repo}, ref: v1}}
        scenarios:
          - {{id: pinned, user: which version, expect: [{{final_answer_contains: one}}]}}
        """,
    )
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_unpinned_reference_is_refused_before_any_trial(suite: Any, tmp_path: Path) -> None:
    repo = tmp_path / "upstream"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "f").write_text("x")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "x")
    suite.agent("print('never')")
    suite.write(
        "cases/clone.yaml",
        f"workspace: {{repo: {repo}, ref: main}}\nscenarios:\n  - {{id: s, user: hi}}\n",
    )
    done = suite.run()
    assert done.returncode == 2
    assert "neither a tag nor a full 40-hex commit" in done.stderr


FIXTURE_EDITOR = """
import pathlib, sys
sys.stdin.read()
pathlib.Path("notes/n07.txt").write_text("edited\\n")
pathlib.Path("notes/n08.txt").unlink()
pathlib.Path("report.md").write_text("# done\\n")
print("done")
"""
FIXTURE_CASE = """
workspace: {fixture: fixtures/notes}
scenarios:
  - id: edit
    user: tidy the notes
    expect:
      - file_content: {path: notes/n01.txt, contains: "note 1"}
      - file_absent: notes/n08.txt
      - file_content: {path: report.md, contains: "# done"}
"""


def test_a_trial_keeps_only_what_its_agent_touched_and_rescoring_sees_it_whole(
    suite: Any,
) -> None:
    """A fixture of 50 files is kept once per run; a trial keeps its changed and new files,
    and re-scoring reads an untouched file, a deleted one and a new one as the checks did."""
    suite.agent(FIXTURE_EDITOR)
    for n in range(50):
        suite.write(f"fixtures/notes/notes/n{n:02d}.txt", f"note {n}\n")
    suite.write("cases/tidy.yaml", FIXTURE_CASE)
    done = suite.run("--trials", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    run = suite.runs()[0]
    trial = run / "trials/default/tidy/edit#1"
    stored = sorted(p.relative_to(trial).as_posix() for p in trial.rglob("*") if p.is_file())
    kept = ["workspace/notes/n07.txt", "workspace/report.md"]
    assert stored == ["diff.patch", "stdout.txt", "trial.json", *kept], stored
    assert len(list((run / "origins/1/notes").iterdir())) == 50
    # the suite's fixture changes later: re-scoring still reads the run's own copy
    (suite.root / "fixtures/notes/notes/n01.txt").write_text("rewritten\n")
    rescored = suite.sounding("score", str(run))
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr
    assert "re-scored 2 trials: 0 verdicts changed" in rescored.stdout


def test_an_agent_that_swaps_its_workspace_for_a_link_is_an_error_not_a_pass(
    suite: Any, tmp_path: Path
) -> None:
    """The link leads to a folder holding what the checks want: nothing there is read."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "report.md").write_text("# done\n")
    suite.agent(
        f"""
        import os, shutil, sys
        sys.stdin.read()
        here = os.getcwd()
        os.chdir("/")
        shutil.rmtree(here)
        os.symlink({str(elsewhere)!r}, here)
        print("done")
        """
    )
    suite.write(
        "cases/swap.yaml",
        "scenarios:\n  - id: s\n    user: go\n"
        "    expect: [{file_content: {path: report.md, contains: '# done'}}]\n",
    )
    done = suite.run()
    assert done.returncode == 3, done.stdout + done.stderr
    (trial,) = suite.trials(suite.runs()[0])
    assert "replaced it with a link: nothing in it is measured" in str(trial["reason"])
    assert sorted(p.name for p in elsewhere.iterdir()) == ["report.md"]


def test_what_an_agent_plants_in_its_trial_folder_is_removed_and_its_trial_an_error(
    suite: Any, tmp_path: Path
) -> None:
    """Sounding stores and reads files of the trial folder by name (a diff, service
    recordings): an agent that writes there, outside its workspace, could forge them."""
    secret = tmp_path / "host-file.txt"
    secret.write_text("a file of the machine, outside every trial\n")
    suite.agent(
        f"""
        import os, sys
        sys.stdin.read()
        trial = os.path.dirname(os.getcwd())
        open(os.path.join(trial, "diff.patch"), "w").write("+ forged")
        os.symlink({str(secret)!r}, os.path.join(trial, "stdout.txt"))
        os.rename(os.path.join(trial, "services"), os.path.join(trial, "moved"))
        os.symlink({str(tmp_path)!r}, os.path.join(trial, "services"))
        os.chdir(trial)
        os.mkdir("deep")
        os.chdir("deep")
        for _ in range(1500):  # deeper than Python's recursion limit
            os.mkdir("d")
            os.chdir("d")
        print("done")
        """
    )
    suite.write(
        "cases/plant.yaml",
        "services: [{name: db, type: sql}]\n"
        "scenarios:\n  - id: s\n    user: go\n    timeout: 30\n"
        "    expect: [{final_answer_contains: done}]\n",
    )
    done = suite.run()
    assert done.returncode == 3, done.stdout + done.stderr  # an error, never a pass
    (trial,) = suite.trials(suite.runs()[0])
    assert (trial["verdict"], trial["error_kind"]) == ("error", "agent")
    assert trial["reason"] == (
        "the agent wrote outside its workspace, in its trial folder: deep, diff.patch, moved, "
        "services, stdout.txt; removed, so nothing of it is stored or measured"
    )
    folder = suite.runs()[0] / "trials/default/plant/s#1"
    assert sorted(p.name for p in folder.iterdir()) == ["stdout.txt", "trial.json", "workspace"]
    assert not (folder / "stdout.txt").is_symlink()
    assert (folder / "stdout.txt").read_text() == "done\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["host-file.txt", "suite"]


def test_a_fifo_and_a_huge_sparse_file_in_the_workspace_never_stall_the_trial(
    suite: Any,
) -> None:
    suite.agent(
        """
        import os, sys
        sys.stdin.read()
        os.mkfifo("pipe")
        with open("huge.bin", "wb") as huge:
            huge.truncate(8 << 30)  # 8 GB, sparse: nothing may read it whole
        print("done")
        """
    )
    suite.write(
        "cases/odd.yaml",
        "scenarios:\n  - id: s\n    user: go\n    timeout: 30\n"
        "    expect: [{final_answer_contains: done}]\n",
    )
    started = time.monotonic()
    done = suite.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.monotonic() - started < 20
    (trial,) = suite.trials(suite.runs()[0])
    assert trial["touched"] == ["huge.bin", "pipe"]
    diff = (suite.runs()[0] / "trials/default/odd/s#1/diff.patch").read_text()
    assert "pipe differ (not a regular file: not shown)" in diff
    assert "huge.bin differ (8589934592 bytes, over the 1024 KiB" in diff


@pytest.mark.parametrize(
    ("swap", "said"),
    [
        ("open(trace, 'wb').truncate(8 << 30)  # 8 GB, sparse", "over the 64 MiB"),
        ("os.unlink(trace); os.symlink(secret, trace)", "not a regular file"),
        ("os.unlink(trace); os.mkfifo(trace)", "not a regular file"),
    ],
    ids=["huge", "link", "fifo"],
)
def test_a_trace_the_agent_swaps_or_swells_is_an_error_read_within_a_bound(
    suite: Any, tmp_path: Path, swap: str, said: str
) -> None:
    secret = tmp_path / "outside.jsonl"
    secret.write_text('{"type": "final", "text": "outside the trial"}\n')
    suite.agent(
        f"""
        import os, sys
        sys.stdin.read()
        trace, secret = os.environ["SOUNDING_TRACE"], {str(secret)!r}
        open(trace, "w").close()
        {swap}
        print("done")
        """
    )
    suite.write("cases/t.yaml", "scenarios:\n  - {id: s, user: go, timeout: 30}\n")
    started = time.monotonic()
    done = suite.run()
    assert time.monotonic() - started < 20
    assert done.returncode == 3, done.stdout + done.stderr  # an error, not a pass
    (trial,) = suite.trials(suite.runs()[0])
    assert trial["verdict"] == "error" and said in trial["reason"]
    assert not list(suite.runs()[0].glob("trials/*/*/*/harness-error.txt"))  # not our fault
    assert "outside the trial" not in json.dumps(trial)


def test_a_name_that_is_not_utf8_and_folders_1500_deep_are_the_agents_work_not_a_crash(
    suite: Any,
) -> None:
    suite.agent(
        """
        import os, sys
        sys.stdin.read()
        for _ in range(1500):  # deeper than Python's recursion limit
            os.mkdir("d")
            os.chdir("d")
        os.chdir(os.environ["SOUNDING_WORKSPACE"])
        open(b"bad-\\xff-name.txt", "wb").close()
        print("done")
        """
    )
    suite.write("fixtures/repo/readme.md", "hi\n")
    suite.write(
        "cases/odd.yaml",
        "workspace: {fixture: fixtures/repo}\n"
        "scenarios:\n  - id: s\n    user: go\n    expect: [{final_answer_contains: done}]\n"
        "    forbidden: {file_writes_outside: [notes/]}\n",
    )
    done = suite.run()
    assert done.returncode == 1, done.stdout + done.stderr  # the rule failed; no crash
    assert "1 file written outside notes/: bad-\\xff-name.txt" in done.stdout
    (trial,) = suite.trials(suite.runs()[0])
    assert trial["touched"] == ["bad-\\xff-name.txt"]
    kept = suite.runs()[0] / "trials/default/odd/s#1/workspace"
    assert os.listdir(os.fsencode(kept)) == [b"bad-\xff-name.txt"]  # the empty folders went


def test_a_given_file_is_never_written_through_a_link_of_the_fixture(
    suite: Any, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    suite.agent("print('x')")
    suite.write("fixtures/repo/readme.md", "hi\n")
    (suite.root / "fixtures/repo/tests").symlink_to(outside)
    suite.write("fixtures/probe.txt", "probe\n")
    suite.write(
        "cases/link.yaml",
        "workspace: {fixture: fixtures/repo, given: {tests/probe.txt: fixtures/probe.txt}}\n"
        "scenarios:\n  - {id: s, user: go}\n",
    )
    checked = suite.sounding("validate", str(suite.root))
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert 'link.yaml:1: workspace.given["tests/probe.txt"]: workspace.given' in checked.stderr
    done = suite.run()
    assert done.returncode == 2, done.stdout + done.stderr
    assert "would be written through the link 'tests' of the fixture" in done.stderr
    assert list(outside.iterdir()) == []
