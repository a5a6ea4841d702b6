"""MemoryStore: an in-process ArchiveStore for tests and throwaway runs (thread-safe, not shared)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import replace

from ctxgate.archive.stores.base import EntryRecord, Tombstone
from ctxgate.archive.stores.base import upload_lost as _lost

__all__ = ["MemoryStore"]

_TOMBSTONE_KEEP = 1_000
"""Tombstones kept (most recent), entries."""


class MemoryStore:
    """Keeps chunks and records in dicts; same contract as the SQLite store."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, EntryRecord] = {}
        self._chunks: dict[str, dict[int, bytes]] = {}
        self._blob_time: dict[str, float] = {}
        self._tombstones: list[Tombstone] = []

    def write_chunks(self, blob: str, first_seq: int, chunks: Sequence[bytes]) -> None:
        with self._lock:
            if first_seq > 0 and blob not in self._blob_time:
                raise _lost(blob)
            target = self._chunks.setdefault(blob, {})
            self._blob_time[blob] = time.time()  # the upload's lease
            for i, data in enumerate(chunks):
                target[first_seq + i] = bytes(data)

    def commit(
        self, record: EntryRecord, chunks: Sequence[bytes] = (), first_seq: int = 0
    ) -> EntryRecord:
        with self._lock:
            existing = self._records.get(record.id)
            if existing is not None:
                self._chunks.pop(record.blob, None)
                self._blob_time.pop(record.blob, None)
                refreshed = replace(
                    existing,
                    last_access=record.last_access,
                    expires_at=None if existing.pinned else record.expires_at,
                )
                self._records[record.id] = refreshed
                return refreshed
            if first_seq > 0 and (record.blob not in self._blob_time
                                  or len(self._chunks.get(record.blob, {})) != first_seq):
                raise _lost(record.blob)
            target = self._chunks.setdefault(record.blob, {})
            for i, data in enumerate(chunks):
                target[first_seq + i] = bytes(data)
            self._blob_time.pop(record.blob, None)
            self._records[record.id] = record
            return record

    def discard(self, blob: str) -> None:
        with self._lock:
            self._chunks.pop(blob, None)
            self._blob_time.pop(blob, None)

    def get(self, entry_id: str) -> EntryRecord | None:
        with self._lock:
            return self._records.get(entry_id)

    def match_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        with self._lock:
            return sorted(i for i in self._records if i.startswith(prefix))[:limit]

    def read_chunk(self, blob: str, seq: int) -> bytes | None:
        with self._lock:
            return self._chunks.get(blob, {}).get(seq)

    def list(self, limit: int | None = None) -> list[EntryRecord]:
        with self._lock:
            records = sorted(self._records.values(), key=lambda r: (-r.last_access, r.id))
        return records if limit is None else records[:limit]

    def touch(self, entry_id: str, last_access: float, expires_at: float | None) -> None:
        with self._lock:
            rec = self._records.get(entry_id)
            if rec is not None:
                self._records[entry_id] = replace(
                    rec, last_access=last_access, expires_at=None if rec.pinned else expires_at
                )

    def set_pinned(self, entry_id: str, pinned: bool, expires_at: float | None) -> bool:
        with self._lock:
            rec = self._records.get(entry_id)
            if rec is None:
                return False
            self._records[entry_id] = replace(
                rec, pinned=pinned, expires_at=None if pinned else expires_at
            )
            return True

    def delete(self, entry_ids: Sequence[str], reason: str, at: float) -> int:
        removed = 0
        with self._lock:
            for entry_id in entry_ids:
                rec = self._records.pop(entry_id, None)
                if rec is None:
                    continue
                removed += 1
                self._chunks.pop(rec.blob, None)
                self._tombstones.append(Tombstone(id=entry_id, reason=reason, at=at))
            del self._tombstones[:-_TOMBSTONE_KEEP]
        return removed

    def expired_ids(self, now: float) -> list[str]:
        with self._lock:
            return sorted(
                r.id for r in self._records.values()
                if not r.pinned and r.expires_at is not None and r.expires_at < now
            )

    def lru_ids(self) -> list[tuple[str, int]]:
        with self._lock:
            recs = sorted(
                (r for r in self._records.values() if not r.pinned),
                key=lambda r: (r.last_access, r.id),
            )
            return [(r.id, r.stored_bytes) for r in recs]

    def usage(self) -> tuple[int, int]:
        with self._lock:
            return len(self._records), sum(r.stored_bytes for r in self._records.values())

    def tombstone(self, prefix: str) -> Tombstone | None:
        with self._lock:
            for tomb in reversed(self._tombstones):
                if tomb.id.startswith(prefix):
                    return tomb
        return None

    def heartbeat(self, blob: str, now: float) -> bool:
        with self._lock:
            if blob not in self._blob_time:
                return False
            self._blob_time[blob] = now
            return True

    def upload_usage(self) -> tuple[int, int]:
        with self._lock:
            return len(self._blob_time), sum(
                len(c) for b in self._blob_time for c in self._chunks.get(b, {}).values())

    def sweep_uploads(self, older_than: float) -> int:
        with self._lock:
            stale = [b for b, t in self._blob_time.items() if t < older_than]
            for blob in stale:
                self._chunks.pop(blob, None)
                del self._blob_time[blob]
            return len(stale)

    def close(self) -> None:
        """Nothing to release."""

