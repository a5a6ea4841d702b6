"""TTL, refresh on read, disk cap with LRU eviction, pins and purges."""

from __future__ import annotations

import os
import time

import pytest

from ctxgate.archive import Archive, ArchivePolicy
from ctxgate.archive.stores.base import ArchiveStore
from ctxgate.errors import EntryNotFound


def test_expiry_shown_and_refreshed_on_read(store: ArchiveStore) -> None:
    a = Archive(store, ArchivePolicy(tokenizer="estimate", touch_interval_seconds=0))
    e = a.put(b"x\n")
    assert e.expires_at == pytest.approx(e.created_at + 48 * 3600, abs=1)
    time.sleep(0.01)
    a.expand(e.id)
    assert a.stat(e.id).expires_at > e.expires_at


def test_disk_cap_evicts_least_recently_used(store: ArchiveStore) -> None:
    a = Archive(store, ArchivePolicy(max_disk_bytes=250_000, tokenizer="estimate",
                                     touch_interval_seconds=0))
    first = a.put(os.urandom(100_000))
    second = a.put(os.urandom(100_000))
    time.sleep(0.01)
    a.read(first.id)  # first is now more recent than second
    third = a.put(os.urandom(100_000))
    with pytest.raises(EntryNotFound, match="evicted"):
        a.stat(second.id)
    assert a.stat(first.id) and a.stat(third.id)
    assert a.stats().stored_bytes <= 250_000


def test_pinned_entries_survive_ttl_and_cap(store: ArchiveStore) -> None:
    a = Archive(store, ArchivePolicy(max_disk_bytes=150_000, tokenizer="estimate"))
    keep = a.pin(a.put(os.urandom(100_000)).id)
    assert keep.pinned and keep.expires_at is None
    a.put(os.urandom(100_000))
    a.put(os.urandom(100_000))
    assert a.stat(keep.id).pinned
    unpinned = a.pin(keep.id, False)
    assert unpinned.expires_at is not None


def test_purge_all_older_than_and_one(store: ArchiveStore) -> None:
    a = Archive(store, ArchivePolicy(tokenizer="estimate"))
    ids = [a.put(b"entry %d\n" % i).id for i in range(4)]
    a.pin(ids[0])
    assert a.purge(older_than_seconds=3600).purged == 0
    assert a.purge(older_than_seconds=0).purged == 3  # pinned kept
    assert a.purge(entry_id=ids[0][:8]).purged == 1
    a.put(b"again\n")
    assert a.purge(all=True).purged == 1 and a.stats().entries == 0


def test_expire_removes_past_ttl(store: ArchiveStore) -> None:
    a = Archive(store, ArchivePolicy(ttl_seconds=0, tokenizer="estimate"))
    e = a.put(b"short lived\n")
    time.sleep(0.01)
    a.expire()
    with pytest.raises(EntryNotFound, match="expired"):
        a.stat(e.id)
