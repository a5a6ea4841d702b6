"""One adapter per agent harness: how a gate verdict and a digest are said on its wire.

Claude Code and Codex send the same payload shape (see :mod:`.payloads`) but accept different
replies. Everything that differs lives in one :class:`Harness` subclass each:

============================  ==========================================  ===========================================
                              Claude Code (2.1.x)                         Codex (0.171)
============================  ==========================================  ===========================================
shell tool in the payload     ``Bash``                                    ``Bash`` (``exec_command``/``shell``)
rewritten input               ``updatedInput`` alone (permission rules    ``updatedInput`` only with
                              then still apply)                           ``permissionDecision: "allow"``
``ask``                       ``permissionDecision: "ask"``               unsupported: a deny saying how to approve
plain allow                   nothing printed (``allow`` with             nothing printed (``allow`` without
                              ``--approve``)                              ``updatedInput`` is rejected)
``PostToolUse`` replacement   ``updatedToolOutput`` in the tool's own     only ``updatedMCPToolOutput`` (MCP tools);
                              shape; ``updatedMCPToolOutput`` for MCP     a shell output cannot be replaced
failed shell call             no ``PostToolUse``                          no ``PostToolUse``
hooks file                    ``~/.claude/settings.json`` (user),         ``~/.codex/hooks.json`` (user),
                              ``.claude/settings.json`` (project)         ``.codex/hooks.json`` (project)
============================  ==========================================  ===========================================

The Codex column is taken from the JSON schemas and messages inside the ``codex`` 0.171.0
binary (``pre-tool-use.command.output`` …); ``tests/integrations/test_codex_wire.py``
validates every reply against them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ctxgate.errors import UsageError

__all__ = ["HARNESSES", "ClaudeCode", "Codex", "Harness", "get_harness"]


class Harness:
    """The parts of a harness's hook protocol ctxgate needs; subclasses fill them in."""

    name = ""
    can_replace_shell_output = False
    """Whether a ``PostToolUse`` reply can replace a shell call's output."""

    def deny(self, reason: str, *, ask: bool = False) -> dict[str, Any]:
        """The reply that stops the call (``ask``: let the person decide, where supported)."""
        return {"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask" if ask else "deny",
            "permissionDecisionReason": reason or "denied by the ctxgate tool gate",
        }}

    def allow(self, reason: str, *, updated_input: dict[str, Any] | None,
              approve: bool) -> dict[str, Any] | None:
        """The reply that lets the call run (``None``: print nothing)."""
        raise NotImplementedError

    def own_rule(self, command: str, cwd: str | None) -> str | None:
        """Which of the harness's own permission rules decides the shell ``command`` as the
        user wrote it (``"deny"``, ``"ask"``, ``"allow"``, ``"unknown"``), or ``None`` when
        none does or this harness's rules are not readable by a hook."""
        return None

    def replace_output(self, tool: str, tool_response: Any, digest: str) -> dict[str, Any] | None:
        """The ``PostToolUse`` reply that shows ``digest`` instead of the output, or ``None``
        when this harness cannot replace this tool's output."""
        raise NotImplementedError

    def output_text(self, tool: str, tool_response: Any) -> str | None:
        """The text the model reads from this tool's response, when this adapter knows the
        tool's output shape (``None``: the caller's generic extraction)."""
        return None

    def hooks_file(self, scope: str, *, home: Path, project: Path) -> Path:
        """Where ``hook install --write`` merges the hooks."""
        raise NotImplementedError

    def hook_entries(self, exe: str, *, pre_flags: str = "") -> dict[str, list[dict[str, Any]]]:
        """The ``hooks`` table to merge: event → list of ``{matcher, hooks: [...]}``."""
        flag = "" if self.name == "claude-code" else f" --harness {self.name}"
        return {
            "PreToolUse": [{"matcher": "*", "hooks": [
                {"type": "command", "command": f"{exe} hook pre{flag}{pre_flags}",
                 "timeout": 60}]}],
            "PostToolUse": [{"matcher": "*", "hooks": [
                {"type": "command", "command": f"{exe} hook post{flag}", "timeout": 60}]}],
        }


class ClaudeCode(Harness):
    """Claude Code (npm ``@anthropic-ai/claude-code``)."""

    name = "claude-code"
    can_replace_shell_output = True

    def own_rule(self, command: str, cwd: str | None) -> str | None:
        from ctxgate.integrations.hooks.permission_rules import load_bash_rules, match_command

        return match_command(command, load_bash_rules(cwd))

    def allow(self, reason: str, *, updated_input: dict[str, Any] | None,
              approve: bool) -> dict[str, Any] | None:
        specific: dict[str, Any] = {"hookEventName": "PreToolUse"}
        if updated_input is not None:
            specific["updatedInput"] = updated_input
        if approve:
            specific["permissionDecision"] = "allow"
            specific["permissionDecisionReason"] = reason
        return {"hookSpecificOutput": specific} if len(specific) > 1 else None

    def replace_output(self, tool: str, tool_response: Any, digest: str) -> dict[str, Any] | None:
        if tool.lower().startswith("mcp__"):
            key, value = "updatedMCPToolOutput", [{"type": "text", "text": digest}]
        elif isinstance(tool_response, dict) and "stdout" in tool_response:
            key, value = "updatedToolOutput", _shell_shaped(tool_response, digest)
        elif isinstance(tool_response, dict):
            shaped = _claude_shaped(tool, tool_response, digest)
            if shaped is None:
                return None  # an object of a shape we do not know: Claude Code would ignore it
            key, value = "updatedToolOutput", shaped
        else:
            key, value = "updatedToolOutput", digest
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", key: value}}

    def output_text(self, tool: str, tool_response: Any) -> str | None:
        if not isinstance(tool_response, dict):
            return None
        name = tool.lower()
        if name == "grep":
            if isinstance(tool_response.get("content"), str):
                return tool_response["content"]
            files = tool_response.get("filenames")
            return "\n".join(map(str, files)) if isinstance(files, list) else None
        if name == "glob" and isinstance(tool_response.get("filenames"), list):
            return "\n".join(map(str, tool_response["filenames"]))
        if name == "webfetch" and isinstance(tool_response.get("result"), str):
            return tool_response["result"]
        return None

    def hooks_file(self, scope: str, *, home: Path, project: Path) -> Path:
        if scope == "user":
            config = os.environ.get("CLAUDE_CONFIG_DIR")
            return (Path(config) if config else home / ".claude") / "settings.json"
        return project / ".claude" / "settings.json"


