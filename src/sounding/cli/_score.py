"""`sounding score`: one record, many records, or a stored run re-scored by today's rules."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sounding._exit import ExitCode
from sounding._words import counted
from sounding.record import RECORD_FORMATS

if TYPE_CHECKING:
    from sounding.runner import BulkOptions
    from sounding.scoring import BulkScore
    from sounding.spec import Case, Scenario
from sounding.cli._common import (
    FilePath,
    RendererOptions,
    console,
    escaped,
    usage_error,
    warn,
)


class _BulkRenderings(RendererOptions):
    """`score`: `--junit`, `--html`, ... for records scored in bulk."""

    prefix = "With --records: "

    def renderers(self) -> Iterable[Any]:
        from sounding.report import bulk_renderers

        return bulk_renderers


@click.command(cls=_BulkRenderings)
@click.argument("target", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--records",
    "records_path",
    type=FilePath(exists=True, path_type=Path),
    help="Many records: a folder of them, a JSONL file of one record a line, or an OTLP "
    "export of many traces; each is matched to a scenario and scored.",
)
@click.option(
    "--match-field",
    default="scenario",
    show_default=True,
    help="With --records: the field naming a record's scenario (its metadata, or the root "
    "span's or resource's attribute of a trace).",
)
@click.option(
    "--min-pass-rate",
    type=click.FloatRange(0.0, 1.0),
    default=1.0,
    show_default=True,
    help="With --records: exit 1 when a scenario's pass rate (the point estimate) is below.",
)
@click.option(
    "--record",
    "record_path",
    type=FilePath(exists=True, path_type=Path),
    help="The run record: a JSONL trace, OpenAI or Anthropic messages, OTLP/JSON, a trial.json.",
)
@click.option(
    "--format",
    "record_format",
    type=click.Choice(RECORD_FORMATS),
    help="The record's format; detected when omitted.",
)
@click.option(
    "--workspace",
    type=FilePath(exists=True, file_okay=False, path_type=Path),
    help="The final workspace, for file and command checks.",
)
@click.option("--scenario", "scenario_id", help="The scenario of the case file to score against.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the versioned machine-readable result."
)
@click.option("--trace-id", help="The trace to score, when an OpenTelemetry export holds several.")
@click.option("--rejudge", is_flag=True, help="Ask the judge again instead of reading its cache.")
@click.option(
    "--write",
    is_flag=True,
    help="For a results folder: store the re-scored run as a new run folder beside it.",
)
def score(
    target: Path,
    records_path: Path | None,
    match_field: str,
    min_pass_rate: float,
    record_path: Path | None,
    record_format: str | None,
    workspace: Path | None,
    scenario_id: str | None,
    as_json: bool,
    trace_id: str | None,
    rejudge: bool,
    write: bool,
    **outputs: Path | None,
) -> None:
    """Score a record against a case file (TARGET is a case file), many records with
    --records, or re-score a stored run (TARGET is a results folder) by today's case files
    without running anything.

    The suite's judge (`[judge]` of the sounding.toml above the case file) judges."""
    if records_path is not None:
        if record_path is not None or trace_id is not None or workspace is not None or write:
            usage_error(
                "--records scores many records: leave out --record, --trace-id, --workspace "
                "and --write (each record of an OTLP export is scored, a bare record has no "
                "workspace)"
            )
        from sounding.runner import BulkOptions

        options = BulkOptions(scenario_id, match_field, min_pass_rate, record_format, rejudge)
        raise SystemExit(_score_many(target, records_path, options, as_json, outputs))
    if any(outputs.values()):
        usage_error("--junit and --html report records scored in bulk: give --records PATH")
    if target.is_dir():
        raise SystemExit(_rescore(target, as_json=as_json, rejudge=rejudge, write=write))
    if write:
        usage_error("--write stores a re-scored run: give a results folder, not a case file")
    from sounding.record import RecordError
    from sounding.report._score import print_score, score_document
    from sounding.runner import RunSetupError, SuiteConfigError, score_record
    from sounding.spec import SpecError, load_case
    from sounding.store import ResultsError

    if record_path is None:
        usage_error("score CASE_FILE needs --record RECORD (the run record to score)")
    try:
        case = load_case(target)
        scenario = _pick_scenario(case, scenario_id)
        result = score_record(
            target,
            scenario,
            record_path,
            record_format=record_format,
            trace_id=trace_id,
            workspace=workspace,
            rejudge=rejudge,
        )
    except RecordError as exc:
        if exc.needs == "trace_id":
            exc = exc.with_fix("name one with --trace-id ID, or export a single trace")
        usage_error(str(exc))
    except (SpecError, ResultsError, SuiteConfigError, RunSetupError) as exc:
        usage_error(str(exc))
    if as_json:
        click.echo(json.dumps(score_document(case, scenario, result), indent=1))
    else:
        print_score(console(), case, scenario, result)
    codes = {"pass": ExitCode.PASS, "fail": ExitCode.FAIL}
    raise SystemExit(codes.get(result.verdict.value, ExitCode.ERROR))


