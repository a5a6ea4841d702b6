"""Audit log and verdict cache of the gate, in their own SQLite file ``<home>/audit.db``.

Two tables in ``<home>/audit.db``, through the gate's own connection (WAL, busy timeout). The
file is apart from the archive's ``archive.db`` so a corrupt, locked or foreign archive never
touches the gate (decisions recorded in ``archive.db`` by earlier versions stay there, unread):

- ``gate_audit``: one row per decision — time, tool, sha256 of the canonical full arguments
  (never the arguments themselves), what was omitted, the probability per question, the model
  id, the latency, the verdict, the reason, and whether it was cached, decided by the fast
  path, or approved by a person;
- ``gate_cache``: verdicts keyed on (gate settings, user request, tool, canonical arguments),
  each with an expiry. Only verdicts the model's answers decided are stored; an error or a
  timeout never is.

The audit log never turns into a denial: :func:`open_audit_log` returns ``None`` (and says why
once on stderr) when the file cannot be opened, and the gate then decides with an in-process
cache; a failure to record or to use the cache later is logged once and the verdict stands.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any

from ctxgate.errors import StoreUnavailable
from ctxgate.gate.argviews import Omission
from ctxgate.gate.verdict import Verdict

__all__ = ["AUDIT_DB_NAME", "AuditLog", "AuditRow", "MemoryVerdictCache", "open_audit_log",
           "parse_since"]

AUDIT_DB_NAME = "audit.db"
BUSY_TIMEOUT_MS = 5_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS gate_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    tool TEXT NOT NULL,
    args_sha256 TEXT NOT NULL,
    omitted TEXT NOT NULL,
    probabilities TEXT NOT NULL,
    model_id TEXT NOT NULL,
    latency_ms REAL NOT NULL,
    verdict TEXT NOT NULL,
    code TEXT NOT NULL,
    reason TEXT NOT NULL,
    cached INTEGER NOT NULL,
    fast_path INTEGER NOT NULL,
    approved INTEGER NOT NULL,
    escalated INTEGER NOT NULL,
    effect TEXT
);
CREATE INDEX IF NOT EXISTS gate_audit_ts ON gate_audit (ts);
CREATE TABLE IF NOT EXISTS gate_cache (
    key TEXT PRIMARY KEY,
    expires REAL NOT NULL,
    verdict TEXT NOT NULL
);
"""


@dataclass(frozen=True, kw_only=True)
class AuditRow:
    """One recorded decision."""

    id: int
    ts: float
    """Unix time, seconds."""
    tool: str
    args_sha256: str
    omitted: list[dict[str, Any]]
    probabilities: dict[str, float]
    model_id: str
    latency_ms: float
    verdict: str
    code: str
    reason: str
    cached: bool
    fast_path: bool
    approved: bool
    escalated: bool
    effect: dict[str, Any] | None = None
    """The effect class, its source and evidence (``Effect.to_dict``), when one was known."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types."""
        return dict(self.__dict__)


