"""MCP tool annotations: remembered when ctxgate lists a server's tools, read by the gate.

``ctxgate mcp proxy`` records every downstream tool's ``annotations`` (``readOnlyHint``,
``destructiveHint``, ``idempotentHint``, ``openWorldHint``), description and input schema in
``<home>/mcp-tools.json`` (one object per server name, written atomically), so that a hook
judging ``mcp__<server>__<tool>`` in another process knows them too.

Annotations are the server's claims. They may always raise caution; they lower it only for a
server the user trusts (``[gate] trusted_mcp_servers``). With the MCP spec's defaults
(``readOnlyHint`` false, ``destructiveHint`` true, ``openWorldHint`` true when absent):

- ``readOnlyHint: true`` → read-only (trusted servers only; otherwise no answer);
- not read-only and destructive, open world → external; closed world → irreversible local;
- not read-only, not destructive, open world → external (it reaches outside the machine);
- not read-only, not destructive, closed world → recoverable (trusted servers only).

A tool listed without any annotations gives no answer (the spec's defaults would make every
unannotated tool destructive; the learned classifier and the model judge it instead).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource

__all__ = ["ANNOTATIONS_FILE", "AnnotationStore", "ToolInfo", "annotation_effect",
           "split_mcp_name"]

ANNOTATIONS_FILE = "mcp-tools.json"
_MAX_SCHEMA_CHARS = 20_000
_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")

ToolInfo = dict[str, Any]
"""``{"annotations": {...} | None, "description": str | None, "input_schema": {...} | None}``."""


def split_mcp_name(tool: str) -> tuple[str, str] | None:
    """``mcp__server__tool`` → ``(server, tool)``; ``None`` for other names."""
    if not tool.startswith("mcp__"):
        return None
    server, sep, name = tool[5:].partition("__")
    return (server, name) if sep and server and name else None


def _hints(raw: Any) -> dict[str, bool] | None:
    if raw is None:
        return None
    if hasattr(raw, "model_dump"):
        raw = raw.model_dump(by_alias=True, exclude_none=True)
    if not isinstance(raw, Mapping):
        return None
    out: dict[str, bool] = {}
    for key in _HINTS:
        snake = "".join("_" + c.lower() if c.isupper() else c for c in key)
        value = raw.get(key, raw.get(snake))
        if isinstance(value, bool):
            out[key] = value
    return out


class AnnotationStore:
    """The remembered tools of every MCP server ctxgate has listed.

    Args:
        path: the JSON file (``<home>/mcp-tools.json``); missing means nothing is known.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._data: dict[str, dict[str, ToolInfo]] | None = None

    @classmethod
    def in_home(cls, home: str | Path) -> AnnotationStore:
        """The store of a ctxgate home directory."""
        return cls(Path(home) / ANNOTATIONS_FILE)

    def _load(self) -> dict[str, dict[str, ToolInfo]]:
        if self._data is None:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                servers = data.get("servers", {}) if isinstance(data, dict) else {}
                self._data = {str(k): v for k, v in servers.items() if isinstance(v, dict)}
            except (OSError, ValueError):
                self._data = {}
        return self._data

    def record(self, server: str, tools: Iterable[Any]) -> None:
        """Remember the tools a server listed (MCP ``Tool`` objects or dicts), replacing the
        server's previous list; the file is replaced atomically."""
        entry: dict[str, ToolInfo] = {}
        for tool in tools:
            get = tool.get if isinstance(tool, Mapping) else (lambda k, t=tool: getattr(t, k, None))
            name = get("name")
            if not isinstance(name, str):
                continue
            schema = get("input_schema") or get("inputSchema")
            if hasattr(schema, "model_dump"):
                schema = schema.model_dump()
            if schema is not None and len(json.dumps(schema, default=str)) > _MAX_SCHEMA_CHARS:
                schema = None
            entry[name] = {"annotations": _hints(get("annotations")),
                           "description": get("description"),
                           "input_schema": schema}
        self._data = None
        data = dict(self._load())
        data[server] = entry
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".mcp-tools.", dir=str(self.path.parent))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"version": 1, "servers": data}, f, ensure_ascii=False, sort_keys=True,
                          default=str)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._data = data

    def lookup(self, server: str, tool: str) -> ToolInfo | None:
        """What is known of ``tool`` of ``server`` (names compared case-insensitively)."""
        servers = self._load()
        tools = servers.get(server)
        if tools is None:
            tools = next((v for k, v in servers.items() if k.lower() == server.lower()), None)
        if tools is None:
            return None
        info = tools.get(tool)
        if info is None:
            info = next((v for k, v in tools.items() if k.lower() == tool.lower()), None)
        return info


def annotation_effect(server: str, tool: str, info: ToolInfo | None, *,
                      trusted: bool) -> Effect | None:
    """The effect the annotations of one tool support (rules in the module docstring)."""
    hints = (info or {}).get("annotations")
    if not isinstance(hints, Mapping) or not hints:
        return None
    read_only = hints.get("readOnlyHint", False)
    destructive = hints.get("destructiveHint", True)
    open_world = hints.get("openWorldHint", True)
    shown = ", ".join(f"{k}={str(hints[k]).lower()}" for k in _HINTS if k in hints)
    who = f"the MCP server {server!r} ({'trusted' if trusted else 'not trusted'}) annotates " \
          f"{tool}: {shown}"
    if read_only:
        if not trusted:
            return None
        return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.MCP_ANNOTATIONS,
                      evidence=who)
    if destructive or open_world:
        cls = EffectClass.EXTERNAL if open_world else EffectClass.LOCAL_IRREVERSIBLE
        note = " (absent hints take the MCP defaults: destructive, open world)"
        return Effect(effect=cls, source=EffectSource.MCP_ANNOTATIONS,
                      evidence=who + (note if len(hints) < 4 else ""))
    if not trusted:
        return None
    return Effect(effect=EffectClass.LOCAL_RECOVERABLE, source=EffectSource.MCP_ANNOTATIONS,
                  evidence=who)
