"""`ctxgate hook install` and `ctxgate mcp install` against real temporary HOME and project
directories, read back by the real Claude Code and Codex CLIs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .test_claude_code import CLAUDE, content_text, make_project, run_claude

REPO = Path(__file__).resolve().parents[2]
CODEX = Path(__file__).resolve().parent / "node" / "node_modules" / ".bin" / "codex"

USER_HOOK = {"matcher": "Write", "hooks": [{"type": "command", "command": "my-linter --fix"}]}


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAUDE_", "CODEX_", "CTXGATE_", "ANTHROPIC_"))}
    env.update(HOME=str(home), CTXGATE_HOME=str(home / ".ctxgate"),
               PYTHONPATH=str(REPO / "src") + os.pathsep + str(REPO), **extra)
    return env


def ctxgate(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxgate", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=180)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


@pytest.mark.parametrize(("harness", "scope", "where"), [
    ("claude-code", "user", "home/.claude/settings.json"),
    ("claude-code", "project", "project/.claude/settings.json"),
    ("codex", "user", "home/.codex/hooks.json"),
    ("codex", "project", "project/.codex/hooks.json"),
])
def test_hook_install_merges_keeps_backs_up_and_uninstalls(
        harness: str, scope: str, where: str, dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    path = home.parent / where
    path.parent.mkdir(parents=True)
    mine = {"model": "opus", "hooks": {"PreToolUse": [USER_HOOK]}}
    path.write_text(json.dumps(mine), encoding="utf-8")
    env = env_for(home)
    args = ["hook", "install", "--harness", harness, "--scope", scope]

    dry = ctxgate(args, env, project)
    assert dry.returncode == 0, dry.stderr
    assert str(path) in dry.stderr and json.loads(path.read_text()) == mine  # nothing written
    assert "hook pre" in dry.stdout

    first = ctxgate([*args, "--write"], env, project)
    assert first.returncode == 0, first.stderr
    written = json.loads(path.read_text())
    assert written["model"] == "opus"
    pre = written["hooks"]["PreToolUse"]
    assert pre[0] == USER_HOOK and len(pre) == 2 and "hook pre" in pre[1]["hooks"][0]["command"]
    assert ("--harness codex" in pre[1]["hooks"][0]["command"]) == (harness == "codex")
    assert json.loads(Path(str(path) + ".ctxgate-backup").read_text()) == mine

    again = ctxgate([*args, "--write"], env, project)
    assert again.returncode == 0 and "nothing written" in again.stdout
    assert json.loads(path.read_text()) == written  # idempotent

    gone = ctxgate([*args, "--write", "--uninstall"], env, project)
    assert gone.returncode == 0, gone.stderr
    assert json.loads(path.read_text()) == mine


def test_hook_install_rejects_unknown_harness_and_broken_files(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    env = env_for(home)
    cursor = ctxgate(["hook", "install", "--harness", "cursor"], env, project)
    assert cursor.returncode != 0 and "claude-code, codex" in cursor.stderr
    bad = project / ".claude" / "settings.json"
    bad.parent.mkdir()
    bad.write_text("{not json", encoding="utf-8")
    refused = ctxgate(["hook", "install", "--scope", "project", "--write"], env, project)
    assert refused.returncode != 0 and "not readable JSON" in refused.stderr
    assert bad.read_text() == "{not json"


def test_hook_install_refuses_a_gate_that_cannot_decide(dirs: tuple[Path, Path]) -> None:
    """A backend that cannot load would turn every hook call into a block: nothing is written."""
    home, project = dirs
    env = env_for(home, CTXGATE_GATE__BACKEND="tests.integrations.scripted_backends:broken")
    proc = ctxgate(["hook", "install", "--scope", "project", "--write"], env, project)
    assert proc.returncode != 0
    assert "would block every tool call" in proc.stderr and "nothing was written" in proc.stderr
    assert not (project / ".claude").exists()


def test_written_project_hooks_block_rm_rf_in_real_claude_code(tmp_path: Path) -> None:
    """The file `hook install --scope project --write` wrote is what Claude Code runs."""
    project = make_project(tmp_path)
    env = env_for(tmp_path / "home")
    proc = ctxgate(["hook", "install", "--scope", "project", "--write"], env, project)
    assert proc.returncode == 0, proc.stderr
    s = run_claude(project, "What is in the README?", "rm -rf victim", hooks=False)
    assert (project / "victim" / "keep.txt").exists()
    assert s.tool_result.get("is_error") is True and "Tool gate:" in content_text(s.tool_result)


def test_mcp_install_is_read_by_real_codex_and_claude(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    env = env_for(home)
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3"\n\n[mcp_servers.other]\ncommand = "other-server"\n',
                      encoding="utf-8")
    proc = ctxgate(["mcp", "install", "--client", "codex", "--write", "--request", "fix tests"],
                   env, project)
    assert proc.returncode == 0, proc.stderr
    data = tomllib.loads(config.read_text())
    assert data["model"] == "o3" and data["mcp_servers"]["other"]["command"] == "other-server"
    assert data["mcp_servers"]["ctxgate"]["args"][-2:] == ["--request", "fix tests"]
    listed = subprocess.run([str(CODEX), "mcp", "list", "--json"], env=env, cwd=project,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert {"ctxgate", "other"} <= {s["name"] for s in json.loads(listed.stdout)}
    gone = ctxgate(["mcp", "install", "--client", "codex", "--write", "--uninstall"], env,
                   project)
    assert gone.returncode == 0 and "ctxgate" not in tomllib.loads(config.read_text()).get(
        "mcp_servers", {})

    proc = ctxgate(["mcp", "install", "--client", "claude-code", "--write"], env, project)
    assert proc.returncode == 0, proc.stderr
    claude = subprocess.run([str(CLAUDE), "mcp", "list"], env=env, cwd=project,
                            capture_output=True, text=True, timeout=120)
    assert "ctxgate:" in claude.stdout and "Connected" in claude.stdout, claude.stdout


def test_mcp_install_never_rewrites_a_toml_form_it_cannot_edit(tmp_path: Path) -> None:
    from ctxgate.errors import UsageError
    from ctxgate.integrations.mcp import install as inst

    config = tmp_path / "config.toml"
    text = 'mcp_servers = { ctxgate = { command = "old" } }\n'
    config.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match="edit"):
        inst.plan("codex", config, inst.server_entry("python3", None))
    config.write_text("[broken\n", encoding="utf-8")
    with pytest.raises(UsageError, match="not valid TOML"):
        inst.plan("codex", config, inst.server_entry("python3", None))
    assert config.read_text() == "[broken\n"


def test_hook_merge_replaces_an_older_ctxgate_entry_and_keeps_the_rest() -> None:
    from ctxgate.integrations.hooks.harness import get_harness
    from ctxgate.integrations.hooks.install import merge_hooks, remove_hooks

    entries = get_harness("claude-code").hook_entries("/new/python -m ctxgate")
    old = {"hooks": {"PreToolUse": [
        USER_HOOK, {"matcher": "*", "hooks": [
            {"type": "command", "command": "/old/python -m ctxgate hook pre --approve"},
            {"type": "command", "command": "audit-log"}]}]}}
    merged = merge_hooks(old, entries)
    commands = [h["command"] for g in merged["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert commands == ["my-linter --fix", "audit-log", "/new/python -m ctxgate hook pre"]
    assert remove_hooks(merged)["hooks"]["PreToolUse"] == [
        USER_HOOK, {"matcher": "*", "hooks": [{"type": "command", "command": "audit-log"}]}]


def test_the_launcher_command_install_writes_is_recognised_as_ours() -> None:
    """`hook install` writes `python -S …/ctxgate/_launch.py hook pre`; a second install must
    replace that entry (idempotent) and --uninstall must find it."""
    from ctxgate.cli.fast_hook import hook_command_prefix
    from ctxgate.integrations.hooks.install import is_ours

    for event in ("pre", "post --harness codex"):
        assert is_ours({"type": "command", "command": f"{hook_command_prefix()} hook {event}"})
    assert not is_ours({"type": "command", "command": "python3 my_launch.py hook pre"})
    # a path that needs quoting (a venv under '/opt/my venv') is still ours
    assert is_ours({"type": "command", "command": "'/opt/my venv/bin/python' -S "
                    "'/opt/my venv/site-packages/ctxgate/_launch.py' hook pre --harness codex"})
