"""Retention: TTL expiry, a disk cap with least-recently-used eviction, pins and purges.

Expiry is refreshed when an entry is stored again or read (see
:attr:`~ctxgate.archive.policy.ArchivePolicy.touch_interval_seconds`). After every store the
archive calls :func:`enforce`: expired entries go first, then the least recently used unpinned
entries until the compressed total is under ``max_disk_bytes``. Pinned entries never expire and
are never evicted. Removed ids leave tombstones so a later lookup can say "expired" or
"evicted" rather than "unknown".

Uploads in progress count against the disk cap and in :func:`usage`. Their writers refresh a
lease (:attr:`~ctxgate.archive.policy.ArchivePolicy.upload_lease_seconds`); an upload whose
lease lapsed (a SIGKILLed or crashed writer) is reclaimed by the next :func:`enforce`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxgate.archive.policy import DEFAULT_ARCHIVE_POLICY

if TYPE_CHECKING:
    from ctxgate.archive.policy import ArchivePolicy
    from ctxgate.archive.stores.base import ArchiveStore

__all__ = ["HEARTBEAT_MAX_SECONDS", "PurgeResult", "Usage", "enforce", "heartbeat_seconds",
           "purge", "usage"]

HEARTBEAT_MAX_SECONDS = 30.0
"""Longest interval between two lease refreshes of a writer, seconds."""


def heartbeat_seconds(policy: ArchivePolicy) -> float:
    """How often a writer refreshes its upload's lease: a tenth of the lease, at most 30 s."""
    return min(HEARTBEAT_MAX_SECONDS, policy.upload_lease_seconds / 10)


@dataclass(frozen=True, kw_only=True)
class PurgeResult:
    """What a purge or an enforcement pass removed."""

    expired: int = 0
    """Entries removed because their TTL passed."""
    evicted: int = 0
    """Entries removed to get under the disk cap (least recently used first)."""
    purged: int = 0
    """Entries removed on request."""
    uploads: int = 0
    """Abandoned uploads dropped."""

    @property
    def removed(self) -> int:
        return self.expired + self.evicted + self.purged


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Archive totals."""

    entries: int
    raw_bytes: int
    """Sum of stored content sizes, bytes."""
    stored_bytes: int
    """Sum of compressed sizes of committed entries, bytes."""
    pinned: int
    max_disk_bytes: int
    ttl_seconds: int
    oldest: float | None
    """Creation time of the oldest entry, epoch seconds."""
    newest: float | None
    """Creation time of the newest entry, epoch seconds."""
    uploads: int = 0
    """Uncommitted uploads: runs in progress, and killed writers not yet reclaimed."""
    upload_bytes: int = 0
    """Compressed bytes of those uploads; the disk cap counts ``stored_bytes + upload_bytes``."""


def enforce(store: ArchiveStore, policy: ArchivePolicy, now: float) -> PurgeResult:
    """Expire entries past their TTL, then evict LRU entries past the disk cap."""
    expired = store.expired_ids(now)
    n_expired = store.delete(expired, "expired", now) if expired else 0
    n_evicted = 0
    uploads = store.sweep_uploads(now - policy.upload_lease_seconds)
    _, total = store.usage()
    total += store.upload_usage()[1]
    if total > policy.max_disk_bytes:
        victims = []
        for entry_id, size in store.lru_ids():
            if total <= policy.max_disk_bytes:
                break
            victims.append(entry_id)
            total -= size
        n_evicted = store.delete(victims, "evicted", now) if victims else 0
    return PurgeResult(expired=n_expired, evicted=n_evicted, uploads=uploads)


def purge(store: ArchiveStore, *, all: bool = False, older_than_seconds: float | None = None,
          entry_id: str | None = None, now: float,
          lease_seconds: float = DEFAULT_ARCHIVE_POLICY.upload_lease_seconds) -> PurgeResult:
    """Remove every entry (``all``), entries created before ``now - older_than_seconds``
    (pinned kept), or one full id. Also drops abandoned uploads."""
    if entry_id is not None:
        targets = [entry_id]
    elif all:
        targets = [r.id for r in store.list()]
    elif older_than_seconds is not None:
        cutoff = now - older_than_seconds
        targets = [r.id for r in store.list() if r.created_at < cutoff and not r.pinned]
    else:
        targets = []
    n = store.delete(targets, "purged", now) if targets else 0
    uploads = store.sweep_uploads(now - lease_seconds)
    return PurgeResult(purged=n, uploads=uploads)


def usage(store: ArchiveStore, policy: ArchivePolicy, now: float) -> Usage:
    """Totals over live entries."""
    records = [r for r in store.list() if r.expires_at is None or r.expires_at >= now]
    created = [r.created_at for r in records]
    uploads, upload_bytes = store.upload_usage()
    return Usage(
        entries=len(records), raw_bytes=sum(r.raw_bytes for r in records),
        stored_bytes=sum(r.stored_bytes for r in records),
        pinned=sum(1 for r in records if r.pinned), max_disk_bytes=policy.max_disk_bytes,
        ttl_seconds=policy.ttl_seconds, oldest=min(created) if created else None,
        newest=max(created) if created else None, uploads=uploads, upload_bytes=upload_bytes,
    )
