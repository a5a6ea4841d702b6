"""The ``expand`` tool the middleware adds to the agent: read any part of an archived output.

Its arguments are the ones the digest's drill-down lines name (``expand(id="…",
lines="21:220")``). A bad id or selector comes back as an error ``ToolMessage`` saying what
to change, never an exception that stops the run. Its views are bounded by the archive's
``expand_max_tokens`` and never firewalled again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.tools import StructuredTool, ToolException

from ctxgate.errors import CtxgateError
from ctxgate.integrations._adapter import (
    EXPAND_DESCRIPTION,
    EXPAND_PARAMETERS,
    EXPAND_TOOL,
    expand_error,
    expand_view,
)

if TYPE_CHECKING:
    from ctxgate.archive import Archive

__all__ = ["EXPAND_SCHEMA", "expand_tool"]


EXPAND_SCHEMA: dict[str, Any] = dict(EXPAND_PARAMETERS)
"""The expand tool's JSON schema, the one every adapter uses (a pydantic model could not have
a ``json`` field)."""


def expand_tool(archive: Archive) -> StructuredTool:
    """The ``expand`` tool over ``archive`` (the archive the middleware's firewall writes)."""

    def expand(**arguments: Any) -> str:
        try:
            return expand_view(archive, arguments)
        except CtxgateError as exc:
            raise ToolException(expand_error(exc)) from exc

    return StructuredTool.from_function(
        func=expand, name=EXPAND_TOOL, description=EXPAND_DESCRIPTION, args_schema=EXPAND_SCHEMA,
        handle_tool_error=True)
