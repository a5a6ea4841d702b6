"""One-time approvals that outlive a process: ``ctxgate gate approve ID``.

A hook runs once per tool call, so an approval given on the command line must wait on disk
for the next ``hook pre`` of the same call. Each grant is (tool, sha256 of the canonical
arguments) with a count; :meth:`GrantStore.consume` takes one atomically (SQLite
``BEGIN IMMEDIATE``), so two processes can never both use a single approval. The file is
``<home>/gate-grants.db``; a home without it has no grants, and checking costs one ``stat``.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from ctxgate.errors import StoreUnavailable

__all__ = ["GRANTS_DB_NAME", "GrantStore"]

GRANTS_DB_NAME = "gate-grants.db"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS gate_grants (
    tool TEXT NOT NULL,
    args_sha256 TEXT NOT NULL,
    remaining INTEGER NOT NULL,
    granted REAL NOT NULL,
    PRIMARY KEY (tool, args_sha256)
);
"""


class GrantStore:
    """Persistent one-time approvals of exact calls.

    Args:
        path: the SQLite file (``<home>/gate-grants.db``), created on the first grant.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @classmethod
    def in_home(cls, home: str | Path) -> GrantStore:
        """The grants of a ctxgate home directory."""
        return cls(Path(home) / GRANTS_DB_NAME)

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            conn = sqlite3.connect(str(self.path), timeout=5.0, isolation_level=None)
            conn.executescript(_SCHEMA)
            return conn
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailable(
                f"cannot open the gate's approvals in {self.path}: {exc}; check the file and "
                "CTXGATE_HOME") from exc

    def grant(self, tool: str, args_sha256: str, count: int = 1) -> None:
        """Allow the call (``tool``, ``args_sha256``) ``count`` more times."""
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "INSERT INTO gate_grants (tool, args_sha256, remaining, granted) VALUES "
                "(?, ?, ?, ?) ON CONFLICT (tool, args_sha256) DO UPDATE SET "
                "remaining = remaining + excluded.remaining, granted = excluded.granted",
                (tool, args_sha256, int(count), time.time()))
            conn.execute("COMMIT")
        finally:
            conn.close()

    def consume(self, tool: str, args_sha256: str) -> bool:
        """Use one approval of this exact call; ``False`` when there is none."""
        if not self.path.exists():
            return False
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            row = conn.execute("SELECT remaining FROM gate_grants WHERE tool = ? AND "
                               "args_sha256 = ?", (tool, args_sha256)).fetchone()
            if row is None or row[0] <= 0:
                conn.execute("COMMIT")
                return False
            if row[0] <= 1:
                conn.execute("DELETE FROM gate_grants WHERE tool = ? AND args_sha256 = ?",
                             (tool, args_sha256))
            else:
                conn.execute("UPDATE gate_grants SET remaining = remaining - 1 WHERE tool = ? "
                             "AND args_sha256 = ?", (tool, args_sha256))
            conn.execute("COMMIT")
            return True
        finally:
            conn.close()

    def has(self, tool: str, args_sha256: str) -> bool:
        """Whether an unused approval of this exact call waits, without using it."""
        if not self.path.exists():
            return False
        conn = self._connect()
        try:
            row = conn.execute("SELECT remaining FROM gate_grants WHERE tool = ? AND "
                               "args_sha256 = ?", (tool, args_sha256)).fetchone()
            return row is not None and row[0] > 0
        finally:
            conn.close()

    def pending(self) -> list[tuple[str, str, int]]:
        """Every unused grant: (tool, args_sha256, remaining)."""
        if not self.path.exists():
            return []
        conn = self._connect()
        try:
            return [tuple(r) for r in conn.execute(
                "SELECT tool, args_sha256, remaining FROM gate_grants ORDER BY granted")]
        finally:
            conn.close()
