"""Record-bound configuration values."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_BOUND_POLICY", "BoundPolicy"]


@dataclass(frozen=True, kw_only=True)
class BoundPolicy:
    """The byte bound of a turn record and how it is met."""

    max_bytes: int = 1_048_576
    """Bound on the UTF-8 bytes of the compact JSON serialization."""
    strategy: str = "level"
    """``"level"`` (water-filling, default) or ``"widest"`` (the seed's widest-first)."""


DEFAULT_BOUND_POLICY = BoundPolicy()