def _score_many(
    target: Path,
    records: Path,
    options: BulkOptions,
    as_json: bool,
    outputs: dict[str, Path | None],
) -> ExitCode:
    """`score CASE --records PATH`: 2 when a record could not be read or none was scored,
    else 1 when a scenario's pass rate is under --min-pass-rate, 3 when every record of a
    scenario was left without a verdict, 0 otherwise."""
    from sounding.report import bulk_document, bulk_renderers, print_bulk
    from sounding.runner import RunSetupError, SuiteConfigError, score_records
    from sounding.spec import SpecError, load_case
    from sounding.store import ResultsError

    if target.is_dir():
        usage_error("--records scores records against a case file: give one as TARGET")
    try:
        case = load_case(target)
        if options.scenario is not None:
            _pick_scenario(case, options.scenario)
        bulk = score_records(case, records, options)
    except (SpecError, SuiteConfigError, RunSetupError) as exc:
        usage_error(str(exc))
    for renderer in bulk_renderers:
        path = outputs.get(renderer.name)
        if path is not None:
            try:
                renderer.write(bulk, path)
            except ResultsError as exc:
                usage_error(str(exc))
            console(stderr=as_json).print(f"wrote {renderer.title}: {escaped(str(path))}")
    if as_json:
        click.echo(json.dumps(bulk_document(bulk), indent=1))
    else:
        print_bulk(console(), bulk)
    return _bulk_code(bulk)


def _bulk_code(bulk: BulkScore) -> ExitCode:
    if bulk.malformed or not bulk.scored:
        why = "records could not be read" if bulk.malformed else "no record matched a scenario"
        console(stderr=True).print(f"[red]error:[/] {why} (listed above): fix them, or match them")
        return ExitCode.USAGE
    if bulk.below():
        return ExitCode.FAIL
    return ExitCode.ERROR if bulk.undecided() else ExitCode.PASS


def _pick_scenario(case: Case, scenario_id: str | None) -> Scenario:
    if scenario_id is not None:
        try:
            return case.scenario(scenario_id)
        except KeyError as exc:
            usage_error(str(exc.args[0]))
    if len(case.scenarios) == 1:
        return case.scenarios[0]
    known = ", ".join(s.id for s in case.scenarios)
    usage_error(
        f"{case.path} has {len(case.scenarios)} scenarios: name one with --scenario ({known})"
    )


def _rescore(run_dir: Path, *, as_json: bool, rejudge: bool, write: bool) -> ExitCode:
    from sounding.runner import RunSetupError, SuiteConfigError, judge_for_run, rescore_run
    from sounding.scoring import TrialVerdict
    from sounding.spec import SpecError
    from sounding.store import ResultsError

    try:
        judge = judge_for_run(run_dir, rejudge=rejudge)
        found = rescore_run(run_dir, judge=judge, write=write)
    except (ResultsError, SpecError, SuiteConfigError, RunSetupError) as exc:
        usage_error(str(exc))
    if as_json:
        click.echo(json.dumps(found.document(), indent=1))
    else:
        for change in found.changes:
            click.echo(f"{change.label}: {change.before} → {change.after}  ({change.check})")
        changed = counted(len(found.changes), "verdict")
        click.echo(f"re-scored {counted(found.trials, 'trial')}: {changed} changed")
        if found.written is not None:
            click.echo(f"wrote the re-scored run: {found.written}")
    for note in found.judges_switched():  # on stderr, with --json too
        warn(note)
    if found.verdicts[TrialVerdict.ERROR]:
        return ExitCode.ERROR
    return ExitCode.FAIL if found.verdicts[TrialVerdict.FAIL] else ExitCode.PASS
