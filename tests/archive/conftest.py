"""Archive fixtures: a `store` over every embedded backend and a real SQLite archive."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.archive import Archive, ArchivePolicy
from ctxgate.archive.stores.base import ArchiveStore
from ctxgate.archive.stores.memory import MemoryStore
from ctxgate.archive.stores.sqlite import SQLiteStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ArchiveStore:
    if request.param == "memory":
        s: ArchiveStore = MemoryStore()
    else:
        s = SQLiteStore(tmp_path / "store" / "archive.db")
    yield s
    s.close()


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    a = Archive.open(tmp_path / "home", ArchivePolicy(tokenizer="estimate"))
    yield a
    a.close()


@pytest.fixture
def any_archive(store: ArchiveStore) -> Archive:
    return Archive(store, ArchivePolicy(tokenizer="estimate"))
