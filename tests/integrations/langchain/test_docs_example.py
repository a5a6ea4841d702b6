"""The runnable example of docs/langchain.md runs as written, with the default local gate."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "langchain.md"
ROWS = ["tool call gated before it runs", "user request comes from", "deny reaches the model as",
        "ask becomes", "backend error / timeout", "large result", "expand tool",
        "protected reads / datasets", "bounded record", "streaming", "parallel tool calls"]


def test_the_example_runs_and_the_model_reads_the_refusal(tmp_path):
    example = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S).group(1)
    assert len(example.strip().splitlines()) <= 25
    script = tmp_path / "example.py"
    script.write_text(example, encoding="utf-8")
    env = dict(os.environ, CTXGATE_HOME=str(tmp_path / "home"))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=240, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Error: Tool gate: this call looks destructive"), out.stdout


def test_the_behaviour_table_has_the_shared_rows_in_order():
    section = DOC.read_text(encoding="utf-8").split("## Behaviour", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1].strip() for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| |")]
    assert rows == ROWS
