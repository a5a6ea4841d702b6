"""Add ctxgate's MCP server to an MCP client's configuration, and take it out again.

============  ==========================================  =========================================
client        --scope user                                --scope project
============  ==========================================  =========================================
claude-code   ``~/.claude.json`` → ``mcpServers.ctxgate``  ``.mcp.json`` → ``mcpServers.ctxgate``
codex         ``~/.codex/config.toml`` →                  ``.codex/config.toml`` →
              ``[mcp_servers.ctxgate]``                   ``[mcp_servers.ctxgate]``
============  ==========================================  =========================================

(``$CLAUDE_CONFIG_DIR`` and ``$CODEX_HOME`` move the user files, as they do for the clients.)
Every other key of the file is kept. JSON files are rewritten whole; a TOML file is edited as
text — the ``[mcp_servers.ctxgate]`` table (and its sub-tables) is replaced or removed, nothing
else is touched — and the result is parsed again and compared with the original minus that
entry before it is written. The previous file is copied to ``FILE.ctxgate-backup``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxgate.errors import UsageError

__all__ = ["CLIENTS", "McpPlan", "config_file", "plan", "server_entry", "write"]

CLIENTS = ("claude-code", "codex")
NAME = "ctxgate"


def config_file(client: str, scope: str, *, home: Path, project: Path) -> Path:
    """The file ``mcp install`` edits for this client and scope."""
    if client not in CLIENTS:
        raise UsageError(f"--client {client!r} is not supported; use one of: {', '.join(CLIENTS)}")
    if scope not in ("user", "project"):
        raise UsageError(f"--scope {scope!r}: use user or project")
    if client == "claude-code":
        if scope == "project":
            return project / ".mcp.json"
        config = os.environ.get("CLAUDE_CONFIG_DIR")
        return Path(config) / ".claude.json" if config else home / ".claude.json"
    if scope == "project":
        return project / ".codex" / "config.toml"
    codex_home = os.environ.get("CODEX_HOME")
    return (Path(codex_home) if codex_home else home / ".codex") / "config.toml"


def server_entry(python: str, request: str | None) -> dict[str, Any]:
    """The stdio server entry: ``python -m ctxgate mcp serve [--request TEXT]``."""
    args = ["-m", "ctxgate", "mcp", "serve"] + (["--request", request] if request else [])
    return {"command": python, "args": args}


@dataclass(frozen=True)
class McpPlan:
    """The new text of one file and whether it differs from the current one."""

    path: Path
    before: str | None
    after: str

    @property
    def changes(self) -> bool:
        return self.before != self.after


def plan(client: str, path: Path, entry: dict[str, Any], *, uninstall: bool = False) -> McpPlan:
    """What install (or uninstall) would make of ``path``; nothing is written."""
    before = path.read_text(encoding="utf-8") if path.exists() else None
    if client == "claude-code":
        after = _json_after(path, before, entry, uninstall)
    else:
        after = _toml_after(path, before, entry, uninstall)
    return McpPlan(path=path, before=before, after=after)


def _json_after(path: Path, before: str | None, entry: dict[str, Any], uninstall: bool) -> str:
    try:
        data = json.loads(before) if before and before.strip() else {}
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); fix or "
                         "move it (nothing was written)") from exc
    if not isinstance(data, dict):
        raise UsageError(f"{path} holds a JSON {type(data).__name__}, not an object (nothing "
                         "was written)")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise UsageError(f"{path}: mcpServers is not an object (nothing was written)")
    servers = {k: v for k, v in servers.items() if k != NAME}
    if not uninstall:
        servers[NAME] = {"type": "stdio", **entry, "env": {}}
    data = {**data, "mcpServers": servers}
    if not servers:
        data.pop("mcpServers")
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def _is_ours(header: str) -> bool:
    parts = [p.strip().strip('"').strip("'") for p in header.split(".")]
    return parts[:2] == ["mcp_servers", NAME]


def _toml_after(path: Path, before: str | None, entry: dict[str, Any], uninstall: bool) -> str:
    text = before or ""
    try:
        original = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path} is not valid TOML ({exc}); fix it first (nothing was "
                         "written)") from exc
    kept: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        m = _TABLE.match(line)
        if m:
            skipping = _is_ours(m.group(1))
        if not skipping:
            kept.append(line)
    body = "".join(kept).rstrip("\n")
    if not uninstall:
        block = (f"[mcp_servers.{NAME}]\ncommand = {json.dumps(entry['command'])}\n"
                 f"args = [{', '.join(json.dumps(a) for a in entry['args'])}]\n")
        body = (body + "\n\n" if body else "") + block
    after = body + ("\n" if body and not body.endswith("\n") else "")
    expected = json.loads(json.dumps(original))
    servers = expected.get("mcp_servers", {})
    if NAME in servers and not isinstance(servers, dict):
        raise UsageError(f"{path}: mcp_servers is not a table (nothing was written)")
    servers.pop(NAME, None)
    if not uninstall:
        expected.setdefault("mcp_servers", servers)[NAME] = dict(entry)
    elif not servers:
        expected.pop("mcp_servers", None)
    try:
        got = tomllib.loads(after)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: ctxgate could not edit this file safely ({exc}); add the "
                         "entry by hand (nothing was written)") from exc
    if got.get("mcp_servers", {}) == {} and "mcp_servers" not in expected:
        got.pop("mcp_servers", None)
    if got != expected:
        raise UsageError(f"{path}: ctxgate's entry is written in a form it cannot edit "
                         "(an inline table or dotted keys); edit [mcp_servers.ctxgate] by hand "
                         "(nothing was written)")
    return after


def write(p: McpPlan) -> Path | None:
    """Write the plan (backup first); the backup's path, or ``None``."""
    if not p.changes:
        return None
    p.path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if p.path.exists():
        backup = p.path.with_name(p.path.name + ".ctxgate-backup")
        shutil.copy2(p.path, backup)
    tmp = p.path.with_name(f".{p.path.name}.ctxgate-tmp-{os.getpid()}")
    tmp.write_text(p.after, encoding="utf-8")
    if p.path.exists():
        shutil.copymode(p.path, tmp)
    os.replace(tmp, p.path)
    return backup
