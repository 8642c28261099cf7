"""Form mode: a person fills metrics on a blind, shuffled TOML form.

`export_form` lists, for every scored trial, the form metrics nothing measured, with the
prompt and the final response to read. Trials are shuffled and named by opaque tokens; the
token → trial mapping stays in `RUN_DIR/form-key.json`, never in the form. `import_form`
fills only those metrics, in trial.json and measures.json, and refuses — writing nothing —
to overwrite a metric that was measured: the harness computes a verdict, a form does not
work around it.
"""

from __future__ import annotations

import random
import secrets
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sounding._files import read_json, write_json, write_text
from sounding.record import RunRecord
from sounding.spec import SpecError, case_files, load_cases
from sounding.spec._validators import MetricKind
from sounding.store import (
    ResultsError,
    Trial,
    finished_trials,
    read_plan,
    read_trial,
    write_measures,
    write_trial,
)

FORM_SCHEMA = "sounding.form/1"
KEY_SCHEMA = "sounding.form-key/1"
KEY_FILE = "form-key.json"
FORM_FILE = "form.toml"
FILLED_REASON = "filled by hand on a form"

_HINTS: dict[str, tuple[str, str]] = {
    "bool": ("true", "true or false"),
    "number": ("0.0", "a number"),
    "string": ('""', "text"),
}
_ESCAPES = {ord('"'): '\\"', ord("\\"): "\\\\"} | {c: f"\\u{c:04x}" for c in [*range(0x20), 0x7F]}
"""What a TOML basic string escapes: quotes, backslashes and control characters."""


class FormError(Exception):
    """A form that cannot be exported or imported; says which file, trial and metric."""


@dataclass(frozen=True)
class FormResult:
    """What an export wrote, or an import filled: a path, counts, what is left open."""

    path: Path
    trials: int
    metrics: int
    left: int = 0


@dataclass
class _Key:
    """form-key.json: token → trial folder (relative to the run), and what forms filled."""

    run_id: str
    trials: dict[str, str] = field(default_factory=dict)
    filled: dict[str, list[str]] = field(default_factory=dict)

    def token(self, folder: str) -> str:
        for token, known in self.trials.items():
            if known == folder:
                return token
        token = secrets.token_hex(4)
        while token in self.trials:
            token = secrets.token_hex(4)
        self.trials[token] = folder
        return token

    def document(self) -> dict[str, Any]:
        return {"schema": KEY_SCHEMA, **asdict(self)}


def export_form(run_dir: Path, out: Path | None = None) -> FormResult:
    """Write the blind form of `run_dir` (default `RUN_DIR/form.toml`)."""
    kinds, trials = _form_kinds(run_dir), _trials(run_dir)
    key = _load_key(run_dir, missing_ok=True)
    entries: list[str] = []
    metrics = 0
    for folder, trial in trials:
        wanted = _open(trial, kinds)
        if wanted:
            token = key.token(folder.relative_to(run_dir).as_posix())
            entries.append(_entry(token, trial.record or RunRecord(), wanted))
            metrics += len(wanted)
    random.SystemRandom().shuffle(entries)
    path = out or run_dir / FORM_FILE
    write_json(run_dir / KEY_FILE, key.document())
    header = _header(key.run_id, _prompts_vary(trials, kinds))
    write_text(path, "\n".join([header, *entries]))
    return FormResult(path, len(entries), metrics)


def import_form(run_dir: Path, form: Path) -> FormResult:
    """Fill the form's metrics into the run; FormError (nothing written) on any refusal."""
    kinds = _form_kinds(run_dir)
    key = _load_key(run_dir, missing_ok=False)
    data = _read_form(form, key.run_id)
    plan: list[tuple[str, Path, dict[str, Any], dict[str, str]]] = []
    refusals: list[str] = []
    for index, entry in enumerate(data.get("trial") or []):
        found = _planned(index, entry, run_dir, key, kinds, refusals)
        if found is not None:
            plan.append(found)
    if refusals:
        raise FormError(f"{form}: nothing was imported:\n" + "\n".join(refusals))
    for token, folder, metrics, reasons in plan:
        _fill(folder, metrics, reasons)
        key.filled[token] = sorted({*key.filled.get(token, []), *metrics})
    trials = _trials(run_dir)
    if (run_dir / "measures.json").is_file():
        write_measures(run_dir, key.run_id, (trial for _, trial in trials))
    write_json(run_dir / KEY_FILE, key.document())
    filled = sum(len(metrics) for _, _, metrics, _ in plan)
    left = sum(len(_open(trial, kinds)) for _, trial in trials)
    return FormResult(form, sum(1 for p in plan if p[2]), filled, left)


