"""`[judge] min_agreement`: a judge check people have not validated may not gate — the
rule on its own, then through real runs with a scripted judge."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from sounding.checks._judge import check_definition
from sounding.judge import JudgeConfig
from sounding.scoring import Interval, Statistic
from sounding.spec import Case
from sounding.validators import (
    Agreement,
    AgreementError,
    AgreementReport,
    gate_judges,
    judge_of,
    save_agreement,
    unvalidated_judges,
)
from sounding.validators._judge import validator_definition

Bench = Any  # the `bench` fixture of conftest.py
ScriptedLLM = Any  # the `llm_server` fixture of tests/conftest.py

CASE = """
validators:
  - {mode: judge, rubric: rubric.md, pieces: [response], metrics: [usable]}
  - mode: form
    metrics: [tone_ok, usable_by_hand]
    checks: {tone_ok: tone, usable_by_hand: usable}
scenarios:
  - id: note
    user: write a note
    trials: 4
    invariants:
      tone: {gate: true, check: {type: llm_as_judge, criteria: Is the note polite?}}
      usable_gate: {check: {type: metric, metric: usable}}
      long_enough: {check: {type: final_answer_contains, text: note}}
"""
POLICY = JudgeConfig(model="judge-1", min_agreement=0.6, min_samples=20)


def case_of(bench: Bench) -> Case:
    bench.write("rubric.md", "Is the note usable?")
    return bench.case(CASE, name="notes.yaml")


def measured(judge: str, form: str, statistic: Statistic, estimate: float, n: int) -> Agreement:
    found = Interval(
        statistic=statistic, estimate=estimate, low=0, high=1, draws=10, level=0.95, seed=1
    )
    scale = "pass/fail" if statistic is Statistic.KAPPA else "score"
    return Agreement(
        case="notes",
        judge=judge,
        source="check",
        form=form,
        scale=scale,
        trials=n,
        **{statistic.value: found},
    )


def report(*checks: Agreement) -> AgreementReport:
    return AgreementReport(run_id="r", suite="/s", checks=list(checks))


# the rule --------------------------------------------------------------------------------


def test_the_judges_a_scenario_rests_on_are_its_judge_checks_and_judge_metrics(
    bench: Bench,
) -> None:
    case = case_of(bench)
    tone, usable_gate, long_enough = case.scenarios[0].invariants
    assert [judge_of(case, item) for item in (tone, usable_gate, long_enough)] == [
        "tone",
        "usable",
        None,
    ]


def test_with_no_agreement_measured_no_judge_may_gate(bench: Bench) -> None:
    found = unvalidated_judges([case_of(bench)], None, POLICY, bench.root)
    assert list(found) == [("notes", "tone"), ("notes", "usable")]
    assert found[("notes", "tone")] == (
        "its agreement with people was never measured: the suite has no agreement.json "
        "(sounding agreement RUN --save)"
    )


def test_a_judge_gates_when_every_measurement_reaches_the_bar(bench: Bench) -> None:
    case = case_of(bench)
    good = measured("tone", "tone_ok", Statistic.KAPPA, 0.7, 25)
    few = measured("usable", "usable_by_hand", Statistic.KAPPA, 0.9, 10)
    assert unvalidated_judges([case], report(good, few), POLICY, bench.root) == {
        ("notes", "usable"): "kappa with 'usable_by_hand' was measured on 10 trials, fewer "
        "than min_samples 20"
    }
    weak = measured("tone", "tone_score", Statistic.SPEARMAN, 0.4, 25)
    enough = few.model_copy(update={"trials": 20})
    assert unvalidated_judges([case], report(good, weak, enough), POLICY, bench.root) == {
        ("notes", "tone"): "spearman with 'tone_score' is 0.40, under min_agreement 0.60"
    }


def test_an_agreement_measured_on_another_model_lets_no_judge_gate(bench: Bench) -> None:
    case = case_of(bench)
    tone = measured("tone", "tone_ok", Statistic.KAPPA, 0.9, 30)
    usable = measured("usable", "usable_by_hand", Statistic.KAPPA, 0.9, 30)
    by_judge_0 = [a.model_copy(update={"judged_by": ["openai/judge-0"]}) for a in (tone, usable)]
    switched = (
        "kappa with '{form}' was measured on the verdicts of openai/judge-0, and the judge is "
        "now openai/judge-1: measure it again (sounding agreement RUN --save, on a run judged "
        "as it is now)"
    )
    assert unvalidated_judges([case], report(*by_judge_0), POLICY, bench.root) == {
        ("notes", "tone"): switched.format(form="tone_ok"),
        ("notes", "usable"): switched.format(form="usable_by_hand"),
    }
    by_judge_1 = [a.model_copy(update={"judged_by": ["openai/judge-1"]}) for a in (tone, usable)]
    assert unvalidated_judges([case], report(*by_judge_1), POLICY, bench.root) == {}
    # an agreement.json saved before models were kept names none: it is taken as it is
    assert unvalidated_judges([case], report(tone, usable), POLICY, bench.root) == {}


def test_an_agreement_measured_on_other_words_lets_no_judge_gate(bench: Bench) -> None:
    case = case_of(bench)
    tone = measured("tone", "tone_ok", Statistic.KAPPA, 0.9, 30)
    usable = measured("usable", "usable_by_hand", Statistic.KAPPA, 0.9, 30)
    (invariant, *_), (judge, _form) = case.scenarios[0].invariants, case.validators
    today = {
        "tone": check_definition(invariant.check.params),
        "usable": validator_definition(judge, "Is the note usable?"),
    }
    as_today = [a.model_copy(update={"definitions": [today[a.judge]]}) for a in (tone, usable)]
    assert unvalidated_judges([case], report(*as_today), POLICY, bench.root) == {}
    bench.write("rubric.md", "Is the note usable by a customer?")  # the rubric changed since
    found = unvalidated_judges([case], report(*as_today), POLICY, bench.root)
    assert found == {
        ("notes", "usable"): "kappa with 'usable_by_hand' was measured on verdicts given other "
        "words: its criteria, rubric or settings changed since: measure it again (sounding "
        "agreement RUN --save, on a run judged as it is now)"
    }
    stricter = CASE.replace("criteria: Is the note polite?}", "criteria: Is the note kind?}")
    found = unvalidated_judges(
        [bench.case(stricter, name="notes.yaml")], report(*as_today), POLICY, bench.root
    )
    assert list(found) == [("notes", "tone"), ("notes", "usable")]


def test_a_check_or_validator_that_names_its_own_model_is_judged_by_that_model(
    bench: Bench,
) -> None:
    bench.write("rubric.md", "Is the note usable?")
    own = CASE.replace("metrics: [usable]}", "metrics: [usable], model: judge-big}").replace(
        "criteria: Is the note polite?}", "criteria: Is the note polite?, model: judge-small}"
    )
    case = bench.case(own, name="notes.yaml")
    agreed = [
        measured("tone", "tone_ok", Statistic.KAPPA, 0.9, 30).model_copy(
            update={"judged_by": ["openai/judge-small"]}
        ),
        measured("usable", "usable_by_hand", Statistic.KAPPA, 0.9, 30).model_copy(
            update={"judged_by": ["openai/judge-1"]}
        ),
    ]
    found = unvalidated_judges([case], report(*agreed), POLICY, bench.root)
    assert list(found) == [("notes", "usable")]
    assert "the judge is now openai/judge-big" in found[("notes", "usable")]


def test_a_judge_the_agreement_does_not_measure_may_not_gate(bench: Bench) -> None:
    case = case_of(bench)
    unfilled = Agreement(
        case="notes", judge="tone", source="check", form="tone_ok", not_measured="nobody filled"
    )
    found = unvalidated_judges([case], report(unfilled), POLICY, bench.root)
    assert found[("notes", "tone")] == "not measured against people: nobody filled"
    assert "agreement.json does not name it" in found[("notes", "usable")]


def test_gating_marks_the_checks_and_says_so_once_per_judge(bench: Bench) -> None:
    case = case_of(bench)
    save_agreement(bench.root, report(measured("tone", "tone_ok", Statistic.KAPPA, 0.8, 30)))
    (marked,), notes = gate_judges([case], bench.root, POLICY)
    tone, usable_gate, long_enough = marked.scenarios[0].invariants
    assert tone.unvalidated_judge == ""
    assert usable_gate.unvalidated_judge.startswith("not measured against people")
    assert long_enough.unvalidated_judge == ""
    assert notes == [
        "judge check 'usable' of case 'notes' may not gate ([judge] min_agreement 0.60): not "
        "measured against people: agreement.json does not name it; its verdicts are shown as "
        "'unvalidated judge' and left out of the verdicts"
    ]


def test_without_min_agreement_every_judge_gates_and_nothing_is_read(bench: Bench) -> None:
    case = case_of(bench)
    (bench.root / "agreement.json").write_text("not json")
    assert gate_judges([case], bench.root, JudgeConfig(model="judge-1")) == ([case], [])
    assert gate_judges([case], bench.root, None) == ([case], [])
    with pytest.raises(AgreementError, match=r"agreement\.json: not readable as JSON"):
        gate_judges([case], bench.root, POLICY)


# through real runs -----------------------------------------------------------------------

GATED = """
scoring: {pass_threshold: 0.5}
validators:
  - mode: form
    metrics: [tone_ok]
    checks: {tone_ok: tone}
