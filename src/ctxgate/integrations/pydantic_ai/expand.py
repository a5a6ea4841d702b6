"""The ``expand`` tool: the model reads back any part of an archived tool output.

A digest names its archive id and the exact calls to make (``expand(id="…", lines="21:220")``);
:class:`ExpandToolset` is a ``FunctionToolset`` holding that one tool, with the arguments of
ctxgate's MCP ``expand`` tool (the shared
:data:`~ctxgate.integrations._adapter.EXPAND_PARAMETERS` schema). It only reads the archive, so :class:`.toolset.GatedToolset`
passes its calls through without a gate decision, and its views (already bounded by
``expand_max_tokens``) are never firewalled again. A bad id or selector comes back as a failed
tool result with the archive's message (recent ids, the conflicting selectors), so the model
can correct itself without spending retries.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Tool
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.toolsets import FunctionToolset

from ctxgate.archive import Archive
from ctxgate.errors import CtxgateError
from ctxgate.integrations._adapter import (
    EXPAND_DESCRIPTION,
    EXPAND_PARAMETERS,
    EXPAND_TOOL,
    expand_error,
    expand_view,
)

__all__ = ["ExpandToolset", "expand_toolset"]


class ExpandToolset(FunctionToolset[Any]):
    """A ``FunctionToolset`` with the one ``expand`` tool (see the module docstring)."""


def expand_toolset(archive: Archive, *, name: str = EXPAND_TOOL) -> ExpandToolset:
    """The toolset that lets the model read ``archive``'s entries back.

    Args:
        archive: the archive the digests were made with.
        name: the tool's name (the digests' drill-down lines use it).
    """
    def expand(**arguments: Any) -> str:
        try:
            return expand_view(archive, arguments)
        except CtxgateError as exc:
            raise ToolFailed(expand_error(exc)) from exc

    return ExpandToolset([Tool.from_schema(expand, name=name, description=EXPAND_DESCRIPTION,
                                           json_schema=dict(EXPAND_PARAMETERS))],
                         id="ctxgate-expand")
