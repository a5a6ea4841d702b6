"""Archive facade: round trips, ids, dedupe, metadata, writer semantics and every error."""

from __future__ import annotations

import hashlib
import io
import random
import stat
from dataclasses import replace

import pytest

from ctxgate.archive import Archive, ArchivePolicy, EntryMeta
from ctxgate.archive.chunks import CHUNK_BYTES
from ctxgate.archive.stores.memory import MemoryStore
from ctxgate.archive.stores.sqlite import SQLiteStore
from ctxgate.errors import AmbiguousId, EntryNotFound, IntegrityError, UsageError


def test_put_read_roundtrip_and_id_is_sha256(any_archive: Archive) -> None:
    data = b"hello\nworld\x00\xff\r\n"
    e = any_archive.put(data, EntryMeta(tool="shell", command="echo", exit_code=3))
    assert e.id == hashlib.sha256(data).hexdigest() and e.short_id == e.id[:12]
    assert (e.raw_bytes, e.lines, e.tool, e.command, e.exit_code) == (len(data), 2, "shell", "echo", 3)
    assert any_archive.read(e.short_id) == data
    assert any_archive.read(e.id, 6, 5) == b"world"


def test_final_line_without_newline_counts(any_archive: Archive) -> None:
    assert any_archive.put(b"a\nb").lines == 2
    assert any_archive.put(b"a\nb\n").lines == 2
    assert any_archive.put(b"").lines == 0


def test_same_bytes_stored_once_and_age_refreshed(any_archive: Archive) -> None:
    first = any_archive.put(b"same bytes\n", EntryMeta(tool="a"))
    second = any_archive.put(b"same bytes\n", EntryMeta(tool="b"))
    assert second.id == first.id and second.tool == "a"
    assert second.last_access >= first.last_access and second.expires_at >= first.expires_at
    assert any_archive.stats().entries == 1


def test_multi_chunk_stream_constant_pieces(archive: Archive) -> None:
    # seeded bytes: os.urandom sometimes wrote "PWD:" + bytes, which the redactor rightly
    # replaced (about 1 run in 40), and the byte count then differed
    blocks = [random.Random(seed).randbytes(300_000) + b"\n" for seed in range(12)]
    e = archive.put_stream(iter(blocks))
    assert e.raw_bytes == sum(map(len, blocks)) > 3 * CHUNK_BYTES
    assert archive.read(e.id) == b"".join(blocks)
    off = CHUNK_BYTES - 10
    assert archive.read(e.id, off, 20) == b"".join(blocks)[off:off + 20]
    assert archive.verify(e.short_id).id == e.id
    assert archive.put_stream(io.BytesIO(b"".join(blocks))).id == e.id


def test_writer_finish_and_implicit_finish_on_exception(archive: Archive) -> None:
    with archive.writer(EntryMeta(tool="shell")) as w:
        for i in range(1000):
            w.write(b"line %d\n" % i)
    entry = w.finish(exit_code=1)  # already finished by the with-block: same entry
    assert entry.lines == 1000 and w.entry == entry
    w2 = archive.writer(EntryMeta(command="x"))
    w2.write(b"partial")
    e2 = w2.finish(exit_code=3, reason="digest", truncated=True, extra={"k": 1})
    assert (e2.exit_code, e2.reason, e2.truncated, e2.extra) == (3, "digest", True, {"k": 1})
    with pytest.raises(RuntimeError), archive.writer() as w3:
        w3.write(b"before the crash\n")
        raise RuntimeError("boom")
    assert w3.entry is not None and w3.entry.truncated
    assert archive.read(w3.entry.id) == b"before the crash\n"


def test_tokens_exact_for_small_estimate_for_big(tmp_path) -> None:
    a = Archive(MemoryStore(), ArchivePolicy(exact_tokens_max_bytes=1000))
    small = a.put(b"hello world\n")
    assert small.tokens.exact and small.tokens.tokenizer == "o200k_base"
    big = a.put(b"x" * 5000)
    assert not big.tokens.exact and big.tokens.tokenizer == "estimate"
    assert big.tokens.count == 1250
    from ctxgate.tokens import TokenCount

    given = TokenCount(count=7, tokenizer="o200k_base", exact=True)
    w = a.writer()
    w.write(b"counted by the caller\n")
    assert w.finish(tokens=given).tokens == given


def test_unknown_id_lists_recent(any_archive: Archive) -> None:
    e = any_archive.put(b"x")
    with pytest.raises(EntryNotFound, match=r"no archive entry abcdef12 \(unknown id\)") as info:
        any_archive.expand("abcdef12")
    assert info.value.recent == [e.short_id] and info.value.exit_code == 2


def test_malformed_ids_are_usage_errors(any_archive: Archive) -> None:
    with pytest.raises(UsageError, match="not an archive id"):
        any_archive.stat("not-hex!")
    with pytest.raises(UsageError, match="too short"):
        any_archive.stat("ab")


