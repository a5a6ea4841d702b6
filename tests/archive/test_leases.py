"""Upload leases (issue 13, part 4): a live upload is never swept, a killed one is reclaimed
promptly and counted until then, and a swept upload never commits an unreadable entry.

The process tests run ``ctxgate run`` as a real subprocess on a real SQLite file and on the
real Redis (loopback, database 15), with ``archive.upload_lease_seconds`` set small, while this
process sweeps the same archive the way every store does (``Archive.expire``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ctxgate.archive import Archive, ArchivePolicy, EntryMeta
from ctxgate.archive.stores.base import ArchiveStore
from ctxgate.errors import UploadLost

REDIS_URL = "redis://127.0.0.1:6379/15"

# Deterministic, incompressible-ish text: 1 MB, a silence longer than the lease, 600 KB more.
SLOW_WRITER = (
    "import base64, random, sys, time\n"
    "r = random.Random(7)\n"
    "def chunk(n):\n"
    "    return base64.encodebytes(r.randbytes(n))\n"
    "out = sys.stdout.buffer\n"
    "out.write(chunk(750_000)); out.flush()\n"
    "time.sleep(float(sys.argv[1]))\n"
    "out.write(chunk(450_000)); out.flush()\n"
    "time.sleep(1.0)\n"
    "out.write(b'the end\\n')\n"
)


def _expected_slow_output() -> bytes:
    import base64
    import random

    r = random.Random(7)
    first = base64.encodebytes(r.randbytes(750_000))
    return first + base64.encodebytes(r.randbytes(450_000)) + b"the end\n"


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest, tmp_path: Path):
    """(env for ctxgate subprocesses, a function opening the same archive with a lease)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env.update(CTXGATE_HOME=str(tmp_path / "home"), CTXGATE_CONFIG=str(tmp_path / "no.toml"),
               CTXGATE_ARCHIVE__CHUNK_BYTES="65536")
    extra: dict = {}
    if request.param == "redis":
        prefix = f"ctxgate-test-{uuid.uuid4().hex}:"
        env.update(CTXGATE_ARCHIVE__BACKEND="redis", CTXGATE_ARCHIVE__REDIS_URL=REDIS_URL,
                   CTXGATE_ARCHIVE__REDIS_PREFIX=prefix)
        extra = dict(backend="redis", redis_url=REDIS_URL, redis_prefix=prefix)

    def open_archive(lease: float) -> Archive:
        return Archive.open(tmp_path / "home", ArchivePolicy(
            chunk_bytes=65_536, tokenizer="estimate", upload_lease_seconds=lease, **extra))

    yield env, open_archive
    if request.param == "redis":
        with open_archive(60) as a:
            for key in a.store.client.scan_iter(match=f"{extra['redis_prefix']}*"):
                a.store.client.delete(key)