class Codex(Harness):
    """OpenAI Codex CLI (npm ``@openai/codex``), 0.153 and later."""

    name = "codex"

    def hook_entries(self, exe: str, *, pre_flags: str = "") -> dict[str, list[dict[str, Any]]]:
        entries = super().hook_entries(exe, pre_flags=pre_flags)
        # Codex can replace only an MCP tool's result: `hook post` runs for those alone
        # (a regex matcher) instead of costing a process on every shell call.
        entries["PostToolUse"][0]["matcher"] = "^mcp__.*"
        return entries

    def deny(self, reason: str, *, ask: bool = False) -> dict[str, Any]:
        if ask:  # Codex: "PreToolUse hook returned unsupported permissionDecision:ask"
            reason = (f"{reason} (Codex hooks cannot ask the user: the call was not run; the "
                      "user can allow it once with `ctxgate gate approve` and retry)")
        return super().deny(reason)

    def allow(self, reason: str, *, updated_input: dict[str, Any] | None,
              approve: bool) -> dict[str, Any] | None:
        # Codex rejects `updatedInput` without `permissionDecision: "allow"`, and rejects
        # `allow` without `updatedInput`; a plain allow is therefore said by printing nothing.
        if updated_input is None:
            return None
        return {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionDecisionReason": reason or "allowed by the ctxgate tool gate",
            "updatedInput": updated_input,
        }}

    def own_rule(self, command: str, cwd: str | None) -> str | None:
        from ctxgate.integrations.hooks.permission_rules import load_codex_rules, match_command

        return match_command(command, load_codex_rules(cwd))

    def replace_output(self, tool: str, tool_response: Any, digest: str) -> dict[str, Any] | None:
        if not tool.lower().startswith("mcp__"):
            return None  # Codex's PostToolUse can replace only an MCP tool's result
        return {"hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "updatedMCPToolOutput": {"content": [{"type": "text", "text": digest}]},
        }}

    def hooks_file(self, scope: str, *, home: Path, project: Path) -> Path:
        if scope == "user":
            config = os.environ.get("CODEX_HOME")
            return (Path(config) if config else home / ".codex") / "hooks.json"
        return project / ".codex" / "hooks.json"


HARNESSES: dict[str, Harness] = {h.name: h for h in (ClaudeCode(), Codex())}


def get_harness(name: str) -> Harness:
    """The adapter for ``name``; :class:`UsageError` listing the known names otherwise."""
    try:
        return HARNESSES[name]
    except KeyError:
        raise UsageError(f"--harness {name!r} is not supported; use one of: "
                         f"{', '.join(HARNESSES)}") from None


def _claude_shaped(tool: str, response: dict[str, Any], digest: str) -> dict[str, Any] | None:
    """A replacement in Claude Code's own output shape for Grep, Glob and WebFetch
    (``GrepOutput``, ``GlobOutput``, ``WebFetchOutput`` in the package's sdk-tools.d.ts), or
    ``None`` for a tool whose shape ctxgate does not know."""
    name = tool.lower()
    if name == "grep":  # shown as its content: one digest in place of the matches
        lines = digest.count("\n") + 1
        return {**response, "mode": "content", "content": digest, "numLines": lines,
                "filenames": []}
    if name == "glob":
        return {**response, "filenames": [digest]}
    if name == "webfetch":
        return {**response, "result": digest}
    return None


def _shell_shaped(tool_response: dict[str, Any], digest: str) -> dict[str, Any]:
    """A replacement in the shell tool's own output shape, carrying the digest as stdout.

    Claude Code checks ``updatedToolOutput`` against the tool's output schema and keeps the
    original output when it does not match (debug log: "does not match Bash's output shape:
    reason=schema_invalid"); for Bash that is an object with ``stdout``, ``stderr``,
    ``interrupted`` …, so a plain string is ignored. The persisted-output fields are dropped:
    the digest replaces the whole output, nothing of it remains on disk to point at.
    """
    shaped = {k: v for k, v in tool_response.items()
              if k not in ("persistedOutputPath", "persistedOutputSize")}
    shaped["stdout"] = digest
    shaped["stderr"] = ""
    return shaped
