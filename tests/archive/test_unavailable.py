"""An archive that could not be opened refuses a writer at once, with the reason."""

from __future__ import annotations

import pytest

from ctxgate.archive.failure import open_archive
from ctxgate.archive.policy import DEFAULT_ARCHIVE_POLICY
from ctxgate.errors import StoreUnavailable


def test_a_garbled_archive_refuses_a_writer_before_any_output(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "archive.db").write_bytes(b"not a database at all" * 200)
    archive, failure = open_archive(home, DEFAULT_ARCHIVE_POLICY)
    assert failure is not None and "SQLite" in failure.why
    with pytest.raises(StoreUnavailable, match="the archive is unavailable") as info:
        archive.writer()
    assert info.value.why == failure.why
    with pytest.raises(StoreUnavailable):
        archive.put(b"x" * 10)
