"""Content-addressed ids: sha256 hex of the stored bytes, short prefixes, collision-safe resolution.

The model sees a 12-hex prefix (:data:`SHORT_ID_CHARS`); the store keeps the full 64-hex hash.
Resolution never guesses: a prefix that matches two entries raises
:class:`~ctxgate.errors.AmbiguousId` listing them, and an unknown id raises
:class:`~ctxgate.errors.EntryNotFound` saying whether it expired, was purged or never existed.
"""

from __future__ import annotations

import string
import time
from typing import TYPE_CHECKING

from ctxgate.errors import AmbiguousId, EntryNotFound, UsageError

if TYPE_CHECKING:
    from ctxgate.archive.stores.base import ArchiveStore, EntryRecord

__all__ = ["FULL_ID_CHARS", "MIN_PREFIX_CHARS", "SHORT_ID_CHARS", "normalize_id", "resolve",
           "short_id"]

FULL_ID_CHARS = 64
"""Length of a full id (sha256 hex), characters."""
SHORT_ID_CHARS = 12
"""Length of the prefix shown to models and users, characters."""
MIN_PREFIX_CHARS = 4
"""Shortest prefix accepted on lookup, characters."""

_HEX = frozenset(string.hexdigits.lower())
_RECENT_SHOWN = 5


def short_id(full_id: str) -> str:
    """The displayed prefix of a full id."""
    return full_id[:SHORT_ID_CHARS]


def normalize_id(text: str) -> str:
    """Lower-case, strip and check an id or prefix typed by a user or a model.

    Accepts an optional ``ctx:`` or ``archive:`` scheme prefix.

    Raises:
        UsageError: not hex, or shorter than :data:`MIN_PREFIX_CHARS`.
    """
    value = text.strip().lower()
    for scheme in ("ctx:", "archive:", "ctxgate:"):
        if value.startswith(scheme):
            value = value[len(scheme):]
    if not value or not set(value) <= _HEX or len(value) > FULL_ID_CHARS:
        raise UsageError(
            f"{text!r} is not an archive id (expected {SHORT_ID_CHARS} to {FULL_ID_CHARS} hex "
            "characters); run 'ctxgate archive ls' to see ids"
        )
    if len(value) < MIN_PREFIX_CHARS:
        raise UsageError(
            f"archive id prefix {text!r} is too short (at least {MIN_PREFIX_CHARS} hex "
            "characters); run 'ctxgate archive ls' to see ids"
        )
    return value


def _recent(store: ArchiveStore) -> list[str]:
    return [short_id(r.id) for r in store.list(limit=_RECENT_SHOWN)]


def _age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.0f}h"
    return f"{seconds / 86400:.0f}d"


def not_found(store: ArchiveStore, prefix: str, *, reason: str | None = None,
              now: float | None = None) -> EntryNotFound:
    """Build the EntryNotFound for ``prefix``: says why (expired, purged ...) and lists recent ids."""
    now = time.time() if now is None else now
    if reason is None:
        tomb = store.tombstone(prefix)
        if tomb is not None:
            reason = f"{tomb.reason} {_age(now - tomb.at)} ago"
    why = reason or "unknown id"
    recent = _recent(store)
    listing = ", ".join(recent) if recent else "none (the archive is empty)"
    return EntryNotFound(
        f"no archive entry {prefix[:SHORT_ID_CHARS]} ({why}); recent ids: {listing}; "
        "run 'ctxgate archive ls'",
        entry_id=prefix, recent=recent,
    )


def resolve(store: ArchiveStore, text: str, *, now: float | None = None) -> EntryRecord:
    """The record for an id or unique prefix; expired records count as missing.

    Raises:
        UsageError: malformed id.
        EntryNotFound: no entry (unknown, expired, purged or evicted), with recent ids.
        AmbiguousId: the prefix matches several entries.
    """
    prefix = normalize_id(text)
    now = time.time() if now is None else now
    if len(prefix) == FULL_ID_CHARS:
        record = store.get(prefix)
        matches = [prefix] if record is not None else []
    else:
        matches = store.match_prefix(prefix, limit=6)
        record = None
    if len(matches) > 1:
        shown = ", ".join(short_id(m) if len(m) > len(prefix) + 4 else m for m in matches[:5])
        raise AmbiguousId(
            f"archive id prefix {prefix} matches {len(matches) if len(matches) < 6 else '6+'} "
            f"entries ({shown}); give more characters of the id",
            entry_id=prefix, candidates=list(matches),
        )
    if not matches:
        raise not_found(store, prefix, now=now)
    if record is None:
        record = store.get(matches[0])
        if record is None:  # deleted between the two queries
            raise not_found(store, prefix, now=now)
    if record.expires_at is not None and record.expires_at < now:
        raise not_found(store, prefix, reason=f"expired {_age(now - record.expires_at)} ago",
                        now=now)
    return record