def test_expired_and_purged_say_so(tmp_path) -> None:
    a = Archive(MemoryStore(), ArchivePolicy(ttl_seconds=0, tokenizer="estimate"))
    e = a.put(b"old\n")
    import time

    time.sleep(0.01)
    a.put(b"newer\n")  # retention after this store removes the expired one
    with pytest.raises(EntryNotFound, match="expired"):
        a.stat(e.short_id)
    b = Archive(MemoryStore(), ArchivePolicy(tokenizer="estimate"))
    e = b.put(b"x")
    b.purge(entry_id=e.short_id)
    with pytest.raises(EntryNotFound, match="purged"):
        b.read(e.id)


def test_ambiguous_prefix_never_returns_content(any_archive: Archive) -> None:
    e = any_archive.put(b"one")
    store = any_archive.store
    rec = store.get(e.id)
    twin = e.id[:12] + ("0" if e.id[12] != "0" else "1") + e.id[13:]
    store.commit(replace(rec, id=twin, blob="twinblob"), [store.read_chunk(rec.blob, 0)])
    with pytest.raises(AmbiguousId, match=f"prefix {e.short_id} matches 2 entries") as info:
        any_archive.read(e.short_id)
    assert sorted(info.value.candidates) == sorted([e.id, twin])
    assert any_archive.read(e.id) == b"one"  # the full id still resolves exactly
    with pytest.raises(IntegrityError, match="does not hash to its id"):
        any_archive.read(twin)  # same bytes under a wrong id: refused
    with pytest.raises(IntegrityError, match="does not hash to its id"):
        any_archive.expand(twin)  # one-chunk entries are checked on every view too


def test_corrupt_chunk_is_integrity_error(archive: Archive) -> None:
    e = archive.put(b"hello\n" * 1000)
    store: SQLiteStore = archive.store  # type: ignore[assignment]
    rec = store.get(e.id)
    with store._write() as conn:
        conn.execute("UPDATE archive_chunks SET data=? WHERE blob=?", (b"garbage", rec.blob))
    with pytest.raises(IntegrityError, match="corrupt"):
        archive.expand(e.short_id, head=1)


def test_sqlite_files_are_private(tmp_path) -> None:
    home = tmp_path / "h"
    a = Archive.open(home)
    a.put(b"secret-ish\n")
    a.close()
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "archive.db").stat().st_mode) == 0o600
    tables = SQLiteStore(home / "archive.db")._conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table'").fetchall()
    assert all(name.startswith("archive_") for (name,) in tables)


def test_memory_backend_via_policy(tmp_path) -> None:
    a = Archive.open(tmp_path, ArchivePolicy(backend="memory"))
    assert isinstance(a.store, MemoryStore)
    assert not (tmp_path / "archive.db").exists()


@pytest.mark.parametrize("newlines", [False, True])
def test_stream_ingest_memory_is_constant(tmp_path, newlines: bool) -> None:
    import subprocess
    import sys

    code = f"""
import os, resource, sys
from pathlib import Path
from ctxgate.archive import Archive
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
block = os.urandom(1 << 19).hex().encode()  # 1 MiB, {"with" if newlines else "without"} newlines
if {newlines}:
    block = block.replace(b"a", b"\\n")
def gen():
    for i in range(96):
        yield block
a = Archive.open(Path(sys.argv[1]))
e = a.put_stream(gen())
a.verify(e.id)
print(e.raw_bytes, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base)
"""
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "h")], check=True,
                         capture_output=True, text=True).stdout.split()
    raw, grown_kb = int(out[0]), int(out[1])
    assert raw == 96 << 20
    assert grown_kb < 40_000, f"peak RSS grew {grown_kb} kB for a 96 MiB stream"


def test_unknown_backend_is_a_config_error(tmp_path) -> None:
    from ctxgate.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown"):
        Archive.open(tmp_path, ArchivePolicy(backend="postgres"))


def test_unwritable_home_is_store_unavailable(tmp_path) -> None:
    from ctxgate.errors import StoreUnavailable

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreUnavailable, match="CTXGATE_HOME"):
        Archive.open(blocker / "home")


def test_unserializable_metadata_is_refused_on_every_store(any_archive: Archive) -> None:
    with pytest.raises(UsageError, match="not JSON-serializable"):
        any_archive.put(b"data\n", EntryMeta(extra={"when": object()}))
    assert any_archive.stats().entries == 0


@pytest.mark.parametrize("field", [{"chunk_bytes": 0}, {"ttl_seconds": -1},
                                   {"expand_max_tokens": 10}, {"grep_timeout_seconds": 0}])
def test_policy_rejects_nonsense(field) -> None:
    from ctxgate.errors import ConfigError

    with pytest.raises(ConfigError, match=f"archive.{next(iter(field))} must be"):
        ArchivePolicy(**field)
