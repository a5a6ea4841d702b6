"""The agent harnesses' own tools, known by name and arguments (Claude Code, Codex).

- Claude Code ``Read``, ``Grep``, ``Glob``, ``LS``, ``WebFetch``, ``WebSearch``,
  ``NotebookRead``, ``TodoWrite``, ``Task`` (a sub-agent, whose own calls are gated one by one),
  ``BashOutput``, ``ExitPlanMode``, and Claude Code 2's ``Agent`` (``Task`` renamed),
  ``ListAgents``, ``ToolSearch``, ``Skill`` (loads instructions), ``ReportFindings``,
  ``ScheduleWakeup``, ``TaskOutput``; Codex's ``update_plan``, ``view_image``; OpenHands'
  ``think`` and ``finish``: read-only;
- ``Write`` (overwrite or create), ``Edit``/``MultiEdit`` (edit: the replaced text is in the
  arguments), ``NotebookEdit``: the path rules of :mod:`.paths` against the call's directory,
  with ``keeps_history`` (Claude Code checkpoints what its own file tools change, so a
  ``Write`` over a tracked file's uncommitted changes can be rewound);
- ``Bash`` and Codex ``exec_command``/``shell``/``local_shell`` (the hook names them ``bash``):
  the shell parser (:mod:`.shell`); Codex's ``command`` may be an argv list
  (``["bash", "-lc", "…"]``) and ``workdir`` moves the directory;
- Anthropic's text editor tool (``str_replace_based_edit_tool``): ``view`` reads, the
  other commands by the path rules; the computer-use tool (``computer``): a screenshot
  looks, every other action is input as the user would give it (external);
- Codex ``apply_patch``: each ``*** Add File``, ``*** Update File`` (and ``*** Move to``),
  ``*** Delete File`` header is judged by the path rules (a delete of a file that is not
  there is no evidence: the model decides).

Names are matched case-insensitively (the hook lowercases them).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator, Mapping
from typing import Any

from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource, combine
from ctxgate.gate.effects.paths import Action, classify_path

__all__ = ["HARNESS_READ_TOOLS", "SHELL_TOOL_NAMES", "harness_effect", "shell_text"]

HARNESS_READ_TOOLS = frozenset({"read", "grep", "glob", "ls", "webfetch", "websearch",
                                "notebookread", "todowrite", "todoread", "task",
                                "bashoutput", "exitplanmode", "listmcpresourcestool",
                                "readmcpresourcetool", "view_image", "agent", "listagents",
                                "toolsearch", "skill", "reportfindings", "schedulewakeup",
                                "taskoutput", "update_plan", "think", "finish"})
"""Harness tools that only read (lowercase names)."""

SHELL_TOOL_NAMES = frozenset({"bash", "shell", "exec_command", "local_shell",
                              "container.exec"})
"""Harness tools whose argument is a shell command (lowercase names)."""

_WRITE_TOOLS: dict[str, tuple[str, Action]] = {
    "write": ("file_path", "overwrite"),
    "edit": ("file_path", "edit"),
    "multiedit": ("file_path", "edit"),
    "notebookedit": ("notebook_path", "edit"),
}
_PATCH_HEADER = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$",
                           re.MULTILINE)


_WEB_TOOLS = frozenset({"webfetch", "websearch"})
_SECRET = re.compile(
    r"\.ssh|\.gnupg|\.aws|\.kube|\.docker|\.netrc|\.pgpass|\.npmrc|\.pypirc|(^|/)\.env\b"
    r"|id_rsa|id_dsa|id_ecdsa|id_ed25519|\.pem\b|\.key\b|credential|secret|token|passw"
    r"|shadow|private|_history|keychain|wallet|api_?key|/etc/|/proc/", re.IGNORECASE)


def secret_argument(args: Mapping[str, Any]) -> str | None:
    """The first path-like argument of a read that names a secret-looking file."""
    for key in ("file_path", "path", "notebook_path", "pattern", "glob", "target_file",
                "absolute_path", "filename", "file", "filepath", "uri"):
        value = args.get(key)
        if isinstance(value, str) and _SECRET.search(value):
            return value
    return None


def _web_effect(tool: str, args: Mapping[str, Any]) -> Effect:
    """``WebFetch``/``WebSearch``: a read, unless the URL or query carries data out (a
    secret, an opaque value: :mod:`.urls`), which sends it; a URL on this machine, a private
    network or a metadata address is left to the model (a GET there can act)."""
    from ctxgate.gate.effects.urls import data_in_text, data_in_url, local_host

    url, query = args.get("url"), args.get("query")
    why = data_in_url(url) if isinstance(url, str) else None
    if why is None and isinstance(query, str):
        why = data_in_text(query)
    if why is not None:
        what = "URL" if isinstance(url, str) else "query"
        return Effect(effect=EffectClass.EXTERNAL, source=EffectSource.HARNESS_TOOL,
                      evidence=f"{tool} sends data out in its {what}: {why}")
    local = local_host(url) if isinstance(url, str) else None
    if local is not None:
        return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.HARNESS_TOOL,
                      evidence=f"the harness tool {tool} only reads, but {local} is this "
                               "machine or a private network, where a GET can act",
                      needs_model=True)
    return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.HARNESS_TOOL,
                  evidence=f"the harness tool {tool} only reads (its URL or query carries no "
                           "data out)")


def shell_text(arguments: Mapping[str, Any]) -> str | None:
    """The shell command string of a harness shell call (``command`` or ``cmd``; an argv
    list such as ``["bash", "-lc", "ls"]`` gives its script; the Responses API's
    ``local_shell`` call puts them under ``action``)."""
    action = arguments.get("action")
    if isinstance(action, Mapping) and "command" not in arguments and "cmd" not in arguments:
        arguments = action
    value = arguments.get("command", arguments.get("cmd"))
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if len(value) >= 3 and os.path.basename(value[0]) in ("bash", "sh", "zsh") \
                and value[1] in ("-c", "-lc", "-ic"):
            return value[2]
        return shlex.join(value)
    return None


def _cwd(arguments: Mapping[str, Any], cwd: str) -> str:
    action = arguments.get("action")
    if isinstance(action, Mapping) and action.get("working_directory"):
        arguments = {"workdir": action["working_directory"]}
    workdir = arguments.get("workdir") or arguments.get("cwd")
    if isinstance(workdir, str) and workdir:
        return os.path.join(cwd, os.path.expanduser(workdir))
    return cwd


def harness_effect(tool: str, arguments: Any, *, cwd: str) -> Effect | None:
    """The effect of a harness tool call, or ``None`` when ``tool`` is not a harness tool."""
    name = tool.lower()
    args = arguments if isinstance(arguments, Mapping) else {}
    if name in HARNESS_READ_TOOLS:
        if name in _WEB_TOOLS:
            return _web_effect(tool, args)
        secret = secret_argument(args)
        if secret is not None:
            return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.HARNESS_TOOL,
                          evidence=f"the harness tool {tool} only reads, but {secret!r} looks "
                                   "like a secret", needs_model=True)
        return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.HARNESS_TOOL,
                      evidence=f"the harness tool {tool} only reads")
    if name in _WRITE_TOOLS:
        key, action = _WRITE_TOOLS[name]
        path = args.get(key) or args.get("path")
        if not isinstance(path, str) or not path:
            return Effect(effect=EffectClass.LOCAL_IRREVERSIBLE, source=EffectSource.HARNESS_TOOL,
                          evidence=f"{tool} without a {key} argument: the gate cannot tell "
                                   "what it changes")
        # the harness checkpoints what its own file tools change (Claude Code's rewind)
        pe = classify_path(path, action, cwd=cwd, keeps_history=True)
        assert pe.effect is not None  # only a delete can find no evidence
        written = Effect(effect=pe.effect, source=EffectSource.HARNESS_TOOL,
                         evidence=f"{tool}: {pe.evidence}")
        from ctxgate.gate.effects.planted import planted_in_arguments

        return _as_harness(planted_in_arguments(tool, args, cwd=cwd, path=path)) or written
    if name in SHELL_TOOL_NAMES:
        from ctxgate.gate.effects.shell import shell_effect

        command = shell_text(args)
        return None if command is None else shell_effect(command, cwd=_cwd(args, cwd))
    if name == "apply_patch":
        return patch_effect(args, _cwd(args, cwd))
    if name in _EDITOR_TOOLS:
        return _editor_effect(tool, args, cwd)
    if name == "computer":
        return _computer_effect(tool, args)
    return None


_EDITOR_TOOLS = frozenset({"str_replace_based_edit_tool", "str_replace_editor",
                           "text_editor"})
"""Anthropic's text editor tool (``command``: ``view``, ``create``, ``str_replace``,
``insert``, ``undo_edit``; ``path``), by the names its versions and clients give it."""
_EDITOR_COMMANDS: dict[str, Action] = {"create": "overwrite", "str_replace": "edit",
                                       "insert": "edit", "undo_edit": "edit"}


def _editor_effect(tool: str, args: Mapping[str, Any], cwd: str) -> Effect:
    """The text editor tool: ``view`` reads (a secret-looking path is left to the model);
    the other commands are judged by the path rules, and code they write where a tool runs
    it on its own is scanned; an unknown command is irreversible (nobody can tell)."""
    command, path = args.get("command"), args.get("path")
    if not isinstance(path, str) or not path:
        return Effect(effect=EffectClass.LOCAL_IRREVERSIBLE, source=EffectSource.HARNESS_TOOL,
                      evidence=f"{tool} without a path: the gate cannot tell what it changes")
    if command == "view":
        secret = secret_argument(args)
        return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.HARNESS_TOOL,
                      evidence=f"{tool} view only reads" + (
                          f", but {secret!r} looks like a secret" if secret else ""),
                      needs_model=secret is not None)
    action = _EDITOR_COMMANDS.get(command) if isinstance(command, str) else None
    if action is None:
        return Effect(effect=EffectClass.LOCAL_IRREVERSIBLE, source=EffectSource.HARNESS_TOOL,
                      evidence=f"{tool} command {command!r} is none the gate knows")
    pe = classify_path(path, action, cwd=cwd)
    assert pe.effect is not None  # only a delete can find no evidence
    from ctxgate.gate.effects.planted import planted_effect

    text = "\n".join(v for k in ("file_text", "new_str") if isinstance(v := args.get(k), str))
    planted = _as_harness(planted_effect(path, text, cwd=cwd, construct=tool))
    return planted or Effect(effect=pe.effect, source=EffectSource.HARNESS_TOOL,
                             evidence=f"{tool} {command}: {pe.evidence}")


_COMPUTER_READS = frozenset({"screenshot", "cursor_position", "zoom", "wait"})
"""Actions of Anthropic's computer-use tool that only look; every other one (``key``,
``type``, clicks, drags, scrolls, mouse moves) is input to whatever is on the screen."""


def _computer_effect(tool: str, args: Mapping[str, Any]) -> Effect:
    action = args.get("action")
    if isinstance(action, str) and action in _COMPUTER_READS:
        return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.HARNESS_TOOL,
                      evidence=f"{tool} {action} only looks at the screen")
    return Effect(effect=EffectClass.EXTERNAL, source=EffectSource.HARNESS_TOOL,
                  evidence=f"{tool} {action!r} is input to the screen as the user would give "
                           "it (a key or a click can submit, buy, send or delete)")


def _as_harness(found: Effect | None) -> Effect | None:
    """What code planted where a tool runs it on its own does (:mod:`.planted`), as the
    harness tool's effect."""
    if found is None:
        return None
    return Effect(effect=found.effect, source=EffectSource.HARNESS_TOOL,
                  evidence=found.evidence, details=found.details)


