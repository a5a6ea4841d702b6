"""Archive fixtures: a `store` over every backend (memory, SQLite, real Redis) and a real SQLite archive."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.archive import Archive, ArchivePolicy
from ctxgate.archive.stores.base import ArchiveStore
from ctxgate.archive.stores.memory import MemoryStore
from ctxgate.archive.stores.sqlite import SQLiteStore

REDIS_URL = "redis://127.0.0.1:6379/15"
"""The real Redis on loopback (.ci/run starts it); database 15, a fresh key prefix per test."""


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ArchiveStore:
    if request.param == "memory":
        s: ArchiveStore = MemoryStore()
    elif request.param == "sqlite":
        s = SQLiteStore(tmp_path / "store" / "archive.db")
    else:
        import uuid

        from ctxgate.archive.stores.redis import RedisStore

        prefix = f"ctxgate-test-{uuid.uuid4().hex}:"
        s = RedisStore.from_url(REDIS_URL, prefix=prefix)
    yield s
    if request.param == "redis":
        for key in s.client.scan_iter(match=f"{s.prefix}*"):
            s.client.delete(key)
    s.close()


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    a = Archive.open(tmp_path / "home", ArchivePolicy(tokenizer="estimate"))
    yield a
    a.close()


@pytest.fixture
def any_archive(store: ArchiveStore) -> Archive:
    return Archive(store, ArchivePolicy(tokenizer="estimate"))
