"""The many-small-scenarios suite that bench_many.py runs and bench_rescore.py re-scores.

One case file of N scenarios, one trial each, three answer checks each (one scenario in
ten fails); a Python callable agent that answers at once with a fixed text. The floor
scripts evaluate the same three checks with plain Python: on the agent's answers
(bench_many), or on the stored records (bench_rescore).
"""

from __future__ import annotations

from pathlib import Path

ANSWER = "Your order A-1001 has shipped with the carrier and should arrive on Tuesday."

AGENT_PY = f'''\
"""The agent under test: answers every prompt at once with the same text."""

ANSWER = {ANSWER!r}


def answer(prompt, context):
    return ANSWER
'''

SCENARIO = """\
  - id: s{n:05d}
    user: Where is order number {n}?
    expect:
      - final_answer_contains: shipped
      - final_answer_not_contains: [refund, {unwanted}]
      - final_answer_matches: 'order [A-Z]-\\d{{4}}'
"""

# The three checks of a scenario, by hand, as the floor scripts evaluate them.
VERDICT_PY = """\
import re


def verdict(expect, text):
    contains, not_contains, matches = (next(iter(c.values())) for c in expect)
    passed = (
        text is not None
        and all(t in text for t in ([contains] if isinstance(contains, str) else contains))
        and not any(t in text for t in not_contains)
        and re.search(matches, text, re.MULTILINE) is not None
    )
    return "pass" if passed else "fail"
"""

# The floor of bench_many: the same checks, read from the same case file, on the answers,
# and the same trial folders written (a trial.json as large as sounding's, written under a
# temporary name and renamed into place).
FLOOR_PY = """\
import json
import os
import sys
from pathlib import Path

import yaml

from floor_checks import verdict

suite, sample, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
sys.path.insert(0, str(suite))
from agent import answer  # noqa: E402

padding = "x" * len(sample.read_bytes())
case = yaml.load((suite / "cases" / "many.yaml").read_text(), Loader=yaml.CSafeLoader)
passed = 0
for scenario in case["scenarios"]:
    text = answer(scenario["user"], None)
    found = verdict(scenario["expect"], text)
    passed += found == "pass"
    folder = out / "trials" / "default" / "many" / f"{scenario['id']}#1"
    folder.mkdir(parents=True)
    data = json.dumps({"verdict": found, "answer": text, "padding": padding})
    (folder / ".tmp-trial.json").write_text(data)
    os.replace(folder / ".tmp-trial.json", folder / "trial.json")
print(json.dumps({"pass": passed, "total": len(case["scenarios"])}))
"""

# The floor of bench_rescore: the same checks on the run records stored in trial.json.
RESCORE_FLOOR_PY = """\
import json
import sys
from pathlib import Path

import yaml

from floor_checks import verdict

suite, run_dir = Path(sys.argv[1]), Path(sys.argv[2])
case = yaml.load((suite / "cases" / "many.yaml").read_text(), Loader=yaml.CSafeLoader)
expects = {s["id"]: s["expect"] for s in case["scenarios"]}
verdicts = {"pass": 0, "fail": 0}
for path in sorted(run_dir.glob("trials/*/*/*/trial.json")):
    trial = json.loads(path.read_bytes())
    verdicts[verdict(expects[trial["scenario"]], trial["record"]["final_answer"])] += 1
print(json.dumps(verdicts))
"""


def unwanted(n: int) -> str:
    """What scenario `n` must not find in the answer: one in ten finds it, and fails."""
    return "carrier" if n % 10 == 9 else f"ticket-{n}"


def write_suite(root: Path, scenarios: int, trials: int = 1) -> Path:
    """The suite folder: sounding.toml, agent.py and cases/many.yaml with `scenarios`, each
    run `trials` times."""
    (root / "cases").mkdir(parents=True)
    (root / "sounding.toml").write_text('[agent]\ncallable = "agent:answer"\n', encoding="utf-8")
    (root / "agent.py").write_text(AGENT_PY, encoding="utf-8")
    body = "".join(SCENARIO.format(n=n, unwanted=unwanted(n)) for n in range(scenarios))
    head = f"defaults: {{trials: {trials}}}\n"
    (root / "cases" / "many.yaml").write_text(f"{head}scenarios:\n{body}", encoding="utf-8")
    return root


def write_floor(folder: Path, text: str = FLOOR_PY) -> Path:
    """A floor script (FLOOR_PY or RESCORE_FLOOR_PY) and the checks it imports."""
    (folder / "floor_checks.py").write_text(VERDICT_PY, encoding="utf-8")
    script = folder / ("floor.py" if text == FLOOR_PY else "rescore_floor.py")
    script.write_text(text, encoding="utf-8")
    return script
