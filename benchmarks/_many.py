"""The many-small-scenarios suite that bench_many.py runs and bench_rescore.py re-scores.

One case file of N scenarios, one trial each, three answer checks each; a Python callable
agent that answers at once with a fixed text. The floor script evaluates the same three
checks on the same answers with plain Python and writes one JSON file.
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
      - final_answer_not_contains: [refund, ticket-{n}]
      - final_answer_matches: 'order [A-Z]-\\d{{4}}'
"""

# The floor: the same three checks, read from the same case file, on the agent's answers.
FLOOR_PY = """\
import json
import re
import sys
from pathlib import Path

import yaml

suite, out = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, str(suite))
from agent import answer  # noqa: E402

case = yaml.load((suite / "cases" / "many.yaml").read_text(), Loader=yaml.CSafeLoader)
results = {}
for scenario in case["scenarios"]:
    text = answer(scenario["user"], None)
    contains, not_contains, matches = (next(iter(c.values())) for c in scenario["expect"])
    passed = (
        all(t in text for t in ([contains] if isinstance(contains, str) else contains))
        and not any(t in text for t in not_contains)
        and re.search(matches, text, re.MULTILINE) is not None
    )
    results[scenario["id"]] = "pass" if passed else "fail"
out.write_text(json.dumps(results, indent=1))
print(json.dumps({"pass": sum(v == "pass" for v in results.values()), "total": len(results)}))
"""


def write_suite(root: Path, scenarios: int) -> Path:
    """The suite folder: sounding.toml, agent.py and cases/many.yaml with `scenarios`."""
    (root / "cases").mkdir(parents=True)
    (root / "sounding.toml").write_text('[agent]\ncallable = "agent:answer"\n', encoding="utf-8")
    (root / "agent.py").write_text(AGENT_PY, encoding="utf-8")
    body = "".join(SCENARIO.format(n=n) for n in range(scenarios))
    (root / "cases" / "many.yaml").write_text(f"scenarios:\n{body}", encoding="utf-8")
    return root


def write_floor(folder: Path) -> Path:
    script = folder / "floor.py"
    script.write_text(FLOOR_PY, encoding="utf-8")
    return script
