"""The ``expand`` tool every adapter adds: its name, description, JSON schema and view.

The arguments are those of ctxgate's MCP ``expand`` tool and of the digest's drill-down lines
(``expand(id="…", lines="21:220")``), mapped onto :meth:`ctxgate.archive.Archive.expand`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ctxgate.app.errors import tool_error_text
from ctxgate.app.options import EXPAND, from_mcp, mcp_schema
from ctxgate.errors import CtxgateError, UsageError

if TYPE_CHECKING:
    from ctxgate.archive import Archive

__all__ = ["EXPAND_ARGUMENTS", "EXPAND_DESCRIPTION", "EXPAND_PARAMETERS", "EXPAND_TOOL",
           "expand_answer", "expand_error", "expand_view"]

EXPAND_TOOL = "expand"
"""The expand tool's default name (the digest's drill-down lines call it by this name)."""

EXPAND_DESCRIPTION = (
    "Read part of a tool output that ctxgate archived and replaced by a digest. `id` is the "
    "archive id the digest names; choose one selector: `lines` 'A:B' (1-based, inclusive; "
    "negative counts from the end), `head`/`tail` N lines, `grep` a regular expression (with "
    "`ignore_case`, `literal`, `context`/`before`/`after`, `max_matches`), `bytes` "
    "'OFFSET:LENGTH' for very long lines, `json` an RFC 6901 pointer or `keys` for the "
    "structure of a JSON output. Every view is bounded and ends with the next page.")
"""What the model reads about the expand tool."""

EXPAND_ARGUMENTS: Mapping[str, str] = {
    opt.mcp_name: opt.name for opt in EXPAND.options if opt.mcp_name not in (None, "id")}
"""``expand`` tool argument → :meth:`~ctxgate.archive.Archive.expand` keyword (besides ``id``),
from :data:`ctxgate.app.options.EXPAND`."""

EXPAND_PARAMETERS: Mapping[str, Any] = mcp_schema(EXPAND)
"""JSON Schema of the expand tool's arguments (not strict: every selector is optional); the
MCP server's, from :data:`ctxgate.app.options.EXPAND`."""


def expand_view(archive: Archive, arguments: Mapping[str, Any]) -> str:
    """Answer an ``expand`` call from the archive (the view is never firewalled again).

    Raises:
        UsageError: a missing id or an unknown argument (the message lists the known ones),
            bad argument types.
        CtxgateError: as :meth:`~ctxgate.archive.Archive.expand` (unknown or ambiguous id —
            the message lists recent ids —, conflicting selectors, a bad regex).
    """
    values = from_mcp(EXPAND, {k: v.strip() if k == "id" and isinstance(v, str) else v
                               for k, v in arguments.items()})
    entry_id = values.pop("entry_id")
    try:
        return archive.expand(entry_id, **values).text
    except CtxgateError:
        raise
    except (TypeError, ValueError) as exc:
        raise UsageError(f"expand: {exc}") from exc


def expand_error(exc: CtxgateError) -> str:
    """What the model reads for an expand call that failed: ``Error: <kind>: <what to do>``."""
    return f"Error: {tool_error_text(exc)}"


def expand_answer(archive: Archive, arguments: Mapping[str, Any]) -> str:
    """:func:`expand_view`, with a failure as :func:`expand_error` text instead of raised."""
    try:
        return expand_view(archive, arguments)
    except CtxgateError as exc:
        return expand_error(exc)
