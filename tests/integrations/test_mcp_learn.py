"""`ctxgate mcp learn`: a real stdio MCP server's annotations, remembered for the hooks.

The real `@modelcontextprotocol/server-filesystem` (npm) is started once by the CLI; after
that, the real `ctxgate gate check` judges its `mcp__fs__*` calls by the server's own
annotations, as a hook in a Claude Code session that runs the server itself would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
NODE_BIN = Path(__file__).resolve().parent / "node" / "node_modules" / ".bin"


def ctxgate(home: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env.update(PYTHONPATH=str(SRC), CTXGATE_HOME=str(home), CTXGATE_NO_DAEMON="1")
    return subprocess.run([sys.executable, "-m", "ctxgate", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def check(home: Path, tool: str, arguments: dict) -> dict:
    proc = ctxgate(home, "gate", "check", "--tool", tool, "--args", json.dumps(arguments),
                   "--request", "summarise the README", "--json")
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout)


def test_learned_annotations_judge_the_servers_calls(tmp_path: Path) -> None:
    server = NODE_BIN / "mcp-server-filesystem"
    assert server.exists(), f"{server} missing: run scripts/install-test-deps (npm ci)"
    root = tmp_path / "srv"
    root.mkdir()
    home = tmp_path / "home"
    call = ("mcp__fs__write_file", {"path": str(root / "notes.txt"), "content": "x"})
    before = check(home, *call)
    assert before["effect"]["source"] != "mcp_annotations"  # only the name is known

    proc = ctxgate(home, "mcp", "learn", "--name", "fs", "--", str(server), str(root))
    assert proc.returncode == 0, proc.stderr
    assert "remembered 14 tools of 'fs'" in proc.stdout and "annotated" in proc.stdout
    stored = json.loads((home / "mcp-tools.json").read_text())
    assert stored["servers"]["fs"]["write_file"]["annotations"]["readOnlyHint"] is False

    after = check(home, *call)
    assert after["outcome"] in ("deny", "ask") and after["effect"]["source"] == "mcp_annotations"
    assert "annotates write_file: readOnlyHint=false" in after["effect"]["evidence"]
    # a read-only claim of a server the user does not trust lowers nothing: other sources judge
    read = check(home, "mcp__fs__read_text_file", {"path": str(root / "notes.txt")})
    assert read["outcome"] == "allow" and read["effect"]["source"] != "mcp_annotations"


def test_a_server_that_does_not_answer_or_start_stores_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    hang = ctxgate(home, "mcp", "learn", "--name", "hang", "--timeout", "2", "--",
                   sys.executable, "-c", "import time; time.sleep(60)")
    assert hang.returncode == 2
    assert "did not list its tools within 2 s" in hang.stderr and "--timeout" in hang.stderr
    missing = ctxgate(home, "mcp", "learn", "--name", "gone", "--", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "could not list the tools of" in missing.stderr
    assert not (home / "mcp-tools.json").exists()
