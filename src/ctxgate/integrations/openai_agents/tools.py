"""Function-tool wrapping: the gate before the call, the firewall on its result, and ``expand``.

:func:`wrap_tool` returns a copy of a ``FunctionTool`` (``dataclasses.replace``; the original
is untouched) whose ``needs_approval`` and first tool input guardrail are the gate's
(:class:`~ctxgate.integrations.openai_agents.gating.CallGating`) and whose ``on_invoke_tool``
calls the original, then puts a text result through the firewall: a large one is archived
and the model gets the digest, whose drill-down lines name the ``expand`` tool
(:func:`expand_tool`). The tool's own error handling, timeout and output guardrails stay as
they were (its output guardrails see what the model will see: the digest).

A firewall failure never loses the result: the original output is returned and the failure
logged.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from typing import Any

from agents import FunctionTool, ToolOutputText
from agents.tool_context import ToolContext

from ctxgate.integrations._adapter import (
    EXPAND_DESCRIPTION,
    EXPAND_PARAMETERS,
    THREAD_CHARS,
    ResultFirewall,
    expand_answer,
    result_parts,
)
from ctxgate.integrations.openai_agents.gating import CallGating

__all__ = ["THREAD_CHARS", "expand_tool", "firewall_output", "wrap_tool"]

log = logging.getLogger("ctxgate.integrations.openai_agents")
log.addHandler(logging.NullHandler())

async def firewall_output(firewall: ResultFirewall, tool: str, output: Any) -> Any:
    """``output`` as the model should see it: a digest when it is large, else itself.

    A text result shown whole comes back as the firewall shows it (secrets redacted as
    ``[firewall] redact_verbatim`` says); a structured one below the threshold is returned
    unchanged unless redaction masked something (then its redacted JSON text); a list of text
    and media parts has its text firewalled and its media kept after it
    (:func:`~ctxgate.integrations._adapter.result_parts`); ``bytes`` and media alone are
    never firewalled.
    """
    text, kept = result_parts(output)
    if text is None:
        return output
    try:
        result = await firewall.screen(tool, text)
    except Exception as exc:  # noqa: BLE001 - the firewall never loses a result
        log.warning("ctxgate firewall failed on a %s result (returned whole): %s", tool, exc)
        return output
    if not result.changed:
        return output
    return [ToolOutputText(text=result.text), *kept] if kept else result.text


def wrap_tool(tool: FunctionTool, gating: CallGating | None,
              firewall: ResultFirewall | None) -> FunctionTool:
    """A copy of ``tool`` gated by ``gating`` and firewalled by ``firewall`` (either may be
    ``None``)."""
    inner = tool.on_invoke_tool
    name = tool.name

    async def invoke(ctx: ToolContext[Any], arguments: str) -> Any:
        output = await inner(ctx, arguments)
        if firewall is None:
            return output
        return await firewall_output(firewall, name, output)

    changes: dict[str, Any] = {"on_invoke_tool": invoke}
    if gating is not None:
        changes["needs_approval"] = gating.needs_approval(name, tool.needs_approval)
        changes["tool_input_guardrails"] = [gating.guardrail(name),
                                            *(tool.tool_input_guardrails or [])]
    return dataclasses.replace(tool, **changes)


def expand_tool(firewall: ResultFirewall) -> FunctionTool:
    """The ``expand`` tool: a bounded view of any archived output (never firewalled again)."""

    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        try:
            parsed = json.loads(arguments or "{}")
        except ValueError as exc:
            return f"Error: expand arguments are not valid JSON ({exc}); send one JSON object"
        if not isinstance(parsed, dict):
            return "Error: expand arguments must be a JSON object with at least 'id'"
        return await asyncio.to_thread(expand_answer, firewall.archive, parsed)

    return FunctionTool(name=firewall.expand_tool, description=EXPAND_DESCRIPTION,
                        params_json_schema=dict(EXPAND_PARAMETERS), on_invoke_tool=invoke,
                        strict_json_schema=False)
