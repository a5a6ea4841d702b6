"""SQLiteStore: the embedded default ArchiveStore (stdlib sqlite3, one file at ``<home>/archive.db``).

Several processes (parallel tool calls, several MCP servers) share one file. What keeps that
safe: WAL journaling (readers never block the writer), a long ``busy_timeout``, and write
transactions opened with ``BEGIN IMMEDIATE`` so two writers never deadlock upgrading a read
lock (the classic source of ``database is locked``). An entry's record and its last chunks go
in one transaction. Tables are prefixed ``archive_`` because other parts of ctxgate (the gate's
audit log) keep their own tables in the same file through their own connections.

The directory is created 0700 and the database file 0600; SQLite gives its ``-wal``/``-shm``
files the database file's mode. Every ``sqlite3`` error is translated at one boundary
(:func:`_mapped`) into :class:`~ctxgate.errors.StoreUnavailable`, with the cause and the fix
(:func:`~ctxgate.archive.failure.diagnose_sqlite`).

Opening waits at most :data:`OPEN_BUSY_TIMEOUT_MS` for a lock (WAL readers never wait for
writers, so only a foreign exclusive lock makes it wait): a locked file must not hold up the
command a run is about to start. Writes then wait up to :data:`BUSY_TIMEOUT_MS`.

Uploads hold a lease: ``archive_uploads.started_at`` is the time the writer last stored chunks
or called :meth:`SQLiteStore.heartbeat` (the column keeps its first name so existing files need
no migration). A sweep removes only uploads whose lease lapsed, and an upload whose rows were
swept can neither add chunks nor commit (:class:`~ctxgate.errors.UploadLost`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from ctxgate.archive.stores.base import EntryRecord, Tombstone
from ctxgate.archive.stores.base import upload_lost as _lost
from ctxgate.errors import StoreUnavailable

__all__ = ["DB_NAME", "SQLiteStore"]

DB_NAME = "archive.db"
"""File name of the database inside the ctxgate home directory."""

BUSY_TIMEOUT_MS = 60_000
"""How long a connection waits for another writer, milliseconds."""

OPEN_BUSY_TIMEOUT_MS = 3_000
"""How long opening waits for a lock (only a foreign exclusive lock or WAL recovery holds a
WAL reader), milliseconds; past it the file counts as locked and the run goes on without it."""

_TOMBSTONE_KEEP_SECONDS = 7 * 24 * 3600
"""How long tombstones (why an id is gone) are kept, seconds."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS archive_entries (
    id TEXT PRIMARY KEY,
    blob TEXT NOT NULL,
    raw_bytes INTEGER NOT NULL,
    stored_bytes INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    created_at REAL NOT NULL,
    last_access REAL NOT NULL,
    expires_at REAL,
    pinned INTEGER NOT NULL DEFAULT 0,
    chunk_index BLOB NOT NULL,
    meta TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS archive_entries_access ON archive_entries(last_access);