class AuditLog:
    """The ``gate_audit`` and ``gate_cache`` tables of one SQLite file.

    Args:
        path: the database file (``<home>/audit.db``); its directory is created (0700).

    Raises:
        StoreUnavailable: the file cannot be opened or is not a SQLite database.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._conn = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000,
                                         check_same_thread=False, isolation_level=None)
            self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._conn.execute("PRAGMA journal_mode = WAL")
            # WAL + NORMAL: a crash of this process loses nothing committed; only a power
            # loss may drop the last decisions. Keeps recording ~0.1 ms instead of an fsync.
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.executescript(_SCHEMA)
            columns = {r[1] for r in self._conn.execute("PRAGMA table_info(gate_audit)")}
            if "effect" not in columns:  # a log written before effects existed
                self._conn.execute("ALTER TABLE gate_audit ADD COLUMN effect TEXT")
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailable(
                f"cannot open the gate audit log in {self.path}: {exc}; check the file and "
                "CTXGATE_HOME, or set [gate] audit = false"
            ) from exc

    @classmethod
    def in_home(cls, home: str | Path) -> AuditLog:
        """The audit log of a ctxgate home directory."""
        return cls(Path(home) / AUDIT_DB_NAME)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------------ audit

    def record(self, v: Verdict) -> int:
        """Append one decision; returns its row id."""
        omitted = json.dumps([{"argument": o.argument, "chars": o.chars} for o in v.omitted],
                             ensure_ascii=False)
        probs = json.dumps(dict(v.probabilities), sort_keys=True)
        effect = getattr(v, "effect", None)
        effect_json = json.dumps(effect.to_dict(), ensure_ascii=False, sort_keys=True) \
            if effect is not None else None
        with self._tx() as conn:
            cur = conn.execute(
                "INSERT INTO gate_audit (ts, tool, args_sha256, omitted, probabilities, model_id,"
                " latency_ms, verdict, code, reason, cached, fast_path, approved, escalated,"
                " effect) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (v.timestamp, v.tool, v.args_sha256, omitted, probs, v.model_id, v.latency_ms,
                 v.outcome, v.code, v.reason, int(v.cached), int(v.fast_path), int(v.approved),
                 int(v.escalated), effect_json))
            return int(cur.lastrowid or 0)

    def query(self, *, tool: str | None = None, verdict: str | None = None,
              since: float | None = None, limit: int = 50, row_id: int | None = None,
              args_prefix: str | None = None) -> list[AuditRow]:
        """Recorded decisions, newest first.

        Args:
            tool: only this tool.
            verdict: only ``allow``, ``deny`` or ``ask``.
            since: only decisions at or after this Unix time (seconds).
            limit: at most this many rows.
            row_id: only the row with this id.
            args_prefix: only rows whose ``args_sha256`` starts with this (hex).
        """
        where: list[str] = []
        params: list[Any] = []
        if row_id is not None:
            where.append("id = ?")
            params.append(int(row_id))
        if args_prefix:
            where.append("substr(args_sha256, 1, ?) = ?")
            params.extend([len(args_prefix), args_prefix.lower()])
        if tool:
            where.append("tool = ?")
            params.append(tool)
        if verdict:
            where.append("verdict = ?")
            params.append(verdict)
        if since is not None:
            where.append("ts >= ?")
            params.append(since)
        sql = ("SELECT id, ts, tool, args_sha256, omitted, probabilities, model_id, latency_ms,"
               " verdict, code, reason, cached, fast_path, approved, escalated, effect"
               " FROM gate_audit")
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY ts DESC, id DESC LIMIT ?"
        params.append(int(limit))
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        return [AuditRow(id=r[0], ts=r[1], tool=r[2], args_sha256=r[3],
                         omitted=json.loads(r[4]), probabilities=json.loads(r[5]), model_id=r[6],
                         latency_ms=r[7], verdict=r[8], code=r[9], reason=r[10],
                         cached=bool(r[11]), fast_path=bool(r[12]), approved=bool(r[13]),
                         escalated=bool(r[14]), effect=json.loads(r[15]) if r[15] else None)
                for r in rows]

    # ------------------------------------------------------------------ cache

    def cache_get(self, key: str, now: float) -> Verdict | None:
        """The cached verdict for ``key`` if it has not expired."""
        with self._lock:
            row = self._conn.execute(
                "SELECT verdict FROM gate_cache WHERE key = ? AND expires > ?", (key, now)
            ).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        data["omitted"] = tuple(Omission(**o) for o in data.get("omitted", ()))
        if data.get("effect") is not None:
            from ctxgate.gate.effects.model import Effect

            data["effect"] = Effect.from_dict(data["effect"])
        return Verdict(**data)

    def cache_put(self, key: str, verdict: Verdict, expires: float, *, now: float) -> None:
        """Store a verdict until ``expires`` (Unix seconds); rows expired at ``now`` are dropped."""
        data = verdict.to_dict(include_state=False)
        for drop in ("user_request", "user_request_source", "latency_ms", "timestamp"):
            data.pop(drop, None)
        with self._tx() as conn:
            conn.execute("DELETE FROM gate_cache WHERE expires <= ?", (now,))
            conn.execute("INSERT OR REPLACE INTO gate_cache (key, expires, verdict) VALUES (?, ?, ?)",
                         (key, expires, json.dumps(data, ensure_ascii=False)))


def open_audit_log(home: str | Path, *, warn: Any = None) -> AuditLog | None:
    """The audit log of ``home``, or ``None`` when it cannot be opened (read-only or full
    disk, a garbled or locked file): the gate still decides, it only records nothing. The
    failure is reported once, by ``warn(message)`` (default: one line on stderr)."""
    try:
        return AuditLog.in_home(home)
    except StoreUnavailable as exc:
        message = (f"ctxgate: gate decisions are not recorded: {exc}\n")
        if warn is not None:
            warn(message)
        else:
            import sys

            try:
                sys.stderr.write(message)
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
        return None


class MemoryVerdictCache:
    """The verdict cache of a gate without an audit log: in this process only."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, Verdict]] = {}

    def cache_get(self, key: str, now: float) -> Verdict | None:
        """The cached verdict for ``key`` if it has not expired."""
        hit = self._entries.get(key)
        return hit[1] if hit is not None and hit[0] > now else None

    def cache_put(self, key: str, verdict: Verdict, expires: float, *, now: float) -> None:
        """Store a verdict until ``expires`` (Unix seconds); expired entries are dropped."""
        if len(self._entries) > 1_000:
            self._entries = {k: v for k, v in self._entries.items() if v[0] > now}
        self._entries[key] = (expires, verdict)


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_since(text: str, now: float) -> float:
    """``"30m"``, ``"2h"``, ``"7d"`` (ago) or an ISO-8601 time → Unix seconds.

    Raises:
        ValueError: neither form; the message shows both.
    """
    t = text.strip()
    if t and t[-1] in _UNITS and t[:-1].replace(".", "", 1).isdigit():
        return now - float(t[:-1]) * _UNITS[t[-1]]
    from datetime import datetime

    try:
        dt = datetime.fromisoformat(t)
    except ValueError:
        raise ValueError(
            f"--since {text!r} is neither a duration (30m, 2h, 7d) nor an ISO time "
            "(2026-11-29T12:00)") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()