# ---- reading the run ----------------------------------------------------------------------


def _form_kinds(run_dir: Path) -> dict[str, dict[str, MetricKind]]:
    """Case name → its form metrics and their kinds, from the run's suite as it is today."""
    try:
        suite = Path(read_plan(run_dir).suite)
    except ResultsError as exc:
        raise FormError(str(exc)) from None
    try:
        cases = load_cases(case_files(suite / "cases"), suite_dir=suite)
    except SpecError as exc:
        raise FormError(f"the suite's case files do not load:\n{exc}") from None
    kinds = {
        case.name: {m: v.kind(m) for v in case.validators if v.mode == "form" for m in v.metrics}
        for case in cases
    }
    if not any(kinds.values()):
        raise FormError(
            f"no case of {suite} declares a `mode: form` validator: nothing is filled by hand"
        )
    return kinds


def _trials(run_dir: Path) -> list[tuple[Path, Trial]]:
    """The finished trials of the run, in its plan's order, with their folders."""
    return list(finished_trials(run_dir, read_plan(run_dir)))


def _prompt(record: RunRecord) -> str:
    return "\n\n".join(record.user_turns) or record.task or ""


def _prompts_vary(
    trials: list[tuple[Path, Trial]], kinds: Mapping[str, Mapping[str, MetricKind]]
) -> bool:
    """Whether one scenario's prompt differs between cells (it would tell the cells apart)."""
    seen: dict[tuple[str, str], set[str]] = {}
    for _, trial in trials:
        if kinds.get(trial.case):
            place = (trial.case, trial.scenario)
            seen.setdefault(place, set()).add(_prompt(trial.record or RunRecord()))
    return any(len(prompts) > 1 for prompts in seen.values())


def _load_key(run_dir: Path, *, missing_ok: bool) -> _Key:
    path = run_dir / KEY_FILE
    if not path.is_file():
        if missing_ok:
            return _Key(read_json(run_dir / "run.json")["run_id"])
        raise FormError(f"{path} does not exist: export a form first (sounding form export)")
    document = read_json(path)
    if document.get("schema") != KEY_SCHEMA:
        raise FormError(f"{path} has schema {document.get('schema')!r}, expected '{KEY_SCHEMA}'")
    return _Key(document["run_id"], dict(document["trials"]), dict(document.get("filled", {})))


def _open(trial: Trial, kinds: Mapping[str, Mapping[str, MetricKind]]) -> dict[str, MetricKind]:
    """The form metrics of a scored trial that nothing has measured (nor filled) yet."""
    if trial.score is None:
        return {}
    measured = trial.metric_values()
    return {m: k for m, k in kinds.get(trial.case, {}).items() if measured.get(m) is None}


# ---- writing the form ----------------------------------------------------------------------


def _header(run_id: str, prompts_vary: bool) -> str:
    lines = [
        "# sounding form: fill each metric below by hand.",
        "# Uncomment a metric's line and give its value; a line left commented stays unfilled.",
        "# Optionally say why under [trial.reasons]. Then:",
        "#   sounding form import RUN_DIR THIS_FILE",
        "# Trials are shuffled and named by opaque tokens: nothing here says which",
        "# configuration ran. Do not edit the tokens.",
    ]
    if prompts_vary:
        lines.append(
            "# ! the prompt differs between configurations for some scenarios: reading it "
            "may tell you which one ran."
        )
    lines += ["", f"schema = {_text(FORM_SCHEMA)}", f"run = {_text(run_id)}", ""]
    return "\n".join(lines)