CREATE INDEX IF NOT EXISTS archive_entries_expiry ON archive_entries(expires_at);
CREATE TABLE IF NOT EXISTS archive_chunks (
    blob TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (blob, seq)
);
CREATE TABLE IF NOT EXISTS archive_uploads (
    blob TEXT PRIMARY KEY,
    started_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS archive_tombstones (
    id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at REAL NOT NULL
);
"""

_COLUMNS = ("id, blob, raw_bytes, stored_bytes, lines, created_at, last_access, expires_at, "
            "pinned, chunk_index, meta")


@contextlib.contextmanager
def _mapped(path: Path) -> Iterator[None]:
    """Translate sqlite3 errors into StoreUnavailable, naming the file, the cause and the fix."""
    try:
        yield
    except sqlite3.Error as exc:
        raise _unavailable(exc, path, f"archive database {path} failed: {exc}") from exc


def _unavailable(exc: BaseException, path: Path, message: str) -> StoreUnavailable:
    from ctxgate.archive.failure import diagnose_sqlite

    failure = diagnose_sqlite(exc, path)
    return StoreUnavailable(f"{message}; {failure.why}: {failure.fix}",
                            why=failure.why, fix=failure.fix)


def _row_to_record(row: tuple) -> EntryRecord:
    return EntryRecord(
        id=row[0], blob=row[1], raw_bytes=row[2], stored_bytes=row[3], lines=row[4],
        created_at=row[5], last_access=row[6], expires_at=row[7], pinned=bool(row[8]),
        chunk_index=bytes(row[9]), meta=json.loads(row[10]),
    )


def _private_dir(path: Path) -> None:
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)


class SQLiteStore:
    """ArchiveStore over one SQLite file; one connection per instance, guarded by a lock."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        with _mapped(self.path):
            try:
                _private_dir(self.path.parent)
                if not self.path.exists():
                    fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
                    os.close(fd)
            except OSError as exc:
                raise _unavailable(exc, self.path,
                                   f"cannot create archive database {self.path}: {exc}") from exc
            self._conn = sqlite3.connect(
                str(self.path), timeout=OPEN_BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                check_same_thread=False,
            )
            try:
                self._conn.execute(f"PRAGMA busy_timeout={OPEN_BUSY_TIMEOUT_MS}")
                self._ensure_schema()
                self._conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            except BaseException:
                self._conn.close()
                raise

    def text_index(self):
        """The FTS5 index of stored text (:mod:`.sqlite_fts`), or None without FTS5."""
        if not hasattr(self, "_text_index"):
            from ctxgate.archive.stores.sqlite_fts import TextIndex

            self._text_index = TextIndex.open(self)
        return self._text_index

    @classmethod
    def in_home(cls, home: Path) -> SQLiteStore:
        """The store at ``<home>/archive.db``."""
        return cls(Path(home) / DB_NAME)

    def _ensure_schema(self) -> None:
        conn = self._conn
        have = {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'archive_%'"
        )}
        complete = {"archive_entries", "archive_chunks", "archive_uploads",
                    "archive_tombstones"} <= have
        if not complete:  # creating the file: wait for peers creating it at the same time
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            # Before the first table: let freed pages go back to the OS on purge.
            if not have:
                conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        if complete:
            return
        with self._write():
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE: take the write lock up front)."""
        with self._lock, _mapped(self.path):
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                self._rollback()  # SQLite may have rolled back already (SQLITE_FULL)
                raise

    def _rollback(self) -> None:
        """Roll back if a transaction is still open, never masking the error that got here."""
        if self._conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock, _mapped(self.path):
            yield self._conn

    # -- writes ------------------------------------------------------------------------

    def write_chunks(self, blob: str, first_seq: int, chunks: Sequence[bytes]) -> None:
        with self._write() as conn:
            now = time.time()
            if first_seq > 0:  # a later batch: the upload must still hold its lease
                if conn.execute("UPDATE archive_uploads SET started_at=? WHERE blob=?",
                                (now, blob)).rowcount == 0:
                    raise _lost(blob)
            else:
                conn.execute("INSERT INTO archive_uploads(blob, started_at) VALUES (?, ?) "
                             "ON CONFLICT(blob) DO UPDATE SET started_at=excluded.started_at",
                             (blob, now))
            conn.executemany(
                "INSERT OR REPLACE INTO archive_chunks(blob, seq, data) VALUES (?, ?, ?)",
                [(blob, first_seq + i, data) for i, data in enumerate(chunks)],
            )

    def commit(
        self, record: EntryRecord, chunks: Sequence[bytes] = (), first_seq: int = 0
    ) -> EntryRecord:
        with self._write() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM archive_entries WHERE id=?",
                               (record.id,)).fetchone()
            if row is not None:
                existing = _row_to_record(row)
                conn.execute("DELETE FROM archive_chunks WHERE blob=?", (record.blob,))
                conn.execute("DELETE FROM archive_uploads WHERE blob=?", (record.blob,))
                expires = None if existing.pinned else record.expires_at
                conn.execute("UPDATE archive_entries SET last_access=?, expires_at=? WHERE id=?",
                             (record.last_access, expires, record.id))
                return replace(existing, last_access=record.last_access, expires_at=expires)
            if first_seq > 0 and conn.execute(
                    "SELECT COUNT(*) FROM archive_chunks WHERE blob=?",
                    (record.blob,)).fetchone()[0] != first_seq:
                raise _lost(record.blob)  # swept: committing would store an unreadable entry
            conn.executemany(
                "INSERT OR REPLACE INTO archive_chunks(blob, seq, data) VALUES (?, ?, ?)",
                [(record.blob, first_seq + i, data) for i, data in enumerate(chunks)],
            )
            conn.execute("DELETE FROM archive_uploads WHERE blob=?", (record.blob,))
            conn.execute("DELETE FROM archive_tombstones WHERE id=?", (record.id,))
            conn.execute(
                f"INSERT INTO archive_entries({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (record.id, record.blob, record.raw_bytes, record.stored_bytes, record.lines,
                 record.created_at, record.last_access, record.expires_at, int(record.pinned),
                 record.chunk_index, json.dumps(record.meta, sort_keys=True)),
            )
            return record

    def discard(self, blob: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM archive_chunks WHERE blob=?", (blob,))
            conn.execute("DELETE FROM archive_uploads WHERE blob=?", (blob,))

    def touch(self, entry_id: str, last_access: float, expires_at: float | None) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE archive_entries SET last_access=?, "
                "expires_at=CASE WHEN pinned THEN NULL ELSE ? END WHERE id=?",
                (last_access, expires_at, entry_id),
            )

    def set_pinned(self, entry_id: str, pinned: bool, expires_at: float | None) -> bool:
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE archive_entries SET pinned=?, expires_at=? WHERE id=?",
                (int(pinned), None if pinned else expires_at, entry_id),
            )
            return cur.rowcount > 0

    def delete(self, entry_ids: Sequence[str], reason: str, at: float) -> int:
        removed = 0
        with self._write() as conn:
            for entry_id in entry_ids:
                row = conn.execute("SELECT blob FROM archive_entries WHERE id=?",
                                   (entry_id,)).fetchone()
                if row is None:
                    continue
                removed += 1
                conn.execute("DELETE FROM archive_chunks WHERE blob=?", (row[0],))
                conn.execute("DELETE FROM archive_entries WHERE id=?", (entry_id,))
                conn.execute(
                    "INSERT OR REPLACE INTO archive_tombstones(id, reason, at) VALUES (?, ?, ?)",
                    (entry_id, reason, at),
                )
            conn.execute("DELETE FROM archive_tombstones WHERE at < ?",
                         (at - _TOMBSTONE_KEEP_SECONDS,))
        if removed:
            with self._lock, _mapped(self.path):
                self._conn.execute("PRAGMA incremental_vacuum")
        return removed

    def heartbeat(self, blob: str, now: float) -> bool:
        with self._write() as conn:
            return conn.execute("UPDATE archive_uploads SET started_at=? WHERE blob=?",
                                (now, blob)).rowcount > 0

    def upload_usage(self) -> tuple[int, int]:
        with self._read() as conn:
            count, total = conn.execute(
                "SELECT COUNT(DISTINCT u.blob), COALESCE(SUM(length(c.data)), 0) "
                "FROM archive_uploads u LEFT JOIN archive_chunks c ON c.blob = u.blob"
            ).fetchone()
        return int(count), int(total)

    def sweep_uploads(self, older_than: float) -> int:
        with self._read() as conn:  # the common case needs no write transaction
            if conn.execute("SELECT 1 FROM archive_uploads WHERE started_at < ? LIMIT 1",
                            (older_than,)).fetchone() is None:
                return 0
        with self._write() as conn:
            blobs = [r[0] for r in conn.execute(
                "SELECT blob FROM archive_uploads WHERE started_at < ?", (older_than,))]
            for blob in blobs:
                conn.execute("DELETE FROM archive_chunks WHERE blob=?", (blob,))
                conn.execute("DELETE FROM archive_uploads WHERE blob=?", (blob,))
            return len(blobs)

    # -- reads -------------------------------------------------------------------------

    def get(self, entry_id: str) -> EntryRecord | None:
        with self._read() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM archive_entries WHERE id=?",
                               (entry_id,)).fetchone()
        return None if row is None else _row_to_record(row)

    def match_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        # A range scan on the primary key; ids are lowercase hex so "g" sorts after every digit.
        with self._read() as conn:
            return [r[0] for r in conn.execute(
                "SELECT id FROM archive_entries WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                (prefix, prefix + "g", limit),
            )]

    def read_chunk(self, blob: str, seq: int) -> bytes | None:
        with self._read() as conn:
            row = conn.execute("SELECT data FROM archive_chunks WHERE blob=? AND seq=?",
                               (blob, seq)).fetchone()
        return None if row is None else bytes(row[0])

    def list(self, limit: int | None = None) -> list[EntryRecord]:
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM archive_entries ORDER BY last_access DESC, id LIMIT ?",
                (-1 if limit is None else limit,),
            ).fetchall()
        return [_row_to_record(r) for r in rows]

    def expired_ids(self, now: float) -> list[str]:
        with self._read() as conn:
            return [r[0] for r in conn.execute(
                "SELECT id FROM archive_entries WHERE pinned=0 AND expires_at IS NOT NULL "
                "AND expires_at < ? ORDER BY id", (now,))]

    def lru_ids(self) -> list[tuple[str, int]]:
        with self._read() as conn:
            return [(r[0], r[1]) for r in conn.execute(
                "SELECT id, stored_bytes FROM archive_entries WHERE pinned=0 "
                "ORDER BY last_access, id")]

    def usage(self) -> tuple[int, int]:
        with self._read() as conn:
            count, total = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(stored_bytes), 0) FROM archive_entries"
            ).fetchone()
        return int(count), int(total)

    def tombstone(self, prefix: str) -> Tombstone | None:
        with self._read() as conn:
            row = conn.execute(
                "SELECT id, reason, at FROM archive_tombstones WHERE id >= ? AND id < ? "
                "ORDER BY at DESC LIMIT 1", (prefix, prefix + "g"),
            ).fetchone()
        return None if row is None else Tombstone(id=row[0], reason=row[1], at=row[2])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
