"""Decoding notes for binary and broken text, and the token bound on every view."""

from __future__ import annotations

import pytest

from ctxgate.archive import Archive, ArchivePolicy
from ctxgate.archive.stores.memory import MemoryStore
from ctxgate.archive.views import Budget, DecodeStats, clip_utf8, decode_row
from ctxgate.errors import UsageError
from ctxgate.tokens import count_tokens


def test_decode_row_counts_what_it_changes() -> None:
    stats = DecodeStats()
    text = decode_row(b"a\xffb\x00c\x1b[31mred\x1b[0m\rz\r", stats)
    assert text == "a\ufffdb\u2400cred\u240dz"
    assert (stats.invalid, stats.nul, stats.ansi, stats.control, stats.crlf) == (1, 1, 2, 1, 1)
    notes = "\n".join(stats.notes())
    for word in ("invalid UTF-8", "NUL", "ANSI", "control", "CRLF"):
        assert word in notes


def test_clip_utf8_never_splits_a_character() -> None:
    data = "€€".encode()  # 3 bytes each
    assert [clip_utf8(data, n) for n in range(7)] == [b"", b"", b"", "€".encode(),
                                                      "€".encode(), "€".encode(), data]


def test_binary_entry_view_has_notes_and_bytes_unchanged(archive: Archive) -> None:
    data = bytes(range(256)) * 4
    e = archive.put(data)
    v = archive.expand(e.id)
    assert "invalid UTF-8" in v.text and "NUL" in v.text and "looks like binary" in v.text
    assert "looks like binary" not in archive.expand(archive.put(b"caf\xe9 ok\n" * 5).id).text
    assert archive.read(e.id) == data


def test_crlf_and_ansi_lines(archive: Archive) -> None:
    e = archive.put(b"\x1b[32mok\x1b[0m\r\nsecond\r\n")
    v = archive.expand(e.id)
    assert "1| ok\n2| second\n" in v.text and "CRLF" in v.text and "ANSI" in v.text


@pytest.mark.parametrize("max_tokens", [100, 500, 2000])
def test_views_stay_within_the_token_budget(max_tokens: int) -> None:
    a = Archive(MemoryStore(), ArchivePolicy())  # o200k_base, exact counting
    dense = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(30000)).encode()
    e = a.put(dense + b"\n" + b"word " * 20000 + b"\n")
    for kwargs in ({}, {"lines": "2:2"}, {"byte_range": "0:100000"}, {"grep": "word"}):
        v = a.expand(e.id, max_tokens=max_tokens, **kwargs)
        assert count_tokens(v.text).count <= max_tokens, kwargs
    with pytest.raises(UsageError, match="at least 100"):
        a.expand(e.id, max_tokens=99)


def test_budget_fits_uses_bytes_first() -> None:
    b = Budget(100, "estimate")
    assert b.fits("x" * 100) and b.fits("x" * 400) and not b.fits("x" * 401)
