"""Audit log and verdict cache in a real SQLite file (<home>/audit.db, apart from the archive)."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from ctxgate.errors import DecisionModelError, StoreUnavailable
from ctxgate.gate import AuditLog, GatePolicy, ToolCall, ToolGate
from ctxgate.gate.audit import parse_since
from ctxgate.gate.backends.function import FunctionDecisionModel
from ctxgate.gate.gate import args_sha256

from .conftest import scripted


def run(gate, call, request="delete /tmp/scratch.txt"):
    return asyncio.run(gate.decide(call, user_request=request))


def test_every_decision_is_recorded(tmp_path):
    audit = AuditLog.in_home(tmp_path)
    gate = ToolGate(scripted(0.9, 0.1), audit=audit, clock=lambda: 1_700_000_000.0)
    secret = {"path": "/tmp/scratch.txt", "token": "s3cr3t-value"}
    run(gate, ToolCall(tool="rm", arguments=secret))
    run(gate, ToolCall(tool="bash", arguments={"command": "ls"}))
    run(gate, ToolCall(tool="write", arguments={"content": "x" * 60_000}), request="write it")
    rows = audit.query()
    assert [r.tool for r in rows] == ["write", "bash", "rm"]
    write, bash, rm = rows
    assert rm.verdict == "deny" and rm.code == "destructive_unrequested"
    assert rm.args_sha256 == args_sha256(secret)
    assert rm.probabilities == {"destructive": 0.9, "requested": 0.1}
    assert rm.model_id == "scripted" and rm.latency_ms >= 0 and rm.ts == 1_700_000_000.0
    assert bash.fast_path and bash.verdict == "allow" and bash.probabilities == {}
    assert write.omitted and write.omitted[0]["argument"] == "/content"
    assert not any(r.cached for r in rows)
    assert not (tmp_path / "archive.db").exists()  # its own file, apart from the archive
    raw = (tmp_path / "audit.db").read_bytes()
    assert b"s3cr3t-value" not in raw  # only the hash of the arguments is stored
    assert [r.tool for r in audit.query(tool="rm")] == ["rm"]
    assert [r.tool for r in audit.query(verdict="allow")] == ["bash"]
    assert audit.query(since=1_700_000_001.0) == []
    assert len(audit.query(limit=1)) == 1
    audit.close()


def test_connection_uses_wal_and_a_busy_timeout(tmp_path):
    audit = AuditLog(tmp_path / "a" / "audit.db")
    mode = audit._conn.execute("PRAGMA journal_mode").fetchone()[0]
    busy = audit._conn.execute("PRAGMA busy_timeout").fetchone()[0]
    assert (mode, busy) == ("wal", 5000)
    other = sqlite3.connect(tmp_path / "a" / "audit.db")  # foreign tables coexist
    other.execute("CREATE TABLE IF NOT EXISTS entries (id TEXT)")
    other.commit()
    assert audit.query() == []


def test_the_cache_is_shared_through_the_file_and_expires(tmp_path):
    now = [1_000.0]
    model = scripted(0.9, 0.1)
    policy = GatePolicy(cache_ttl_seconds=30)
    call = ToolCall(tool="rm", arguments={"path": "/x"})
    first = ToolGate(model, policy, audit=AuditLog.in_home(tmp_path), clock=lambda: now[0])
    assert not run(first, call).cached
    # a second process: another gate, another connection, same file
    second = ToolGate(model, policy, audit=AuditLog.in_home(tmp_path), clock=lambda: now[0])
    hit = run(second, call)
    assert hit.cached and hit.outcome == "deny" and hit.probabilities["destructive"] == 0.9
    assert len(model.calls) == 1
    assert AuditLog.in_home(tmp_path).query(limit=1)[0].cached
    # other settings, other key: a changed threshold is never answered from the cache
    third = ToolGate(model, GatePolicy(cache_ttl_seconds=30, destructive_threshold=0.95),
                     audit=AuditLog.in_home(tmp_path), clock=lambda: now[0])
    assert not run(third, call).cached
    now[0] += 31
    assert not run(second, call).cached


def test_errors_and_timeouts_are_never_cached(tmp_path):
    calls = []

    async def flaky(state, questions):
        calls.append(1)
        if len(calls) == 1:
            raise DecisionModelError("HTTP 503")
        if len(calls) == 2:
            await asyncio.sleep(10)
        return {"destructive": 0.1, "requested": 0.9}

    gate = ToolGate(FunctionDecisionModel(fn=flaky), GatePolicy(timeout_seconds=0.05),
                    audit=AuditLog.in_home(tmp_path))
    call = ToolCall(tool="rm", arguments={"path": "/x"})
    assert run(gate, call).code == "backend_error"
    assert run(gate, call).code == "timeout"
    v = run(gate, call)
    assert v.allowed and not v.cached and len(calls) == 3


def test_a_broken_database_is_a_clear_error(tmp_path):
    bad = tmp_path / "archive.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreUnavailable, match="audit = false"):
        AuditLog(bad)


def test_parse_since():
    assert parse_since("30m", 10_000.0) == 10_000.0 - 1_800
    assert parse_since("2h", 10_000.0) == 10_000.0 - 7_200
    assert parse_since("1970-01-01T01:00:00", 0) == 3_600
    with pytest.raises(ValueError, match="duration"):
        parse_since("yesterday", 0)