def _patch_text(args: Mapping[str, Any]) -> str | None:
    for key in ("input", "patch"):
        if isinstance(args.get(key), str):
            return args[key]
    command = args.get("command")
    if isinstance(command, list) and len(command) >= 2 and isinstance(command[-1], str):
        return command[-1]
    return command if isinstance(command, str) else None


def _added_lines(text: str, start: int) -> str:
    """The lines a patch adds to the file whose header ends at ``start`` (up to the next
    header), without their ``+``."""
    nxt = _PATCH_HEADER.search(text, start)
    end = nxt.start() if nxt else len(text)
    return "\n".join(line[1:] for line in text[start:end].splitlines() if line.startswith("+"))


def patch_files(text: str) -> Iterator[tuple[str, str, Action, int]]:
    """``(header, path, action, end)`` for each file an ``apply_patch`` text names:
    ``*** Add File`` overwrites, ``Update`` edits, ``Delete`` deletes, and ``*** Move to``
    (header ``Move``) overwrites its destination; ``end`` is where the header line ends (the
    added lines follow it)."""
    actions: dict[str, Action] = {"Add": "overwrite", "Update": "edit", "Delete": "delete"}
    for m in _PATCH_HEADER.finditer(text):
        kind, path, moved = m.group(1), m.group(2), m.group(3)
        if moved:
            yield "Move", moved, "overwrite", m.end()
        else:
            yield kind, path, actions[kind], m.end()


