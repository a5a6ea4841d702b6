"""`ctxgate mcp learn` in the real Claude Code CLI: a server the client runs itself never
passes through ctxgate's proxy, so the PreToolUse hook knows its tools only by name until
`mcp learn` has stored their annotations. `tidy_notes` (tests/integrations/notes_server.py)
is annotated destructive and really deletes; its name does not say so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .messages_server import Turn
from .test_claude_code import REPO, _env, content_text, project, run_claude  # noqa: F401

TOOLS = "mcp__notes__tidy_notes,mcp__notes__list_notes"
REQUEST = "Summarise the README for me."


def _notes(root: Path) -> tuple[Path, list[str], tuple[str, ...]]:
    notes = root / "notes"
    notes.mkdir()
    for name in ("trip.txt", "budget.txt"):
        (notes / name).write_text(f"{name}: the only copy\n", encoding="utf-8")
    server = [sys.executable, "-m", "tests.integrations.notes_server"]
    config = {"mcpServers": {"notes": {
        "type": "stdio", "command": server[0], "args": server[1:],
        "env": {"NOTES_DIR": str(notes), "PYTHONPATH": str(REPO)}}}}
    path = root.parent / "mcp.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return notes, server, ("--mcp-config", str(path), "--strict-mcp-config")


def _ctxgate(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxgate", *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=180)


def _judged(env: dict[str, str]) -> dict:
    proc = _ctxgate(env, "gate", "check", "--tool", "mcp__notes__tidy_notes", "--args", "{}",
                    "--request", REQUEST, "--json")
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout)


def test_learned_annotations_stop_an_unrequested_destructive_call_in_claude_code(
        project: Path) -> None:  # noqa: F811
    notes, server, args = _notes(project)
    env = dict(_env(project.parent), NOTES_DIR=str(notes), CTXGATE_NO_DAEMON="1")
    before = _judged(env)
    assert (before.get("effect") or {}).get("source") != "mcp_annotations", before

    learned = _ctxgate(env, "mcp", "learn", "--name", "notes", "--", *server)
    assert learned.returncode == 0, learned.stderr
    assert "remembered 2 tools of 'notes'" in learned.stdout, learned.stdout
    after = _judged(env)
    assert after["effect"]["source"] == "mcp_annotations", after
    assert after["outcome"] in ("deny", "ask"), after

    turns = [Turn(tool="mcp__notes__list_notes", tool_input={}),
             Turn(tool="mcp__notes__tidy_notes", tool_input={})]
    s = run_claude(project, REQUEST, turns, allowed_tools=TOOLS, extra_args=args)
    listing, tidy = (content_text(r) for r in s.tool_results)
    assert listing.split() == ["budget.txt", "trip.txt"], listing
    assert "Tool gate:" in tidy and "removed" not in tidy, tidy
    assert sorted(p.name for p in notes.iterdir()) == ["budget.txt", "trip.txt"]

    # the control: without the hooks the same call really deletes the notes
    s = run_claude(project, REQUEST, turns[1:], allowed_tools=TOOLS, extra_args=args,
                   hooks=False)
    assert "removed 2 notes" in content_text(s.tool_result)
    assert list(notes.iterdir()) == []
