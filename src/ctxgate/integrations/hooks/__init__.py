"""Agent-harness hooks (Claude Code, Codex): JSON on stdin, a decision on stdout.

See :mod:`ctxgate.integrations.hooks.payloads` for the wire format and
:mod:`ctxgate.integrations.hooks.handlers` for what each event does.
"""

from __future__ import annotations

__all__ = ["HookPayload", "HookResponse", "parse_payload", "post_tool_use", "pre_tool_use"]


def __getattr__(name: str):  # lazy: hooks start once per tool call
    if name in ("HookPayload", "parse_payload"):
        from ctxgate.integrations.hooks import payloads

        return getattr(payloads, name)
    if name in ("HookResponse", "post_tool_use", "pre_tool_use"):
        from ctxgate.integrations.hooks import handlers

        return getattr(handlers, name)
    raise AttributeError(f"module 'ctxgate.integrations.hooks' has no attribute {name!r}")
