"""ctxgate.archive.search: matches name the entry and line; bounded; the index agrees with the scan."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.archive import Archive, ArchivePolicy
from ctxgate.archive.search import search
from ctxgate.errors import UsageError


def _fill(a: Archive) -> list[str]:
    ids = []
    big = b"".join(b"line %d ok\n" % i for i in range(300_000))  # > 1 MiB: several chunks
    ids.append(a.put(big + b"ERROR: Disk full on /var\n" + big).id)
    ids.append(a.put(b"another error here\npassword=hunter2secret\n").id)
    ids.append(a.put(b"nothing to see\n").id)
    return ids


def _hits(result) -> list[tuple[str, int, str]]:
    return sorted((h.entry_id, h.line, h.text) for h in result.hits)


def test_scan_and_fts_index_find_the_same_lines(tmp_path: Path, any_archive: Archive) -> None:
    ids = _fill(any_archive)
    got = search(any_archive, "error disk")
    assert _hits(got) == [(ids[0], 300_001, "ERROR: Disk full on /var")]
    assert {h.entry_id for h in search(any_archive, "ERROR").hits} == {ids[0], ids[1]}
    assert search(any_archive, "hunter2").hits == ()  # only redacted bytes are stored
    assert search(any_archive, "passwor").hits[0].text.startswith("password=[REDACTED")
    sqlite = Archive.open(tmp_path / "h", ArchivePolicy(tokenizer="estimate"))
    _fill(sqlite)
    for query in ("error disk", "ERROR", "line 29999 ok", "ok", "hunter2"):
        a, b = search(any_archive, query, limit=50), search(sqlite, query, limit=50)
        assert [(h.line, h.text) for h in a.hits] == [(h.line, h.text) for h in b.hits], query
    assert "fts5" in search(sqlite, "error").method
    sqlite.close()


def test_results_are_bounded_and_say_so(any_archive: Archive) -> None:
    _fill(any_archive)
    few = search(any_archive, "ok", limit=5)
    assert len(few.hits) == 5 and few.more
    assert [h.line for h in few.hits] == [1, 2, 3, 4, 5]
    capped = search(any_archive, "ok", limit=5, max_entries=1)
    assert capped.entries_searched == 1 and any("most recently used" in n for n in capped.notes)
    with pytest.raises(UsageError, match="give a query"):
        search(any_archive, "   ")
    with pytest.raises(UsageError, match="limit"):
        search(any_archive, "ok", limit=0)


def test_the_index_forgets_deleted_entries(tmp_path: Path) -> None:
    a = Archive.open(tmp_path / "h", ArchivePolicy(tokenizer="estimate"))
    ids = _fill(a)
    assert search(a, "another").hits
    a.delete(ids[1])
    assert search(a, "another").hits == ()
    assert ids[1] not in a.store.text_index().indexed()
    a.close()
