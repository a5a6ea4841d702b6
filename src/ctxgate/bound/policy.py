"""Record-bound configuration values (the ``[bound]`` section), with units.

A limit set to ``0`` is disabled. Selectors are strings ``"<path>=<keep>"`` where ``<path>``
uses the grammar of :mod:`ctxgate.bound.selectors` and ``<keep>`` is ``head``, ``tail`` or
``both`` (``=both`` may be omitted).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BoundPolicy",
    "DEFAULT_BOUND_POLICY",
    "DEFAULT_LINE_SNAP_BYTES",
    "DEFAULT_MAX_ARRAY_LENGTH",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_KEY_LENGTH",
    "DEFAULT_MAX_NODES",
    "DEFAULT_MAX_OBJECT_ENTRIES",
    "DEFAULT_SELECTORS",
    "STRATEGIES",
]

DEFAULT_MAX_BYTES = 1_048_576
"""UTF-8 bytes of the compact serialization (1 MiB, the reference validator's bound)."""
DEFAULT_MAX_NODES = 8_192
"""JSON values in the record (every object, array, string, number, boolean and null)."""
DEFAULT_MAX_DEPTH = 16
"""Nesting levels of containers; the root container is level 1."""
DEFAULT_MAX_ARRAY_LENGTH = 1_024
"""Elements of one array."""
DEFAULT_MAX_OBJECT_ENTRIES = 256
"""Entries (keys) of one object."""
DEFAULT_MAX_KEY_LENGTH = 512
"""Code points of one object key."""
DEFAULT_LINE_SNAP_BYTES = 256
"""A cut moves to a line boundary at most this many bytes away (and never more than 0.5 %)."""
DEFAULT_SELECTORS: tuple[str, ...] = (
    "toolInvocations[*].result=both",
    "toolInvocations[*].result[*].text=both",
    "content[*].text=both",
)
"""Where tool output lives: string results, strings inside structured results, MCP text parts."""
STRATEGIES = ("level", "widest")
"""``level``: water-filling (default); ``widest``: cut the widest result first (the seed's)."""


@dataclass(frozen=True, kw_only=True)
class BoundPolicy:
    """The byte bound of a turn record, how it is met, and the structural limits refused."""

    max_bytes: int = DEFAULT_MAX_BYTES
    """Bound on the UTF-8 bytes of the compact JSON serialization (bytes)."""
    strategy: str = "level"
    """``"level"`` (water-filling, default) or ``"widest"`` (the seed's widest-first)."""
    selectors: tuple[str, ...] = DEFAULT_SELECTORS
    """Truncatable tool output, ``"<path>=<head|tail|both>"``; nothing else is ever cut."""
    max_nodes: int = DEFAULT_MAX_NODES
    """Most JSON values in a record (values); 0 disables."""
    max_depth: int = DEFAULT_MAX_DEPTH
    """Most container nesting levels (levels); 0 disables (a hard cap of 200 remains)."""
    max_array_length: int = DEFAULT_MAX_ARRAY_LENGTH
    """Most elements in one array (elements); 0 disables."""
    max_object_entries: int = DEFAULT_MAX_OBJECT_ENTRIES
    """Most entries in one object (entries); 0 disables."""
    max_key_length: int = DEFAULT_MAX_KEY_LENGTH
    """Longest object key (code points); 0 disables."""
    line_snap_bytes: int = DEFAULT_LINE_SNAP_BYTES
    """Move a cut to a newline at most this far away (bytes); 0 cuts exactly at the budget."""
    archive: bool = True
    """``ctxgate bound`` stores each cut result's full original in the archive."""

    def __post_init__(self) -> None:
        from ctxgate.errors import ConfigError

        if self.strategy not in STRATEGIES:
            raise ConfigError(
                f"bound.strategy is {self.strategy!r}; use one of {', '.join(STRATEGIES)}"
            )
        for name in ("max_bytes", "max_nodes", "max_depth", "max_array_length",
                     "max_object_entries", "max_key_length", "line_snap_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"bound.{name} is {value!r}; it must be an integer >= 0")
        if self.max_bytes == 0:
            raise ConfigError("bound.max_bytes is 0; the byte bound cannot be disabled")
        from ctxgate.bound.selectors import parse_selectors

        parse_selectors(self.selectors)


DEFAULT_BOUND_POLICY = BoundPolicy()
