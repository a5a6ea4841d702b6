"""Effects by name and subcommand through the real `ctxgate gate check` with the default local
backend: browser input, code run in a page, a plain read and a removing CLI subcommand are
judged by rule; the unrequested ones are refused and the same calls, asked for, run. Each
call is a real subprocess, named as a Claude Code hook names MCP tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
NEUTRAL = "summarise the README"


def check(tool: str, arguments: dict, request: str, tmp_path: Path) -> tuple[int, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env.update(PYTHONPATH=str(SRC), HOME=str(tmp_path / "home"),
               CTXGATE_HOME=str(tmp_path / "home" / "ctxgate"), CTXGATE_NO_DAEMON="1")
    proc = subprocess.run(
        [sys.executable, "-m", "ctxgate", "gate", "check", "--tool", tool,
         "--args", json.dumps(arguments), "--request", request, "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.parametrize(("tool", "arguments", "request_", "source"), [
    ("mcp__playwright__browser_click", {"element": "Buy now button", "ref": "e12"},
     "click the Buy now button on the checkout page", "tool_name"),
    ("mcp__playwright__browser_type", {"element": "search box", "ref": "e3", "text": "ctxgate"},
     "search the site for ctxgate", "tool_name"),
    ("mcp__chrome-devtools__evaluate_script", {"function": "() => document.title"},
     "run a script in the page that reads its title", "tool_name"),
    ("Bash", {"command": "restic forget abc --prune"},
     "forget snapshot abc in restic and prune", "shell_parser"),
])
def test_unrequested_they_are_refused_and_requested_they_run(
        tmp_path: Path, tool: str, arguments: dict, request_: str, source: str) -> None:
    code, record = check(tool, arguments, NEUTRAL, tmp_path)
    assert code in (1, 3) and record["outcome"] in ("deny", "ask"), record
    assert record["effect"]["source"] == source and record["effect"]["effect"] in (
        "external", "local_irreversible")
    code, record = check(tool, arguments, request_, tmp_path)
    assert code == 0 and record["outcome"] == "allow", record


@pytest.mark.parametrize("tool", ["mcp__supabase__list_storage_buckets",
                                  "mcp__azure__keyvault_secret_get"])
def test_a_plain_read_name_runs_unrequested(tmp_path: Path, tool: str) -> None:
    code, record = check(tool, {}, NEUTRAL, tmp_path)
    assert code == 0 and record["outcome"] == "allow", record
    assert record["effect"] == {**record["effect"], "effect": "read_only", "source": "tool_name"}