def _entry(token: str, record: RunRecord, wanted: Mapping[str, MetricKind]) -> str:
    lines = [
        "[[trial]]",
        f"token = {_text(token)}",
        f"prompt = {_text(_prompt(record))}",
        f"response = {_text(record.final_answer or '')}",
        "",
        "[trial.metrics]",
    ]
    for metric, kind in wanted.items():
        example, words = _HINTS[kind]
        lines.append(f"# {metric} = {example}    # {words}")
    lines += ["", "[trial.reasons]"]
    lines += [f'# {metric} = "why"' for metric in wanted]
    return "\n".join(lines) + "\n"


def _text(value: str) -> str:
    """A TOML string: basic on one line, multi-line basic when the text has lines."""
    if "\n" not in value:
        return '"' + value.translate(_ESCAPES) + '"'
    return '"""\n' + value.translate(_ESCAPES | {ord("\n"): "\n"}) + '"""'


# ---- reading the filled form ---------------------------------------------------------------


def _read_form(form: Path, run_id: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(form.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FormError(f"cannot read {form}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise FormError(f"{form} is not valid TOML: {exc}") from None
    if data.get("schema") != FORM_SCHEMA:
        raise FormError(f"{form}: schema is {data.get('schema')!r}, expected '{FORM_SCHEMA}'")
    if data.get("run") != run_id:
        raise FormError(
            f"{form} was exported from run {data.get('run')!r}, not from run '{run_id}': "
            "import it into the run it came from"
        )
    if not isinstance(data.get("trial", []), list):
        raise FormError(f"{form}: `trial` must be a list of [[trial]] tables")
    return data


def _planned(
    index: int,
    entry: Any,
    run_dir: Path,
    key: _Key,
    kinds: Mapping[str, Mapping[str, MetricKind]],
    refusals: list[str],
) -> tuple[str, Path, dict[str, Any], dict[str, str]] | None:
    """One [[trial]] table checked against the run; its refusals are added to `refusals`."""
    token = entry.get("token") if isinstance(entry, dict) else None
    if not isinstance(token, str) or token not in key.trials:
        refusals.append(f"trial[{index}]: token {token!r} is not a trial of this run's form")
        return None
    folder = run_dir / key.trials[token]
    trial = read_trial(folder)
    allowed = kinds.get(trial.case, {})
    metrics, reasons = entry.get("metrics") or {}, entry.get("reasons") or {}
    if not isinstance(metrics, dict) or not isinstance(reasons, dict):
        refusals.append(f"trial {token}: `metrics` and `reasons` must be tables ([trial.metrics])")
        return None
    before = len(refusals)
    for name, value in metrics.items():
        refusal = _refusal(name, value, allowed, trial, key.filled.get(token, []))
        if refusal is not None:
            refusals.append(f"trial {token}: {refusal}")
    for name, reason in reasons.items():
        if name not in metrics or not isinstance(reason, str):
            refusals.append(f"trial {token}: reasons.{name} must be text for a metric filled here")
    if len(refusals) > before:
        return None
    return token, folder, dict(metrics), {n: r for n, r in reasons.items() if r.strip()}


def _refusal(
    name: str,
    value: Any,
    allowed: Mapping[str, MetricKind],
    trial: Trial,
    filled: list[str],
) -> str | None:
    if name not in allowed:
        known = ", ".join(allowed) or "none"
        return f"'{name}' is not a form metric of case '{trial.case}' (form metrics: {known})"
    kind = allowed[name]
    if not _fits(value, kind):
        return f"{name} = {value!r} is not {_HINTS[kind][1]}"
    measured = trial.metric_values().get(name)  # by a check of that name, a validator, a form
    if measured is not None and name not in filled:
        return (
            f"metric '{name}' was measured ({measured!r}): a form fills only what nothing "
            "measured, it never overwrites a measurement"
        )
    return None


def _fits(value: Any, kind: MetricKind) -> bool:
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)


def _fill(folder: Path, metrics: dict[str, Any], reasons: dict[str, str]) -> None:
    trial = read_trial(folder)
    said = {name: reasons.get(name, FILLED_REASON) for name in metrics}
    filled = trial.model_copy(
        update={
            "metrics": {**trial.metrics, **metrics},
            "metric_reasons": {**trial.metric_reasons, **said},
        }
    )
    write_trial(folder, filled)
