"""The ArchiveStore contract, run against every embedded backend (memory, sqlite)."""

from __future__ import annotations

from ctxgate.archive.stores.base import ArchiveStore, EntryRecord


def _rec(entry_id: str, blob: str, at: float = 100.0, **kw) -> EntryRecord:
    base = dict(id=entry_id, blob=blob, raw_bytes=10, stored_bytes=5, lines=1, created_at=at,
                last_access=at, expires_at=at + 50, chunk_index=b"", meta={"tool": "t"})
    base.update(kw)
    return EntryRecord(**base)


def test_is_protocol(store: ArchiveStore) -> None:
    assert isinstance(store, ArchiveStore)


def test_chunks_invisible_until_commit_then_readable(store: ArchiveStore) -> None:
    store.write_chunks("b1", 0, [b"c0", b"c1"])
    assert store.get("a" * 64) is None
    rec = store.commit(_rec("a" * 64, "b1"), [b"c2"], 2)
    assert rec.id == "a" * 64
    assert [store.read_chunk("b1", i) for i in range(3)] == [b"c0", b"c1", b"c2"]
    got = store.get("a" * 64)
    assert got is not None and got.meta == {"tool": "t"} and got.expires_at == 150.0


def test_recommit_same_id_keeps_one_copy_and_refreshes(store: ArchiveStore) -> None:
    store.commit(_rec("a" * 64, "b1"), [b"x"])
    again = store.commit(_rec("a" * 64, "b2", at=200.0, meta={"tool": "other"}), [b"x"])
    assert again.blob == "b1" and again.last_access == 200.0 and again.expires_at == 250.0
    assert again.meta == {"tool": "t"} and again.created_at == 100.0
    assert store.read_chunk("b2", 0) is None
    assert store.usage() == (1, 5)


def test_prefix_matching_and_tombstones(store: ArchiveStore) -> None:
    store.commit(_rec("ab" + "0" * 62, "b1"), [b"x"])
    store.commit(_rec("ab" + "1" * 62, "b2"), [b"y"])
    store.commit(_rec("cd" + "0" * 62, "b3"), [b"z"])
    assert store.match_prefix("ab", limit=5) == ["ab" + "0" * 62, "ab" + "1" * 62]
    assert store.match_prefix("ab1") == ["ab" + "1" * 62]
    assert store.match_prefix("ef") == []
    assert store.delete(["cd" + "0" * 62, "ff" * 32], "expired", 300.0) == 1
    tomb = store.tombstone("cd00")
    assert tomb is not None and tomb.reason == "expired" and tomb.at == 300.0
    assert store.read_chunk("b3", 0) is None
    assert store.tombstone("ab") is None


def test_touch_pin_expiry_and_lru(store: ArchiveStore) -> None:
    store.commit(_rec("a" * 64, "b1", at=100.0), [b"x"])
    store.commit(_rec("b" * 64, "b2", at=110.0), [b"y"])
    store.touch("a" * 64, 120.0, 170.0)
    assert [i for i, _ in store.lru_ids()] == ["b" * 64, "a" * 64]
    assert [r.id for r in store.list()] == ["a" * 64, "b" * 64]
    assert store.set_pinned("b" * 64, True, None)
    assert not store.set_pinned("c" * 64, True, None)
    assert store.get("b" * 64).expires_at is None
    store.touch("b" * 64, 130.0, 180.0)  # pinned entries keep no expiry
    assert store.get("b" * 64).expires_at is None
    assert store.expired_ids(1e9) == ["a" * 64]
    assert [i for i, _ in store.lru_ids()] == ["a" * 64]


def test_discard_and_sweep_uploads(store: ArchiveStore) -> None:
    store.write_chunks("gone", 0, [b"x"])
    store.discard("gone")
    assert store.read_chunk("gone", 0) is None
    store.write_chunks("stale", 0, [b"x"])
    assert store.sweep_uploads(older_than=0.0) == 0
    assert store.sweep_uploads(older_than=1e12) == 1
    assert store.read_chunk("stale", 0) is None


def test_write_chunks_and_heartbeat_refresh_the_lease(store: ArchiveStore) -> None:
    import time

    before = time.time()
    store.write_chunks("live", 0, [b"c0"])
    assert store.sweep_uploads(older_than=before - 1) == 0  # refreshed just now
    assert store.heartbeat("live", before + 1_000) is True
    assert store.sweep_uploads(older_than=before + 999) == 0  # the heartbeat moved the lease
    store.write_chunks("live", 1, [b"c1"])  # a later batch refreshes it too
    assert store.heartbeat("never-stored", before) is False
    assert store.upload_usage() == (1, 4)


def test_a_swept_upload_cannot_add_chunks_or_commit(store: ArchiveStore) -> None:
    import pytest

    from ctxgate.errors import UploadLost

    store.write_chunks("swept", 0, [b"c0", b"c1"])
    assert store.sweep_uploads(older_than=1e12) == 1
    assert store.upload_usage() == (0, 0)
    assert store.heartbeat("swept", 1e12) is False
    with pytest.raises(UploadLost, match="swept before it committed"):
        store.write_chunks("swept", 2, [b"c2"])
    with pytest.raises(UploadLost, match="lease lapsed"):
        store.commit(_rec("c" * 64, "swept"), [b"c2"], 2)
    assert store.get("c" * 64) is None and store.usage() == (0, 0)  # nothing unreadable stored
    # an entry that already exists with the same content is still refreshed (it is readable)
    store.commit(_rec("d" * 64, "kept"), [b"x"])
    store.write_chunks("dup", 0, [b"x"])
    store.sweep_uploads(older_than=1e12)
    assert store.commit(_rec("d" * 64, "dup", at=300.0), [b"y"], 1).last_access == 300.0


def test_upload_usage_counts_uncommitted_bytes_until_commit_or_discard(
        store: ArchiveStore) -> None:
    store.write_chunks("u1", 0, [b"12345", b"678"])
    store.write_chunks("u2", 0, [b"abc"])
    assert store.upload_usage() == (2, 11)
    store.commit(_rec("e" * 64, "u1"), [b"9"], 2)
    assert store.upload_usage() == (1, 3)
    store.discard("u2")
    assert store.upload_usage() == (0, 0)
