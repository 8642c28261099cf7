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

# The floor of bench_many: the same checks, read from the same case file, on the answers.
FLOOR_PY = """\
import json
import sys
from pathlib import Path

import yaml

from floor_checks import verdict

suite, out = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, str(suite))
from agent import answer  # noqa: E402

case = yaml.load((suite / "cases" / "many.yaml").read_text(), Loader=yaml.CSafeLoader)
results = {s["id"]: verdict(s["expect"], answer(s["user"], None)) for s in case["scenarios"]}
out.write_text(json.dumps(results, indent=1))
print(json.dumps({"pass": sum(v == "pass" for v in results.values()), "total": len(results)}))
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


def write_suite(root: Path, scenarios: int) -> Path:
    """The suite folder: sounding.toml, agent.py and cases/many.yaml with `scenarios`."""
    (root / "cases").mkdir(parents=True)
    (root / "sounding.toml").write_text('[agent]\ncallable = "agent:answer"\n', encoding="utf-8")
    (root / "agent.py").write_text(AGENT_PY, encoding="utf-8")
    body = "".join(SCENARIO.format(n=n, unwanted=unwanted(n)) for n in range(scenarios))
    (root / "cases" / "many.yaml").write_text(f"scenarios:\n{body}", encoding="utf-8")
    return root


def write_floor(folder: Path, text: str = FLOOR_PY) -> Path:
    """A floor script (FLOOR_PY or RESCORE_FLOOR_PY) and the checks it imports."""
    (folder / "floor_checks.py").write_text(VERDICT_PY, encoding="utf-8")
    script = folder / ("floor.py" if text == FLOOR_PY else "rescore_floor.py")
    script.write_text(text, encoding="utf-8")
    return script
