"""Form mode through the real CLI: a blind, shuffled form out, filled metrics back in."""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from sounding.validators import FormError, export_form, import_form

Bench = Any  # the `bench` fixture of conftest.py

CELLS = """
[cells.variants.cell-alpha]
prompt = "Be brief."
[cells.variants.cell-beta]
env = {STYLE = "long"}
"""
CASE = """
defaults: {trials: 1}
validators:
  - {mode: form, metrics: [tone_ok, clarity], types: {clarity: number}}
scenarios:
  - id: greet
    user: say hello
  - id: measured
    user: say bye
    invariants:
      tone_ok: {check: {type: final_answer_contains, text: bye}}
"""
AGENT = "import sys; print('answer to: ' + sys.stdin.read().strip())"


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory, sounding: Any) -> Path:
    """One real run, made once: each test gets its own copy of the results folder."""
    root = tmp_path_factory.mktemp("form") / "suite"
    (root / "cases").mkdir(parents=True)
    (root / "agent.py").write_text(AGENT)
    config = f'[agent]\ncommand = ["{sys.executable}", "{{suite}}/agent.py"]\n{CELLS}'
    (root / "sounding.toml").write_text(config)
    (root / "cases/talk.yaml").write_text(CASE)
    done = sounding("run", str(root))
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = (root / "results").iterdir()
    return run


