"""`sounding agreement RUN`: a run judged by a scripted judge, a form filled by hand, and
the agreement between them through the real CLI."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from sounding import load_case
from sounding.checks._judge import check_definition
from sounding.validators import AgreementError, measure_agreement
from sounding.validators._judge import validator_definition

Bench = Any  # the `bench` fixture of conftest.py
ScriptedLLM = Any  # the `llm_server` fixture of tests/conftest.py

CASE = """
validators:
  - {mode: judge, rubric: rubric.md, pieces: [response], metrics: [usable, short]}
  - mode: form
    metrics: [tone_ok, tone_score, usable_by_hand]
    types: {tone_score: number}
    checks: {tone_ok: tone, tone_score: tone, usable_by_hand: usable}
scenarios:
  - id: note
    user: write a note
    trials: 6
    invariants:
      tone: {check: {type: llm_as_judge, criteria: Is the note polite?}}
"""
JUDGE_SCORES = [0.9, 0.8, 0.2, 0.7, 0.1, 0.3]  # passes at 0.5: yes, yes, no, yes, no, no
PEOPLE_OK = [True, True, False, True, False, True]  # one disagreement, on trial 6
PEOPLE_SCORES = [0.8, 0.9, 0.3, 0.6, 0.2, 0.1]


def judged_run(bench: Bench, llm_server: ScriptedLLM, case: str = CASE) -> Path:
    """One run of six trials, one at a time: per trial the validator's verdict, then tone's."""
    bench.judged_agent(llm_server.url)
    bench.write("rubric.md", "Is the note usable? Is it short?")
    bench.write("cases/notes.yaml", case)
    for score in JUDGE_SCORES:
        llm_server.openai_call({"usable": score > 0.5, "short": True})
        llm_server.openai_call({"score": score, "passed": score >= 0.5, "reason": "as it reads"})
    done = bench.run("--parallel", "1")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return bench.only_run()


def line_of(output: str, start: str) -> str:
    (found,) = [line for line in output.splitlines() if line.startswith(start)]
    return found


def test_agreement_of_a_judge_with_people_on_pass_fail_and_scores(
    bench: Bench, llm_server: ScriptedLLM
) -> None:
    run = judged_run(bench, llm_server)
    bench.fill_form(run, {"tone_ok": PEOPLE_OK, "tone_score": PEOPLE_SCORES})
    done = bench.sounding("agreement", str(run))
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert f"agreement of the judges with people, run {run.name}" in out
    assert "(95% bootstrap intervals, 10,000 draws, seed 20260729)" in out
    # 5 of 6 alike; chance 0.5·4/6 + 0.5·2/6 = 0.5; kappa (5/6 − 0.5) / 0.5 = 0.67
    verdicts = line_of(out, "notes/tone ← tone_ok")
    assert re.search(
        r"pass/fail  6 trials  kappa 0\.67 \[-?\d\.\d\d, 1\.00\], 5 of 6 alike$", verdicts
    )
    # ranks 6 5 2 4 1 3 against 5 6 3 4 2 1: Σd² = 8, rho = 1 − 6·8/(6·35) = 0.77; MAE 0.7/6
    scores = line_of(out, "notes/tone ← tone_score")
    assert "score      6 trials  spearman 0.77 [" in scores
    assert "mean absolute error 0.12 [" in scores
    unfilled = line_of(out, "notes/usable ← usable_by_hand")
    assert "not measured: no trial holds both the judge's verdict and a value of" in unfilled
    unchecked = line_of(out, "notes/short")
    assert "not measured: no form metric checks it: tie one to it with `checks:`" in unchecked
    again = bench.sounding("agreement", str(run))
    assert again.stdout == out  # seeded: the same run gives the same intervals


def test_the_json_document_is_versioned_and_carries_intervals(
    bench: Bench, llm_server: ScriptedLLM
) -> None:
    run = judged_run(bench, llm_server)
    bench.fill_form(run, {"tone_ok": PEOPLE_OK, "tone_score": PEOPLE_SCORES})
    done = bench.sounding("agreement", str(run), "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "sounding.agreement/1"
    assert (document["run_id"], document["gating"]) == (run.name, None)
    by_form = {entry["form"]: entry for entry in document["checks"]}
    verdicts, scores = by_form["tone_ok"], by_form["tone_score"]
    assert (verdicts["case"], verdicts["judge"], verdicts["source"]) == ("notes", "tone", "check")
    assert (verdicts["scale"], verdicts["trials"], verdicts["not_measured"]) == ("pass/fail", 6, "")
    assert verdicts["judged_by"] == ["openai/judge-1"]  # the model of the paired verdicts
    (tone,) = load_case(bench.root / "cases" / "notes.yaml").scenarios[0].invariants
    assert verdicts["definitions"] == [check_definition(tone.check.params)]  # what it was given
    assert verdicts["kappa"]["estimate"] == pytest.approx(2 / 3)
    assert verdicts["observed"] == pytest.approx(5 / 6)
    assert verdicts["kappa"]["seed"] == 20260729 and verdicts["kappa"]["draws"] == 10_000
    assert verdicts["kappa"]["low"] <= verdicts["kappa"]["estimate"] <= verdicts["kappa"]["high"]
    assert scores["spearman"]["estimate"] == pytest.approx(1 - 48 / 210)
    assert scores["mae"]["estimate"] == pytest.approx(0.7 / 6)
    assert scores["kappa"] is None and verdicts["spearman"] is None
    unfilled = by_form["usable_by_hand"]
    assert (unfilled["source"], unfilled["trials"], unfilled["kappa"]) == ("metric", 0, None)
    assert unfilled["judged_by"] == []  # no pair, no verdict's model
    assert by_form[None]["judge"] == "short" and by_form[None]["not_measured"]


def test_a_judge_metric_is_compared_with_its_form_metric(
    bench: Bench, llm_server: ScriptedLLM
) -> None:
    run = judged_run(bench, llm_server)
    # the validator said usable on trials 1, 2, 4 (score > 0.5); people agree but on trial 2
    bench.fill_form(run, {"usable_by_hand": [True, False, False, True, False, False]})
    document = measure_agreement(run).document()
    (usable,) = [entry for entry in document["checks"] if entry["judge"] == "usable"]
    assert (usable["form"], usable["trials"], usable["observed"]) == (
        "usable_by_hand",
        6,
        pytest.approx(5 / 6),
    )
    assert usable["kappa"]["estimate"] == pytest.approx(2 / 3)  # the 2×2 of the first test
    assert usable["judged_by"] == ["openai/judge-1"]  # from the validator's kept provenance
    (judge, _form) = load_case(bench.root / "cases" / "notes.yaml").validators
    rubric = (bench.root / "rubric.md").read_text()
    assert usable["definitions"] == [validator_definition(judge, rubric)]


def test_a_kept_verdict_swapped_for_a_fifo_a_link_or_a_huge_file_is_read_within_bounds(
    bench: Bench, llm_server: ScriptedLLM
) -> None:
    run = judged_run(bench, llm_server)
    bench.fill_form(run, {"usable_by_hand": [True, False, False, True, False, False]})
    kept = sorted(
        path
        for path in run.glob("trials/*/*/*/validation/*.json")
        if not path.name.endswith(".request.json")
    )
    assert len(kept) == 6
    fifo, link, huge = kept[:3]
    fifo.unlink()
    os.mkfifo(fifo)  # nobody writes it: a plain read would wait forever
    link.unlink()
    link.symlink_to("/dev/zero")  # endless
    with huge.open("r+b") as grown:
        grown.truncate(4 << 30)  # 4 GiB, sparse
    done = bench.sounding("agreement", str(run), "--json")
    assert done.returncode == 0, done.stderr
    (usable,) = [entry for entry in json.loads(done.stdout)["checks"] if entry["judge"] == "usable"]
    assert (usable["trials"], usable["kappa"]["estimate"]) == (6, pytest.approx(2 / 3))
    assert usable["judged_by"] == ["openai/judge-1"]  # from the three left as they were


def test_one_answer_on_both_sides_is_not_measured(bench: Bench, llm_server: ScriptedLLM) -> None:
    case = CASE.replace("usable_by_hand]", "usable_by_hand, short_ok]")
    case = case.replace("usable_by_hand: usable}", "usable_by_hand: usable, short_ok: short}")
    run = judged_run(bench, llm_server, case)
    bench.fill_form(run, {"short_ok": [True] * 6})  # the judge said short every time, too
    (short,) = [a for a in measure_agreement(run).checks if a.judge == "short"]
    assert (short.trials, short.observed, short.kappa) == (6, 1.0, None)
    assert short.not_measured == (
        "both sides said 'yes' on all 6 trials: kappa needs trials of both answers"
    )


def test_a_folder_that_is_not_a_run_exits_2(bench: Bench, tmp_path: Path) -> None:
    done = bench.sounding("agreement", str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert "no such folder" in done.stderr
    with pytest.raises(AgreementError, match="not the folder of a run"):
        measure_agreement(tmp_path)


def test_the_worked_example_of_the_docs_loads(bench: Bench) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "judge.md").read_text()
    section = page.split("### Tie a form metric to the judge it checks", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    bench.write("rubrics/amount.md", "Does the email give the amount due?")
    case = bench.case(example, name="mail.yaml")
    (form,) = [v for v in case.validators if v.mode == "form"]
    assert form.checks == {"tone_ok": "email_tone", "tone_score": "email_tone"}
    assert list(case.judge_checks()) == ["email_tone", "cites_amount"]
