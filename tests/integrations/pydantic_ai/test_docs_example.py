"""docs/pydantic-ai.md: the example runs as printed (the real local gate, the home archive),
is at most 25 lines, and the behaviour table has exactly the rows the three adapters share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "pydantic-ai.md"

ROWS = ["tool call gated before it runs", "user request comes from", "deny reaches the model as",
        "ask becomes", "backend error / timeout", "large result", "expand tool",
        "protected reads / datasets", "bounded record", "streaming", "parallel tool calls"]


def _example() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("```python\n") + len("```python\n")
    return text[start:text.index("```\n", start)]


def test_the_example_runs_and_shows_a_digest_and_a_denial(tmp_path):
    code = _example()
    assert len(code.splitlines()) <= 25
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    env = dict(os.environ, CTXGATE_HOME=str(tmp_path / "home"),
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=240, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("[ctxgate digest: run_tests output, 49,916 bytes, 3,001 lines")
    assert "3001| test_3000 FAILED: timeout" in out
    assert "Tool gate: this call looks destructive or irreversible" in out
    assert "dropped customers" not in out
    digest = out.split("\n\nError: Tool gate:")[0]
    assert len(digest.encode()) < 1_200


def test_the_behaviour_table_has_the_shared_rows_in_order():
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Behaviour"):].split("\n## ")[0]
    rows = [line.split("|")[1].strip() for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| |")]
    assert rows == ROWS