def patch_effect(args: Mapping[str, Any], cwd: str) -> Effect | None:
    """What Codex's ``apply_patch`` with these arguments changes (each file header judged by
    the path rules; code it adds where a tool runs it on its own, scanned)."""
    text = _patch_text(args)
    if not text:
        return Effect(effect=EffectClass.LOCAL_IRREVERSIBLE, source=EffectSource.HARNESS_TOOL,
                      evidence="apply_patch without a patch: the gate cannot tell what it "
                               "changes")
    findings: list[tuple[EffectClass, str]] = []
    unknown = False
    for kind, path, action, end in patch_files(text):
        pe = classify_path(path, action, cwd=cwd)
        if pe.effect is None:
            unknown = True  # a delete of a file that is not there: no evidence
            continue
        findings.append((pe.effect, f"apply_patch: {pe.evidence}"))
        if kind != "Delete":
            from ctxgate.gate.effects.planted import planted_effect

            planted = _as_harness(planted_effect(path, _added_lines(text, end),
                                                 cwd=cwd, construct="apply_patch"))
            if planted is not None:
                findings.append((planted.effect, planted.evidence))
    if unknown and not any(c.destructive for c, _e in findings):
        return None  # the model decides
    if not findings:
        return Effect(effect=EffectClass.LOCAL_IRREVERSIBLE, source=EffectSource.HARNESS_TOOL,
                      evidence="apply_patch names no file (no *** Add/Update/Delete File "
                               "header)")
    return combine(findings, EffectSource.HARNESS_TOOL)
