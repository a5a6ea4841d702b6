"""Many processes on one SQLite archive: 8 writers and 4 readers at once (all racing to create
the file too), every entry checked byte for byte, no 'database is locked', nothing lost."""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import random
import traceback
from pathlib import Path

import pytest

WRITERS = 8
READERS = 4
ENTRIES_PER_WRITER = 40


def _content(writer: int, i: int) -> bytes:
    rng = random.Random(writer * 1000 + i)
    if i % 10 == 3:  # a shared output: several writers store the same bytes
        return b"shared output %d\n" % (i // 10) * 500
    size = rng.choice([10, 1_000, 50_000, 300_000])
    if i % 7 == 0:
        return rng.randbytes(size)
    return b"".join(b"w%d e%d line %d\n" % (writer, i, n) for n in range(size // 16 + 1))


def _policy():
    from ctxgate.archive import ArchivePolicy

    return ArchivePolicy(chunk_bytes=65_536, tokenizer="estimate", touch_interval_seconds=0)


def _writer(home: str, writer: int, out: mp.Queue) -> None:
    try:
        from ctxgate.archive import Archive, EntryMeta

        archive = Archive.open(Path(home), _policy())
        for i in range(ENTRIES_PER_WRITER):
            data = _content(writer, i)
            if i % 2:
                entry = archive.put(data, EntryMeta(tool="w", command=f"{writer}/{i}"))
            else:
                with archive.writer(EntryMeta(tool="w")) as w:
                    for k in range(0, len(data), 7_777):
                        w.write(data[k:k + 7_777])
                entry = w.entry
            out.put(("ok", writer, i, entry.id))
        archive.close()
    except BaseException:
        out.put(("error", writer, -1, traceback.format_exc()))


def _reader(home: str, reader: int, out: mp.Queue, stop, deadline_s: float = 120.0) -> None:
    """Read and verify whatever is there until the writers are done (at least one entry)."""
    try:
        import time

        from ctxgate.archive import Archive

        archive = Archive.open(Path(home), _policy())
        checked = 0
        end = time.monotonic() + deadline_s
        while time.monotonic() < end and (not stop.is_set() or checked == 0):
            for entry in archive.list(limit=8):
                data = archive.read(entry.id)  # whole read: re-hashed against the id
                assert hashlib.sha256(data).hexdigest() == entry.id
                archive.expand(entry.short_id, tail=3)
                checked += 1
        out.put(("read", reader, checked, ""))
        archive.close()
    except BaseException:
        out.put(("error", reader, -1, traceback.format_exc()))


@pytest.mark.slow
def test_many_writers_and_readers_one_sqlite_file(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    from ctxgate.archive import Archive

    ctx = mp.get_context("spawn")
    out: mp.Queue = ctx.Queue()
    stop = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(home, w, out)) for w in range(WRITERS)]
    procs += [ctx.Process(target=_reader, args=(home, r, out, stop)) for r in range(READERS)]
    for p in procs:
        p.start()
    results = []
    writes = 0
    for _ in range(WRITERS * ENTRIES_PER_WRITER + READERS):
        results.append(out.get(timeout=240))
        if results[-1][0] == "error":
            break
        if results[-1][0] == "ok":
            writes += 1
            if writes == WRITERS * ENTRIES_PER_WRITER:
                stop.set()
    stop.set()
    for p in procs:
        p.join(timeout=60)
    errors = [r[3] for r in results if r[0] == "error"]
    assert not errors, errors[0]
    assert all(p.exitcode == 0 for p in procs)
    reads = [r[2] for r in results if r[0] == "read"]
    assert len(reads) == READERS and all(n > 0 for n in reads)
    archive = Archive.open(Path(home), _policy())
    written = [(r[1], r[2], r[3]) for r in results if r[0] == "ok"]
    assert len(written) == WRITERS * ENTRIES_PER_WRITER
    for writer, i, entry_id in written:
        data = _content(writer, i)
        assert entry_id == hashlib.sha256(data).hexdigest()
        assert archive.read(entry_id) == data
    distinct = {e for _, _, e in written}
    assert archive.stats().entries == len(distinct) < len(written)  # shared outputs stored once