@pytest.fixture
def run_dir(stored_run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "results" / stored_run.name
    shutil.copytree(stored_run, copy)
    return copy


def export(run_dir: Path) -> tuple[str, dict[str, Any]]:
    export_form(run_dir)
    text = (run_dir / "form.toml").read_text()
    return text, tomllib.loads(text)


def fill(path: Path, run_id: str, trials: list[dict[str, Any]]) -> Path:
    lines = ['schema = "sounding.form/1"', f'run = "{run_id}"']
    for trial in trials:
        lines += ["[[trial]]", f'token = "{trial["token"]}"', "[trial.metrics]"]
        lines += [f"{name} = {json.dumps(value)}" for name, value in trial["metrics"].items()]
        lines += ["[trial.reasons]"]
        lines += [f"{name} = {json.dumps(why)}" for name, why in trial.get("reasons", {}).items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def tokens(run_dir: Path, scenario: str) -> list[str]:
    key = json.loads((run_dir / "form-key.json").read_text())["trials"]
    return sorted(token for token, folder in key.items() if f"/{scenario}#" in folder)


def trial_files(run_dir: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in run_dir.glob("trials/*/*/*/trial.json"):
        found[path.parent.relative_to(run_dir).as_posix()] = json.loads(path.read_text())
    return found


def test_the_form_is_blind_and_lists_only_what_nothing_measured(
    bench: Bench, run_dir: Path
) -> None:
    done = bench.sounding("form", "export", str(run_dir), "--out", str(run_dir / "f.toml"))
    assert done.returncode == 0, done.stderr
    assert "4 trials, 6 metrics to fill" in done.stdout
    text = (run_dir / "f.toml").read_text()
    form = tomllib.loads(text)
    assert form["schema"] == "sounding.form/1" and form["run"] == run_dir.name
    assert "cell-alpha" not in text and "cell-beta" not in text and "trials/" not in text
    assert "the prompt differs between configurations" in text  # the cell's prompt shows
    listed = {trial["token"]: trial for trial in form["trial"]}
    key = json.loads((run_dir / "form-key.json").read_text())
    assert key["schema"] == "sounding.form-key/1" and set(key["trials"]) == set(listed)
    for token, folder in key["trials"].items():
        section = text.split(f'token = "{token}"')[1].split("[[trial]]")[0]
        assert ("# tone_ok = true" in section) == ("/greet#" in folder)  # measured elsewhere
        assert "# clarity = 0.0    # a number" in section
        assert listed[token]["response"].startswith("answer to: ")
        assert listed[token]["metrics"] == {}  # nothing filled yet: every line commented out


def test_a_filled_form_goes_into_trial_and_measures(bench: Bench, run_dir: Path) -> None:
    export(run_dir)
    greet = tokens(run_dir, "greet")
    filled = [
        {
            "token": greet[0],
            "metrics": {"tone_ok": True, "clarity": 4},
            "reasons": {"clarity": "ok"},
        },
        {"token": greet[1], "metrics": {"clarity": 2.5}},
    ]
    form = fill(run_dir / "f.toml", run_dir.name, filled)
    done = bench.sounding("form", "import", str(run_dir), str(form))
    assert done.returncode == 0, done.stderr
    assert "filled 3 metrics in 2 trials; 3 still unfilled" in done.stdout
    key = json.loads((run_dir / "form-key.json").read_text())
    first = trial_files(run_dir)[key["trials"][greet[0]]]
    assert (first["metrics"]["tone_ok"], first["metrics"]["clarity"]) == (True, 4)
    assert first["metric_reasons"] == {"tone_ok": "filled by hand on a form", "clarity": "ok"}
    assert key["filled"][greet[0]] == ["clarity", "tone_ok"]
    measures = json.loads((run_dir / "measures.json").read_text())
    place = (first["cell"], "greet", first["trial"])
    (record,) = [r for r in measures["trials"] if (r["cell"], r["scenario"], r["trial"]) == place]
    assert record["metrics"]["clarity"] == 4 and record["reasons"]["clarity"] == "ok"


def test_a_value_a_form_filled_may_be_corrected_by_another_form(run_dir: Path) -> None:
    export(run_dir)
    (token, _) = tokens(run_dir, "greet")
    import_form(
        run_dir,
        fill(run_dir / "f.toml", run_dir.name, [{"token": token, "metrics": {"clarity": 1}}]),
    )
    done = import_form(
        run_dir,
        fill(run_dir / "g.toml", run_dir.name, [{"token": token, "metrics": {"clarity": 5}}]),
    )
    assert (done.trials, done.metrics) == (1, 1)
    folder = json.loads((run_dir / "form-key.json").read_text())["trials"][token]
    assert trial_files(run_dir)[folder]["metrics"]["clarity"] == 5
    _, later = export(run_dir)
    assert token in {trial["token"] for trial in later["trial"]}  # its tone_ok is still open
    assert "# clarity" not in (run_dir / "form.toml").read_text().split(token)[1].split("[[")[0]


def test_a_measured_metric_is_never_overwritten(bench: Bench, run_dir: Path) -> None:
    export(run_dir)
    greet, measured = tokens(run_dir, "greet")[0], tokens(run_dir, "measured")[0]
    before = trial_files(run_dir)
    form = fill(
        run_dir / "f.toml",
        run_dir.name,
        [
            {"token": greet, "metrics": {"clarity": 3}},
            {"token": measured, "metrics": {"tone_ok": False}},
        ],
    )
    done = bench.sounding("form", "import", str(run_dir), str(form))
    assert done.returncode == 2
    assert f"trial {measured}: metric 'tone_ok' was measured (True)" in done.stderr
    assert "nothing was imported" in done.stderr
    assert trial_files(run_dir) == before  # all or nothing: the valid line was not written


@pytest.mark.parametrize(
    ("entry", "refusal"),
    [
        ({"token": "feedbeef", "metrics": {"clarity": 1}}, "token 'feedbeef' is not a trial"),
        ({"metrics": {"clarity": "high"}}, "clarity = 'high' is not a number"),
        ({"metrics": {"tone_ok": 1}}, "tone_ok = 1 is not true or false"),
        ({"metrics": {"politeness": True}}, "'politeness' is not a form metric of case 'talk'"),
        ({"metrics": {"clarity": 1}, "reasons": {"tone_ok": "x"}}, "reasons.tone_ok must be"),
    ],
)
def test_a_form_off_the_run_is_refused(run_dir: Path, entry: dict[str, Any], refusal: str) -> None:
    export(run_dir)
    trial = {"token": tokens(run_dir, "greet")[0], **entry}
    with pytest.raises(FormError, match="nothing was imported") as refused:
        import_form(run_dir, fill(run_dir / "f.toml", run_dir.name, [trial]))
    assert refusal in str(refused.value)


def test_metrics_that_are_not_a_table_are_refused(run_dir: Path) -> None:
    export(run_dir)
    form = run_dir / "f.toml"
    token = tokens(run_dir, "greet")[0]
    form.write_text(
        f'schema = "sounding.form/1"\nrun = "{run_dir.name}"\n'
        f'[[trial]]\ntoken = "{token}"\nmetrics = 3\n'
    )
    with pytest.raises(FormError, match="`metrics` and `reasons` must be tables"):
        import_form(run_dir, form)


def test_a_form_of_another_run_is_refused(run_dir: Path) -> None:
    export(run_dir)
    with pytest.raises(FormError, match="was exported from run '20000101-000000'"):
        import_form(run_dir, fill(run_dir / "f.toml", "20000101-000000", []))


def test_a_run_without_form_validators_has_no_form(tmp_path: Path, run_dir: Path) -> None:
    run = json.loads((run_dir / "run.json").read_text())
    suite = tmp_path / "other-suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "cases/plain.yaml").write_text("scenarios:\n  - {id: s, user: hi}\n")
    (run_dir / "run.json").write_text(json.dumps({**run, "suite": str(suite)}))
    with pytest.raises(FormError, match="declares a `mode: form` validator"):
        export_form(run_dir)
