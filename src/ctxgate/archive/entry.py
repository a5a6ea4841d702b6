"""Value types of the archive: what callers pass in (EntryMeta) and get back (Entry, View)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxgate.tokens import TokenCount

__all__ = ["Entry", "EntryMeta", "View"]


@dataclass(frozen=True, kw_only=True)
class EntryMeta:
    """Where an output came from; every field optional."""

    tool: str | None = None
    """Tool name (``"shell"``, ``"mcp__github__search"``...)."""
    command: str | None = None
    """The command line, for shell-like tools."""
    source: str | None = None
    """Another origin (a URL, a file path, an MCP server) when there is no command."""
    session_id: str | None = None
    """Session or run id given by the caller."""
    exit_code: int | None = None
    """Exit status of the command, when there is one."""
    reason: str | None = None
    """Why it was archived (the firewall's decision reason)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Further JSON-serializable facts."""
    tokens: TokenCount | None = None
    """A token count the caller already made (else the archive counts or estimates)."""


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One stored output and its metadata."""

    id: str
    """Full sha256 hex of the stored bytes."""
    short_id: str
    """The 12-hex prefix shown to models."""
    raw_bytes: int
    """Size of the stored content, bytes (after redaction)."""
    lines: int
    """Line count; a final line without newline counts."""
    tokens: TokenCount | None
    """Tokens of the content: exact with a named tokenizer for small entries, else an estimate."""
    created_at: float
    """Epoch seconds when first stored."""
    last_access: float
    """Epoch seconds of the last store, read or expand."""
    expires_at: float | None
    """Epoch seconds of expiry; ``None`` when pinned."""
    tool: str | None = None
    command: str | None = None
    source: str | None = None
    exit_code: int | None = None
    redacted: bool = False
    """True when at least one secret was replaced before storage."""
    redactions: int = 0
    """Number of secrets replaced."""
    truncated: bool = False
    """True when the stored bytes are not the whole output: the caller stopped storing early,
    or the producing command was stopped (see :attr:`interrupted`)."""
    interrupted: str | None = None
    """Why the producing command was stopped before it ended (``"timeout after 5 s
    (SIGTERM)"``, ``"SIGINT forwarded to the command"``), or ``None``."""
    session_id: str | None = None
    reason: str | None = None
    pinned: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    stored_bytes: int = 0
    """Compressed size on the store, bytes (what the disk cap counts)."""


@dataclass(frozen=True, kw_only=True)
class View:
    """A bounded, rendered slice of an entry."""

    text: str
    """What to show: header, content (gutter on line views), notes, and the ``next:`` line."""
    entry: Entry
    """The entry viewed."""
    selector: str
    """The selector as CLI arguments (``"--lines 1:200"``)."""
    next_hint: str | None = None
    """Arguments for the next page (``"--lines 201:400"``), or ``None`` when complete."""
    line_range: tuple[int, int] | None = None
    """First and last line shown (1-based, inclusive), for line views."""
    byte_range: tuple[int, int] | None = None
    """Raw byte range ``[start, end)`` covered by the content shown."""
    matches: int | None = None
    """Total matching lines for grep (even when fewer are shown)."""
    shown_matches: int | None = None
    """Matching lines shown."""
    notes: tuple[str, ...] = ()
    """Decoding and cutting notes (also in ``text``)."""
    truncated: bool = False
    """True when the budget or a limit cut the view."""
