"""The Markdown summary for a pull-request comment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sounding.report import markdown_report
from sounding.store import load_results


def test_a_totals_line_a_table_and_folded_failures(mixed_run: Path) -> None:
    text = markdown_report(load_results(mixed_run))
    lines = text.splitlines()
    assert lines[0] == f"### sounding run {mixed_run.name}"
    assert "**ERRORED**: 1 pass, 2 flaky, 1 fail, 1 error (5 scenarios, 15 trials)" in lines
    table = lines[: lines.index("#### pass@k and pass^k at every k")]
    rows = [line for line in table if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| verdict | scenario | passes/trials | pass@k | pass^k |")
    assert [row.split(" | ")[0] for row in rows[1:]] == [
        "| PASS",
        "| FAIL",
        "| FLAKY",
        "| FLAKY",
        "| ERROR",
    ]
    flaky = next(row for row in rows if "basic/flaky-all" in row)
    assert "| 2/3 | 1.00 (k=3) | 0.00 (k=3) |" in flaky
    assert text.count("<details>") == text.count("</details>") == 5  # each not passing, curves
    assert "<summary>FLAKY basic/flaky-all: 1 trial did not pass</summary>" in text
    assert "| 0/0 (3 errors: 3 agent) |" in next(row for row in rows if "basic/broken" in row)


def test_untrusted_text_is_escaped_and_kept_in_its_cell(
    mixed_run: Path, copy_run: Any, edit_json: Any
) -> None:
    text = markdown_report(load_results(mixed_run))
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    run = copy_run(mixed_run)
    summary = load_results(run).finished().model_dump(mode="json")
    summary["scenarios"][1]["first_failure"] = "a | b\nnext line " + "x" * 300
    edit_json(run / "summary.json", scenarios=summary["scenarios"])
    row = next(line for line in markdown_report(load_results(run)).splitlines() if "/wrong" in line)
    assert "a \\| b next line x" in row and "x… | 122 [121 – 123] | $0.0020 [" in row
    assert row.count(" | ") == 7  # eight cells: the pipe in the text did not add one


def test_pass_at_k_and_pass_hat_k_at_every_k(
    mixed_run: Path, copy_run: Any, as_run_before_curves: Any
) -> None:
    text = markdown_report(load_results(mixed_run))
    curves = text[text.index("#### pass@k and pass^k at every k") :]
    assert "| cell | k | scenarios | pass@k | pass^k |" in curves
    means = [line for line in curves.splitlines() if line.startswith("| default |")]
    assert means == [
        "| default | 1 | 4 | 0.583 | 0.583 |",
        "| default | 2 | 4 | 0.750 | 0.417 |",
        "| default | 3 | 4 | 0.750 | 0.250 |",
    ]
    assert "| basic/flaky-all | 0.667 · 1.000 · 1.000 | 0.667 · 0.333 · 0.000 |" in curves
    assert "| basic/broken | – | – |" in curves
    run = copy_run(mixed_run)
    as_run_before_curves(run)
    older = markdown_report(load_results(run))
    assert older[older.index("#### pass@k and pass^k at every k") :] == curves