def test_a_writer_silent_past_the_lease_is_not_swept_and_commits_a_readable_entry(
        backend, tmp_path: Path) -> None:
    env, open_archive = backend
    lease = 2.0
    env = dict(env, CTXGATE_ARCHIVE__UPLOAD_LEASE_SECONDS=str(lease))
    proc = subprocess.Popen([sys.executable, "-m", "ctxgate", "run", "--", sys.executable,
                             "-c", SLOW_WRITER, str(3 * lease)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    swept, seen_uploads = 0, 0
    with open_archive(lease) as sweeper:
        while proc.poll() is None:  # sweep as every other process's store would, all along
            swept += sweeper.expire().uploads
            seen_uploads = max(seen_uploads, sweeper.stats().uploads)
            time.sleep(0.1)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert swept == 0 and seen_uploads == 1  # in progress, counted, never swept
        short = re.search(rb"archive id ([0-9a-f]{12})", out).group(1).decode()
        entry = sweeper.stat(short)
        assert sweeper.read(entry.id) == _expected_slow_output()  # re-hashed against its id
        assert sweeper.stats().uploads == 0


def test_a_sigkilled_writer_is_counted_then_reclaimed_after_its_lease(
        backend, tmp_path: Path) -> None:
    env, open_archive = backend
    lease = 3.0
    env = dict(env, CTXGATE_ARCHIVE__UPLOAD_LEASE_SECONDS=str(lease))
    proc = subprocess.Popen([sys.executable, "-m", "ctxgate", "run", "--", sys.executable,
                             "-c", SLOW_WRITER, "8"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    with open_archive(lease) as archive:
        deadline = time.monotonic() + 60
        while archive.stats().uploads == 0:  # the first 8 chunks were flushed
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        killed_at = time.monotonic()
        usage = archive.stats()
        assert usage.uploads == 1 and usage.upload_bytes >= 8 * 40_000  # counted
        if time.monotonic() - killed_at < lease / 2:
            assert archive.expire().uploads == 0  # its lease still runs: kept
        time.sleep(lease + 0.5)
        assert archive.expire().uploads == 1  # the next sweep after the lease reclaims it
        usage = archive.stats()
        assert (usage.uploads, usage.upload_bytes) == (0, 0)


def test_upload_bytes_count_against_the_disk_cap(store: ArchiveStore) -> None:
    a = Archive(store, ArchivePolicy(max_disk_bytes=150_000, tokenizer="estimate",
                                     upload_lease_seconds=3600))
    old = a.put(os.urandom(100_000))
    store.write_chunks("in-progress", 0, [os.urandom(80_000)])  # a writer mid-way
    assert a.stats().upload_bytes == 80_000
    result = a.expire()
    assert result.evicted == 1 and result.uploads == 0  # 100,000 + 80,000 > cap: evict LRU
    assert a.stats().entries == 0 and old.id not in [e.id for e in a.list()]


def test_a_writer_whose_upload_was_swept_fails_loudly(store: ArchiveStore) -> None:
    a = Archive(store, ArchivePolicy(chunk_bytes=1_024, tokenizer="estimate", redact=False,
                                     upload_lease_seconds=10))
    w = a.writer(EntryMeta(tool="t"))
    w.write(os.urandom(60_000))  # > 8 chunks of 1 KiB: flushed, the lease is taken
    assert store.upload_usage()[0] == 1
    assert store.sweep_uploads(older_than=time.time() + 3600) == 1  # a sweep takes it anyway
    with pytest.raises(UploadLost, match="swept before it committed"):
        w.heartbeat(now=time.time() + 100)
    with pytest.raises(UploadLost):
        w.finish()
    assert store.usage() == (0, 0)  # nothing unreadable was committed


def test_a_heartbeat_keeps_a_slow_writer_alive(store: ArchiveStore) -> None:
    a = Archive(store, ArchivePolicy(chunk_bytes=1_024, tokenizer="estimate", redact=False,
                                     upload_lease_seconds=10))
    w = a.writer(EntryMeta(tool="t"))
    data = os.urandom(60_000)
    w.write(data)
    now = time.time()
    w.heartbeat(now=now + 500)  # the lease is now at now + 500
    assert store.sweep_uploads(older_than=now + 400) == 0
    entry = w.finish()
    assert a.read(entry.id) == data


# -- interrupted runs ----------------------------------------------------------------------------

def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env.update(CTXGATE_HOME=str(home), CTXGATE_CONFIG=str(home.parent / "no.toml"))
    return env


def test_a_timed_out_run_is_stored_interrupted_and_truncated(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = subprocess.run([sys.executable, "-m", "ctxgate", "run", "--timeout", "1", "-c",
                           "yes | head -c 10000000; sleep 5"],
                          capture_output=True, env=_env(home), timeout=60)
    assert proc.returncode == 124
    out = proc.stdout.decode()
    assert "[interrupted: stopped after the 1 s timeout (SIGTERM)]" in out
    short = re.search(r"archive id ([0-9a-f]{12})", out).group(1)
    with Archive.open(home) as archive:
        entry = archive.stat(short)
    assert entry.interrupted == "timeout after 1 s (SIGTERM)"
    assert entry.truncated and entry.raw_bytes == 10_000_000 and entry.exit_code == 124
    stat = subprocess.run([sys.executable, "-m", "ctxgate", "archive", "stat", short],
                          capture_output=True, env=_env(home), timeout=60, text=True)
    assert "truncated:   yes" in stat.stdout
    assert "interrupted: timeout after 1 s (SIGTERM)" in stat.stdout


def test_a_command_killed_from_outside_is_stored_interrupted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = subprocess.run([sys.executable, "-m", "ctxgate", "run", "-c",
                           "echo partial; kill -KILL $$; echo never"],
                          capture_output=True, env=_env(home), timeout=60)
    assert proc.returncode == 137 and proc.stdout == b"partial\n"
    assert b"ctxgate: interrupted: the command was killed by SIGKILL" in proc.stderr
    with Archive.open(home) as archive:
        (entry,) = archive.list()
    assert entry.interrupted == "the command was killed by SIGKILL" and entry.truncated


def test_sigterm_to_ctxgate_run_is_forwarded_and_recorded(tmp_path: Path) -> None:
    home = tmp_path / "home"
    started = tmp_path / "started"
    proc = subprocess.Popen([sys.executable, "-m", "ctxgate", "run", "-c",
                             f"echo up; touch {started}; sleep 30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(home))
    deadline = time.monotonic() + 30
    while not started.exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM and out == b"up\n"
    with Archive.open(home) as archive:
        (entry,) = archive.list()
    assert entry.interrupted == "SIGTERM forwarded to the command" and entry.truncated


def test_a_complete_run_is_not_interrupted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    # 2,292 bytes: more than min_tokens in bytes, so stored (smaller ones pass through)
    proc = subprocess.run([sys.executable, "-m", "ctxgate", "run", "-c", "seq 1 600"],
                          capture_output=True, env=_env(home), timeout=60)
    assert proc.returncode == 0
    with Archive.open(home) as archive:
        (entry,) = archive.list()
    assert entry.interrupted is None and not entry.truncated


# -- background flushes (the firewall's pipeline) -------------------------------------------------

def test_background_flushes_store_every_byte_in_order(store: ArchiveStore) -> None:
    a = Archive(store, ArchivePolicy(chunk_bytes=1_024, tokenizer="estimate", redact=False))
    w = a.writer(EntryMeta(tool="t"), background_flush=True)
    data = b"".join(b"line %d\n" % i for i in range(40_000))  # ~350 chunks: ~40 flushes
    for i in range(0, len(data), 7_777):
        w.write(data[i:i + 7_777])
    entry = w.finish()
    assert a.read(entry.id) == data
    assert store.upload_usage()[0] == 0  # the upload became the entry


class _FailingStore:
    """A store whose second batch of chunks fails (a disk that fills up mid-stream)."""

    def __init__(self, inner: ArchiveStore) -> None:
        self._inner, self.calls = inner, 0

    def write_chunks(self, blob, first_seq, chunks):
        self.calls += 1
        if self.calls == 2:
            raise OSError(28, "No space left on device")
        return self._inner.write_chunks(blob, first_seq, chunks)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def test_a_background_flush_that_fails_is_raised_not_lost(tmp_path: Path) -> None:
    from ctxgate.archive.stores.sqlite import SQLiteStore

    inner = SQLiteStore(tmp_path / "archive.db")
    store = _FailingStore(inner)
    a = Archive(store, ArchivePolicy(chunk_bytes=1_024, tokenizer="estimate", redact=False))  # type: ignore[arg-type]
    w = a.writer(EntryMeta(tool="t"), background_flush=True)
    with pytest.raises(OSError, match="No space left"):
        for _ in range(200):  # 200 KiB: many batches; the failure surfaces on a later call
            w.write(os.urandom(1_024))
        w.finish()
    assert store.calls == 2  # nothing was flushed after the failing batch
    assert inner.usage() == (0, 0)  # and nothing was committed
