"""The ``expand`` tool every adapter adds: its name, description, JSON schema and view.

The arguments are those of ctxgate's MCP ``expand`` tool and of the digest's drill-down lines
(``expand(id="…", lines="21:220")``), mapped onto :meth:`ctxgate.archive.Archive.expand`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

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
    "lines": "lines", "head": "head", "tail": "tail", "grep": "grep",
    "ignore_case": "ignore_case", "literal": "fixed_strings", "context": "context",
    "before": "before", "after": "after", "max_matches": "max_matches", "bytes": "byte_range",
    "json": "json_pointer", "keys": "keys", "max_tokens": "max_tokens",
}
"""``expand`` tool argument → :meth:`~ctxgate.archive.Archive.expand` keyword (besides ``id``)."""

EXPAND_PARAMETERS: Mapping[str, Any] = {
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
        "before": {"type": "integer", "minimum": 0, "description": "Lines before each match."},
        "after": {"type": "integer", "minimum": 0, "description": "Lines after each match."},
        "max_matches": {"type": "integer", "minimum": 1},
        "bytes": {"type": "string", "description": "OFFSET:LENGTH in UTF-8 bytes."},
        "json": {"type": "string", "description": "RFC 6901 JSON pointer."},
        "keys": {"type": "boolean", "description": "Structural view of a JSON output."},
        "max_tokens": {"type": "integer", "minimum": 100, "description": "View budget, tokens."},
    },
    "required": ["id"],
    "additionalProperties": False,
}
"""JSON Schema of the expand tool's arguments (not strict: every selector is optional)."""


def expand_view(archive: Archive, arguments: Mapping[str, Any]) -> str:
    """Answer an ``expand`` call from the archive (the view is never firewalled again).

    Raises:
        UsageError: a missing id or an unknown argument (the message lists the known ones),
            bad argument types.
        CtxgateError: as :meth:`~ctxgate.archive.Archive.expand` (unknown or ambiguous id —
            the message lists recent ids —, conflicting selectors, a bad regex).
    """
    unknown = sorted(set(arguments) - set(EXPAND_ARGUMENTS) - {"id"})
    if unknown:
        raise UsageError(f"expand: unknown argument(s) {unknown}; known: id, "
                         f"{', '.join(EXPAND_ARGUMENTS)}")
    entry_id = arguments.get("id")
    if not isinstance(entry_id, str) or not entry_id.strip():
        raise UsageError("expand: 'id' is required (the archive id the digest names)")
    kwargs = {EXPAND_ARGUMENTS[k]: v for k, v in arguments.items()
              if k != "id" and v is not None and v is not False}
    try:
        return archive.expand(entry_id.strip(), **kwargs).text
    except CtxgateError:
        raise
    except (TypeError, ValueError) as exc:
        raise UsageError(f"expand: {exc}") from exc


def expand_error(exc: CtxgateError) -> str:
    """What the model reads for an expand call that failed: ``Error: <kind>: <what to do>``."""
    return f"Error: {type(exc).__name__}: {exc}"


def expand_answer(archive: Archive, arguments: Mapping[str, Any]) -> str:
    """:func:`expand_view`, with a failure as :func:`expand_error` text instead of raised."""
    try:
        return expand_view(archive, arguments)
    except CtxgateError as exc:
        return expand_error(exc)
