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
from ctxgate.integrations.langchain._glue import EXPAND_DESCRIPTION, EXPAND_TOOL, expand_view

if TYPE_CHECKING:
    from ctxgate.archive import Archive

__all__ = ["EXPAND_SCHEMA", "expand_tool"]


EXPAND_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "Archive id (or a unique prefix) from a digest."},
        "lines": {"type": "string", "description": "A:B, 1-based inclusive; negative from the end."},
        "head": {"type": "integer", "minimum": 0, "description": "The first N lines."},
        "tail": {"type": "integer", "minimum": 0, "description": "The last N lines."},
        "grep": {"type": "string", "description": "Regular expression; the lines that match."},
        "ignore_case": {"type": "boolean"},
        "literal": {"type": "boolean", "description": "grep is a literal string, not a regex."},
        "context": {"type": "integer", "minimum": 0, "description": "Lines around each match."},
        "max_matches": {"type": "integer", "minimum": 1},
        "bytes": {"type": "string", "description": "OFFSET:LENGTH in UTF-8 bytes."},
        "json": {"type": "string", "description": "RFC 6901 JSON pointer."},
        "keys": {"type": "boolean", "description": "Structural view of a JSON output."},
        "max_tokens": {"type": "integer", "minimum": 100, "description": "View budget, tokens."},
    },
    "required": ["id"],
    "additionalProperties": False,
}
"""The expand tool's JSON schema (a pydantic model could not have a ``json`` field)."""


def expand_tool(archive: Archive) -> StructuredTool:
    """The ``expand`` tool over ``archive`` (the archive the middleware's firewall writes)."""

    def expand(**arguments: Any) -> str:
        try:
            return expand_view(archive, arguments)
        except CtxgateError as exc:
            raise ToolException(f"Error: {type(exc).__name__}: {exc}") from exc

    return StructuredTool.from_function(
        func=expand, name=EXPAND_TOOL, description=EXPAND_DESCRIPTION, args_schema=EXPAND_SCHEMA,
        handle_tool_error=True)
