"""The SQLite store's full-text index of archived outputs (FTS5, trigram tokenizer).

One FTS5 row per stored chunk (1 MiB of redacted text, decoded as UTF-8 with replacement),
in a contentless table (the text lives compressed in ``archive_chunks``; the index holds only
trigrams), and ``archive_fts_rows`` maps each row to ``(entry, chunk)``. The trigram
tokenizer matches any substring of three characters or more, case-insensitively, so the
index answers the same question as the scan it narrows (:mod:`ctxgate.archive.search`).

The index is built lazily, by :func:`~ctxgate.archive.search.search` itself, newest entries
first and at most ``index_budget_bytes`` per call: ingest never waits for it (an output
stored by ``ctxgate run`` costs nothing more), and entries not yet indexed are scanned.
A contentless FTS5 table cannot delete single rows on SQLite < 3.43, so rows of entries that
are gone are dropped from the map (the join ignores their FTS rows) and the whole index is
rebuilt once such orphans outnumber the live rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["TextIndex"]

_SCHEMA = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS archive_fts USING fts5(body, content='', "
    "tokenize='trigram')",
    "CREATE TABLE IF NOT EXISTS archive_fts_rows(rowid INTEGER PRIMARY KEY, entry TEXT NOT NULL, "
    "chunk INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS archive_fts_rows_entry ON archive_fts_rows(entry)",
    "CREATE TABLE IF NOT EXISTS archive_fts_meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
)


class TextIndex:
    """Full-text index over one :class:`~ctxgate.archive.stores.sqlite.SQLiteStore`."""

    kind = "sqlite fts5 (trigram)"
    min_term_chars = 3
    """Terms shorter than this cannot use a trigram index (they are matched by the scan)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        with store._write() as conn:
            for statement in _SCHEMA:
                conn.execute(statement)

    @classmethod
    def open(cls, store: Any) -> TextIndex | None:
        """The index, or None when this SQLite has no FTS5 trigram tokenizer."""
        import sqlite3

        try:
            return cls(store)
        except Exception as exc:  # noqa: BLE001 - no FTS5/trigram: search scans instead
            if isinstance(exc, sqlite3.Error) or "fts5" in str(exc) or "trigram" in str(exc):
                return None
            raise

    def indexed(self) -> set[str]:
        with self.store._read() as conn:
            return {r[0] for r in conn.execute("SELECT DISTINCT entry FROM archive_fts_rows")}

    def add(self, entry_id: str, rows: Iterable[tuple[int, str]]) -> None:
        """Index one entry's chunks (``(chunk number, text)``), in one transaction."""
        with self.store._write() as conn:
            conn.execute("DELETE FROM archive_fts_rows WHERE entry=?", (entry_id,))
            for chunk, text in rows:
                rowid = conn.execute("INSERT INTO archive_fts_rows(entry, chunk) VALUES (?, ?)",
                                     (entry_id, chunk)).lastrowid
                conn.execute("INSERT INTO archive_fts(rowid, body) VALUES (?, ?)", (rowid, text))
            if not rows:
                conn.execute("INSERT INTO archive_fts_rows(entry, chunk) VALUES (?, -1)",
                             (entry_id,))

    def candidates(self, terms: list[str]) -> dict[str, set[int]]:
        """``{entry: chunks}`` whose text holds every term (each >= 3 characters)."""
        query = " AND ".join('"' + t.replace('"', '""') + '"' for t in terms)
        out: dict[str, set[int]] = {}
        with self.store._read() as conn:
            for entry, chunk in conn.execute(
                    "SELECT r.entry, r.chunk FROM archive_fts f JOIN archive_fts_rows r "
                    "ON r.rowid = f.rowid WHERE archive_fts MATCH ?", (query,)):
                out.setdefault(entry, set()).add(chunk)
        return out

    def prune(self, live: set[str]) -> None:
        """Forget entries that are gone; rebuild when their orphaned rows outnumber the rest."""
        with self.store._write() as conn:
            known = {r[0] for r in conn.execute("SELECT DISTINCT entry FROM archive_fts_rows")}
            gone = known - live
            for entry in gone:
                conn.execute("DELETE FROM archive_fts_rows WHERE entry=?", (entry,))
            if gone:
                conn.execute("INSERT INTO archive_fts_meta(key, value) VALUES ('orphans', ?) "
                             "ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
                             (len(gone),))
            orphans = conn.execute(
                "SELECT value FROM archive_fts_meta WHERE key='orphans'").fetchone()
            kept = len(known) - len(gone)
            if orphans and orphans[0] > max(16, kept):
                conn.execute("INSERT INTO archive_fts(archive_fts) VALUES ('delete-all')")
                conn.execute("DELETE FROM archive_fts_rows")
                conn.execute("DELETE FROM archive_fts_meta WHERE key='orphans'")
