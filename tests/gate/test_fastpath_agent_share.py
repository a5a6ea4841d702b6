"""How much of what real coding agents run the fast path decides without a model.

Corpus: 400 commands from public mini-swe-agent trajectories (MIT; source and licence in
``data/agent_commands/README.md``). That agent has only bash, so its file edits and script
runs are bash commands and about half of the corpus writes files or runs code; the share is
reported twice: over every command, and over the commands that are not file edits (what an
agent with a separate edit tool sends to bash). The ≥ 60 % target of issue 13 holds for the
second figure; the first is pinned as a regression floor.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ctxgate.gate.fastpath import is_read_only

CORPUS = Path(__file__).parent / "data" / "agent_commands" / "commands.jsonl"

EDIT = re.compile(
    r"(?<![0-9&])>>?\s*(?!/dev/null|&)[^\s&|;]"  # a redirection to a file (approximate)
    r"|\bsed\s+(-\w*\s+)*-i|\bsed\s+--in-place"
    r"|(^|[;&|]\s*|\s)(cp|mv|patch|tee|touch|mkdir|rm)\s"
    r"|\bgit\s+(checkout|apply|stash|reset|restore|commit|add)\b"
)
"""A command that edits files: what an agent with an edit tool would not send to bash."""


def load() -> list[str]:
    return [json.loads(line)["cmd"]
            for line in CORPUS.read_text(encoding="utf-8").splitlines()]


def test_agent_corpus_share(tmp_path):
    commands = load()
    assert len(commands) == 400
    allowed = [is_read_only(c, cwd=str(tmp_path)).read_only for c in commands]
    edits = [bool(EDIT.search(c)) for c in commands]
    share = sum(allowed) / len(commands)
    not_edits = [a for a, e in zip(allowed, edits, strict=True) if not e]
    share_not_edits = sum(not_edits) / len(not_edits)
    print(f"\nfast path on {len(commands)} mini-swe-agent commands: {sum(allowed)} allowed "
          f"({share:.1%}); of the {len(not_edits)} that are not file edits: "
          f"{sum(not_edits)} ({share_not_edits:.1%})")
    assert share_not_edits >= 0.60, share_not_edits
    assert share >= 0.45, share  # measured 0.510; a drop means the tables lost coverage


def test_no_allowed_agent_command_is_an_edit(tmp_path):
    """A consistency check of the two figures: the fast path allows no command that edits."""
    bad = [c for c in load() if is_read_only(c, cwd=str(tmp_path)).read_only
           and re.search(r"\bsed\s+(-\w*\s+)*-i|(^|[;&|]\s*)(cp|mv|rm|tee|patch)\s", c)]
    assert bad == []
