"""The ArchiveStore protocol: the narrow seam between the Archive facade and a backend.

A store keeps two things: compressed chunks, grouped under an opaque *blob* key, and one
:class:`EntryRecord` per entry. It knows nothing about hashing, compression, redaction,
retention policy or slicing: the :class:`~ctxgate.archive.archive.Archive` owns all of that, so
a fix there reaches every backend and a shared backend (Redis) stays small.

Ids and blob keys never contain local paths: an id is the sha256 hex of the stored bytes and a
blob key is a random hex token, so both resolve from any host that reaches the same store.

Writes of one entry follow this order: large streams may :meth:`ArchiveStore.write_chunks`
in several short transactions under a fresh blob key (so a 1 GiB ingest never holds the write
lock for seconds), then :meth:`ArchiveStore.commit` writes the remaining chunks and the record in
one transaction. Readers see an entry only once it is committed. Blobs of uploads that never
commit are removed by :meth:`ArchiveStore.sweep_uploads`.

An upload holds a lease: its time is refreshed by every :meth:`ArchiveStore.write_chunks` and
:meth:`ArchiveStore.heartbeat`, and a sweep removes only uploads whose lease time is older than
its cut-off, so a live writer that keeps refreshing is never swept. Once an upload was swept, a
later ``write_chunks`` (``first_seq > 0``) or ``commit`` of it raises
:class:`~ctxgate.errors.UploadLost` instead of storing an entry whose first chunks are gone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ctxgate.errors import UploadLost

__all__ = ["ArchiveStore", "EntryRecord", "Tombstone", "upload_lost"]


@dataclass(frozen=True, kw_only=True)
class EntryRecord:
    """What a store keeps about one entry (the backend-neutral row)."""

    id: str
    """Full sha256 hex (64 chars) of the stored bytes."""
    blob: str
    """Opaque key of the entry's chunks (random hex; no path)."""
    raw_bytes: int
    """Size of the stored (post-redaction) content, bytes."""
    stored_bytes: int
    """Size of the compressed chunks, bytes (what the disk cap counts)."""
    lines: int
    """Number of lines; a final line without newline counts."""
    created_at: float
    """Epoch seconds when first stored."""
    last_access: float
    """Epoch seconds of the last store, read or expand."""
    expires_at: float | None
    """Epoch seconds after which the entry is gone; ``None`` while pinned."""
    pinned: bool = False
    """Pinned entries never expire and are never evicted."""
    chunk_index: bytes = b""
    """Packed per-chunk index (see :mod:`ctxgate.archive.chunks`)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """JSON-serializable metadata (tool, command, tokens, redactions ...)."""


@dataclass(frozen=True, kw_only=True)
class Tombstone:
    """A record that an id existed and why it is gone (so errors can say "expired")."""

    id: str
    """Full id of the removed entry."""
    reason: str
    """``"expired"``, ``"evicted"``, ``"purged"`` or ``"deleted"``."""
    at: float
    """Epoch seconds of the removal."""


@runtime_checkable
class ArchiveStore(Protocol):
    """Stores and fetches chunks and entry records atomically. Implementations must be safe
    to use from several processes at once (for embedded stores: several connections)."""

    def write_chunks(self, blob: str, first_seq: int, chunks: Sequence[bytes]) -> None:
        """Store compressed chunks ``first_seq, first_seq+1, ...`` under ``blob`` (not yet
        visible) and refresh the upload's lease.

        Raises:
            UploadLost: ``first_seq > 0`` and the upload was swept meanwhile.
        """
        ...

    def heartbeat(self, blob: str, now: float) -> bool:
        """Refresh the lease of an upload to ``now``; False when it is unknown (never stored
        chunks, or swept)."""
        ...

    def upload_usage(self) -> tuple[int, int]:
        """``(uploads, stored_bytes)`` of uncommitted uploads (live and abandoned)."""
        ...

    def commit(
        self, record: EntryRecord, chunks: Sequence[bytes] = (), first_seq: int = 0
    ) -> EntryRecord:
        """Write the last chunks and the record in one transaction and return the stored record.

        When an entry with ``record.id`` already exists, the new blob is dropped, the existing
        entry's ``last_access`` and (unless pinned) ``expires_at`` take the new values, and the
        existing record is returned.

        Raises:
            UploadLost: ``first_seq > 0`` and the chunks stored before were swept.
        """
        ...

    def discard(self, blob: str) -> None:
        """Drop the chunks of an upload that will not be committed."""
        ...

    def get(self, entry_id: str) -> EntryRecord | None:
        """The record with exactly this full id, or ``None``."""
        ...

    def match_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        """Full ids starting with ``prefix`` (at most ``limit``, sorted)."""
        ...

    def read_chunk(self, blob: str, seq: int) -> bytes | None:
        """The compressed chunk ``seq`` of ``blob``, or ``None`` when missing."""
        ...

    def list(self, limit: int | None = None) -> list[EntryRecord]:
        """Records, most recently accessed first (chunk index omitted is allowed)."""
        ...

    def touch(self, entry_id: str, last_access: float, expires_at: float | None) -> None:
        """Refresh an entry's access time and expiry (pinned entries keep ``None``)."""
        ...

    def set_pinned(self, entry_id: str, pinned: bool, expires_at: float | None) -> bool:
        """Pin or unpin; returns False when the entry does not exist."""
        ...

    def delete(self, entry_ids: Sequence[str], reason: str, at: float) -> int:
        """Remove entries and their chunks, leaving tombstones; returns how many existed."""
        ...

    def expired_ids(self, now: float) -> list[str]:
        """Ids of unpinned entries whose ``expires_at`` is before ``now``."""
        ...

    def lru_ids(self) -> list[tuple[str, int]]:
        """``(id, stored_bytes)`` of unpinned entries, least recently accessed first."""
        ...

    def usage(self) -> tuple[int, int]:
        """``(entries, stored_bytes)`` over all committed entries."""
        ...

    def tombstone(self, prefix: str) -> Tombstone | None:
        """The most recent tombstone whose id starts with ``prefix``."""
        ...

    def sweep_uploads(self, older_than: float) -> int:
        """Drop uncommitted uploads whose lease time is before ``older_than`` (writers that
        crashed or were killed); returns how many."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


def upload_lost(blob: str) -> UploadLost:
    """The error every store raises for an upload that was swept before it committed."""
    why = "the upload's chunks were swept before it committed (its lease lapsed)"
    fix = ("re-run the command; if it recurs, raise archive.upload_lease_seconds or check "
           "the clocks of the hosts sharing the archive")
    return UploadLost(f"archive upload {blob[:12]}: {why}; {fix}", why=why, fix=fix)
