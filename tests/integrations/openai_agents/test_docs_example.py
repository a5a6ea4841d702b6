"""docs/openai-agents.md's example, run as written against the local scripted server, with
the default offline gate model (no scripted answers)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import ctxgate

from .responses_server import ResponsesServer, call, function_outputs, text

DOC = Path(__file__).resolve().parents[3] / "docs" / "openai-agents.md"


def example() -> str:
    found = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert found, "docs/openai-agents.md has no python example"
    return found.group(1)


def test_the_example_is_at_most_25_lines() -> None:
    assert len(example().splitlines()) <= 25


ROWS = ["tool call gated before it runs", "user request comes from", "deny reaches the model as",
        "ask becomes", "backend error / timeout", "large result", "expand tool",
        "protected reads / datasets", "bounded record", "streaming", "parallel tool calls"]


def test_the_behaviour_table_has_the_shared_rows() -> None:
    """The same rows, in the same order, as the pydantic-ai and LangChain pages."""
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| behaviour |"):].split("\n\n", 1)[0]
    rows = [line.split("|")[1].strip() for line in table.splitlines()[2:]]
    assert rows == ROWS


def test_the_example_runs(tmp_path: Path) -> None:
    seen: dict[str, str] = {}

    def expand_failure(body):
        seen["digest"] = function_outputs(body)["c1"]
        archive_id = re.search(r"archive id ([0-9a-f]{12})", seen["digest"]).group(1)
        return [call("expand", {"id": archive_id, "grep": "FAILED"}, "c2")]

    def try_delete(body):
        seen["expand"] = function_outputs(body)["c2"]
        return [call("delete_path", {"path": "tests/"}, "c3")]

    def finish(body):
        seen["delete"] = function_outputs(body).get("c3", "")
        return [text("test_3000 failed.")]

    script = (tmp_path / "example.py")
    script.write_text(example(), encoding="utf-8")
    with ResponsesServer([[call("run_tests", {"path": "tests/"}, "c1")], expand_failure,
                          try_delete, finish, finish]) as server:
        src = str(Path(ctxgate.__file__).resolve().parents[1])  # this checkout's ctxgate
        path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
        env = dict(os.environ, OPENAI_BASE_URL=server.url, OPENAI_API_KEY="test-key",
                   OPENAI_AGENTS_DISABLE_TRACING="1", PYTHONPATH=path)
        proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                              input="n\n", capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("test_3000 failed.")
    assert seen["digest"].startswith("[ctxgate digest: run_tests output")
    assert "3001: test_3000 ... FAILED" in seen["expand"]
    assert seen["delete"].startswith("Error: Tool gate: this call looks destructive")
    assert (tmp_path / "demo.db").exists()