scenarios:
  - id: note
    user: write a note
    trials: 4
    invariants:
      tone: {gate: true, check: {type: llm_as_judge, criteria: Is the note polite?}}
"""
JUDGED = [0.9, 0.2, 0.8, 0.1]  # the judge passes trials 1 and 3


def gated_suite(bench: Bench, llm_server: ScriptedLLM, policy: str) -> None:
    bench.judged_agent(llm_server.url, policy)
    bench.write("cases/notes.yaml", GATED)
    for score in JUDGED:
        llm_server.openai_call({"score": score, "passed": score >= 0.5, "reason": "as it reads"})


def trial_file(run: Path, number: int) -> dict[str, Any]:
    (path,) = run.glob(f"trials/*/*/note#{number}/trial.json")
    return json.loads(path.read_text())


def test_an_unvalidated_judge_does_not_fail_the_run_and_says_why(
    bench: Bench, llm_server: ScriptedLLM
) -> None:
    gated_suite(bench, llm_server, "min_agreement = 0.6\nmin_samples = 4\n")
    done = bench.run("--parallel", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    why = (
        "its agreement with people was never measured: the suite has no agreement.json "
        "(sounding agreement RUN --save)"
    )
    assert done.stderr.count("judge check 'tone' of case 'notes' may not gate") == 1
    assert why in done.stderr
    assert "PASS  notes/note  4/4" in done.stdout
    assert "unvalidated judge tone: judge scored 0.20 (< 0.50): as it reads" in done.stdout
    run = bench.only_run()
    (tone,) = trial_file(run, 2)["score"]["checks"]
    assert (tone["unvalidated"], tone["result"]["status"]) == (why, "failed")
    assert tone["result"]["details"]["unvalidated_judge"] == why
    assert trial_file(run, 2)["verdict"] == "pass"
    (line,) = json.loads((run / "summary.json").read_text())["scenarios"]
    assert line["first_failure"].startswith("unvalidated judge tone: judge scored 0.20")
    assert line["gate"] is True
    page, notes = run / "report.html", run / "report.md"
    written = bench.sounding("report", str(run), "--html", str(page), "--markdown", str(notes))
    assert written.returncode == 0, written.stderr
    assert "invariant (gate) (unvalidated judge: not counted)" in page.read_text()
    for report in (page, notes):  # the passing line says what did not count, as the terminal
        assert "unvalidated judge tone: judge scored 0.20 (&lt; 0.50)" in report.read_text()


def test_people_who_disagree_keep_a_judge_from_gating_and_agreement_lets_it(
    bench: Bench, llm_server: ScriptedLLM
) -> None:
    gated_suite(bench, llm_server, "min_agreement = 0.6\nmin_samples = 4\n")
    assert bench.run("--parallel", "1").returncode == 0
    run = bench.only_run()
    bench.fill_form(run, {"tone_ok": [False, True, False, True]})  # the judge, reversed
    saved = bench.sounding("agreement", str(run), "--save")
    assert saved.returncode == 0, saved.stderr
    assert "notes/tone  may not gate: kappa with 'tone_ok' is -1.00, under min_agreement" in (
        saved.stdout
    )
    again = bench.run("--parallel", "1")  # the judge answers from its cache: same verdicts
    assert again.returncode == 0, again.stdout + again.stderr
    assert "kappa with 'tone_ok' is -1.00, under min_agreement 0.60" in again.stderr
    bench.fill_form(run, {"tone_ok": [True, False, True, False]})  # corrected: they agree
    saved = bench.sounding("agreement", str(run), "--save")
    assert "notes/tone  may gate" in saved.stdout
    document = json.loads((bench.root / "agreement.json").read_text())
    assert document["schema"] == "sounding.agreement/1" and document["run_id"] == run.name
    (tone,) = document["checks"]
    assert tone["judged_by"] == ["openai/judge-1"]
    assert len(tone["definitions"]) == 1 and re.fullmatch(r"[0-9a-f]{16}", tone["definitions"][0])
    rescored = bench.sounding("score", str(run))  # by today's rules: the judge gates now
    assert rescored.returncode == 1, rescored.stdout + rescored.stderr
    assert "re-scored 4 trials: 2 verdicts changed" in rescored.stdout
    assert "note#2: pass → fail  (tone: failed (unvalidated judge) → failed (judge scored" in (
        rescored.stdout
    )
    last = bench.run("--parallel", "1")
    assert last.returncode == 1, last.stdout + last.stderr
    assert "may not gate" not in last.stderr
    assert "FLAKY notes/note  2/4" in last.stdout
    assert "invariant tone: judge scored 0.20 (< 0.50)" in last.stdout
    assert llm_server.hits == 4  # every later verdict came from the cache
    # the check is reworded: people measured the judge on the old words
    cases = bench.root / "cases" / "notes.yaml"
    cases.write_text(cases.read_text().replace("polite", "courteous"))
    reworded = bench.sounding("agreement", str(run))
    assert reworded.returncode == 0, reworded.stderr
    assert "notes/tone  may not gate: kappa with 'tone_ok' was measured on verdicts given " in (
        reworded.stdout
    )
    cases.write_text(cases.read_text().replace("courteous", "polite"))
    assert "notes/tone  may gate" in bench.sounding("agreement", str(run)).stdout
    # the suite switches judges: what people measured of judge-1 says nothing of judge-2
    toml = bench.root / "sounding.toml"
    toml.write_text(toml.read_text().replace('model = "judge-1"', 'model = "judge-2"'))
    switched = (
        "kappa with 'tone_ok' was measured on the verdicts of openai/judge-1, and the judge is "
        "now openai/judge-2"
    )
    shown = bench.sounding("agreement", str(run))
    assert f"notes/tone  may not gate: {switched}" in shown.stdout
    rescored = bench.sounding("score", str(run))  # unvalidated again: as the run first stood
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr
    assert "re-scored 4 trials: 0 verdicts changed" in rescored.stdout


def test_too_few_trials_keep_a_judge_from_gating(bench: Bench, llm_server: ScriptedLLM) -> None:
    gated_suite(bench, llm_server, "min_agreement = 0.6\n")  # min_samples: 20 by default
    bench.run("--parallel", "1")
    run = bench.only_run()
    bench.fill_form(run, {"tone_ok": [True, False, True, False]})
    done = bench.sounding("agreement", str(run), "--json")
    gating = json.loads(done.stdout)["gating"]
    assert (gating["min_agreement"], gating["min_samples"]) == (0.6, 20)
    assert gating["judges"] == [
        {
            "case": "notes",
            "judge": "tone",
            "gates": False,
            "why": "kappa with 'tone_ok' was measured on 4 trials, fewer than min_samples 20",
        }
    ]


def test_an_unreadable_agreement_file_stops_the_run_before_any_trial(
    bench: Bench, llm_server: ScriptedLLM
) -> None:
    gated_suite(bench, llm_server, "min_agreement = 0.6\n")
    (bench.root / "agreement.json").write_text('{"schema": "sounding.agreement/9"}')
    done = bench.run()
    assert done.returncode == 2
    assert "agreement.json: schema 'sounding.agreement/9', expected 'sounding.agreement/1'" in (
        done.stderr
    )
    assert llm_server.hits == 0 and not (bench.root / "results").exists()
