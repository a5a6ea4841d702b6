"""Cut originals go into the real archive (memory store and SQLite file) and come back whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.archive import Archive, MemoryStore
from ctxgate.bound import bound_record, parse_marker

from .helpers import MIB, turn


@pytest.fixture(params=["memory", "sqlite"])
def archive(request, tmp_path: Path):
    if request.param == "memory":
        store = Archive(store=MemoryStore())
    else:
        store = Archive.open(tmp_path / "home")
    yield store
    store.close()


def test_originals_are_stored_and_re_fetchable_by_the_marker_id(archive) -> None:
    first = "".join(f"{i:07d} first result line 中文 😀\n" for i in range(60_000))
    second = "second " * 200_000
    result = bound_record(turn(first, second, tool="fetch"), archive=archive)
    assert result.serialized_bytes <= MIB and len(result.cuts) == 2
    for cut, original in zip(result.cuts, (first, second), strict=True):
        assert archive.read(cut.archive_id) == original.encode("utf-8")
        text = result.record["toolInvocations"][int(cut.path.split("/")[2])]["result"]
        marker = parse_marker(text)
        assert archive.stat(marker.archive_id).id == cut.archive_id
        assert archive.stat(marker.archive_id).raw_bytes == cut.original_bytes
    assert archive.stat(result.cuts[0].archive_id).tool == "fetch"


def test_nothing_is_stored_when_nothing_is_cut(archive) -> None:
    result = bound_record(turn("small"), archive=archive)
    assert not result.changed and archive.list(limit=10) == []
