"""RedisStore: the shared ArchiveStore for several hosts ([redis] extra).

Every process and host that reaches the same Redis database sees the same archive: ids are
content hashes and blob keys random hex, never paths. Layout, under a key prefix
(default ``ctxgate:``):

- ``chunk:<blob>`` — a hash ``seq → compressed chunk``;
- ``entry:<id>`` — a hash with ``rec`` (the record as JSON, index omitted) and ``idx`` (the
  packed chunk index, bytes);
- ``ids`` — a sorted set of all ids with score 0, so a prefix is a ``ZRANGEBYLEX`` range;
- ``lru`` / ``expiry`` — sorted sets by last access and by expiry (unpinned entries only);
- ``usage`` — a hash of ``entries`` and ``stored_bytes``;
- ``uploads`` — a sorted set of uncommitted blobs by lease time (the writer's last store or
  heartbeat), and ``upbytes`` — a hash ``blob → compressed bytes stored so far``;
- ``tombs`` / ``tomb:<id>`` — the most recent tombstones by time, and each one's reason.

Commits and deletions run as Lua scripts, so each is one atomic step on the server however
many clients write at once (the multi-process contract the SQLite store meets with
transactions). Redis errors become :class:`~ctxgate.errors.StoreUnavailable` in one place.
Storing chunks, committing and sweeping check the upload's lease inside their script, so a
sweep never removes an upload a writer refreshed, and a swept upload cannot commit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

from ctxgate.archive.stores.base import EntryRecord, Tombstone, upload_lost
from ctxgate.errors import StoreUnavailable

__all__ = ["RedisStore"]

TOMBSTONES_KEPT = 1_000
"""Most recent tombstones kept."""

_COMMIT = """
local p, id, blob = ARGV[1], ARGV[2], ARGV[3]
local entry = p .. 'entry:' .. id
local last, expires = ARGV[6], ARGV[7]
if redis.call('EXISTS', entry) == 1 then
  redis.call('DEL', p .. 'chunk:' .. blob)
  redis.call('ZREM', p .. 'uploads', blob)
  redis.call('HDEL', p .. 'upbytes', blob)
  redis.call('HSET', entry, 'last_access', last)
  if redis.call('HGET', entry, 'pinned') ~= '1' then
    redis.call('HSET', entry, 'expires_at', expires)
    redis.call('ZADD', p .. 'lru', last, id)
    if expires == '' then redis.call('ZREM', p .. 'expiry', id)
    else redis.call('ZADD', p .. 'expiry', expires, id) end
  end
  return 1
end
local first = tonumber(ARGV[10])
if first > 0 and (redis.call('ZSCORE', p .. 'uploads', blob) == false
                  or redis.call('HLEN', p .. 'chunk:' .. blob) ~= first) then
  return -1
end
redis.call('HDEL', p .. 'upbytes', blob)
for i = 11, #ARGV do
  redis.call('HSET', p .. 'chunk:' .. blob, first + i - 11, ARGV[i])
end
redis.call('ZREM', p .. 'uploads', blob)
redis.call('HSET', entry, 'rec', ARGV[4], 'idx', ARGV[5], 'last_access', last,
           'expires_at', expires, 'pinned', ARGV[8])
redis.call('ZADD', p .. 'ids', 0, id)
if ARGV[8] ~= '1' then
  redis.call('ZADD', p .. 'lru', last, id)
  if expires ~= '' then redis.call('ZADD', p .. 'expiry', expires, id) end
end
redis.call('HINCRBY', p .. 'usage', 'entries', 1)
redis.call('HINCRBY', p .. 'usage', 'stored_bytes', ARGV[9])
return 0
"""

_DELETE = """
local p, reason, at, keep = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local removed = 0
for i = 5, #ARGV do
  local id = ARGV[i]
  local entry = p .. 'entry:' .. id
  local raw = redis.call('HGET', entry, 'rec')
  if raw then
    local rec = cjson.decode(raw)
    redis.call('DEL', entry, p .. 'chunk:' .. rec['blob'])
    redis.call('ZREM', p .. 'ids', id)
    redis.call('ZREM', p .. 'lru', id)
    redis.call('ZREM', p .. 'expiry', id)
    redis.call('HINCRBY', p .. 'usage', 'entries', -1)
    redis.call('HINCRBY', p .. 'usage', 'stored_bytes', -rec['stored_bytes'])
    redis.call('ZADD', p .. 'tombs', at, id)
    redis.call('SET', p .. 'tomb:' .. id, reason)
    removed = removed + 1
  end
end
local extra = redis.call('ZCARD', p .. 'tombs') - keep
if extra > 0 then
  local old = redis.call('ZRANGE', p .. 'tombs', 0, extra - 1)
  for _, id in ipairs(old) do redis.call('DEL', p .. 'tomb:' .. id) end
  redis.call('ZREMRANGEBYRANK', p .. 'tombs', 0, extra - 1)
end
return removed
"""

_WRITE_CHUNKS = """
local p, blob, now, first, size = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
if first > 0 and redis.call('ZSCORE', p .. 'uploads', blob) == false then return -1 end
redis.call('ZADD', p .. 'uploads', now, blob)
redis.call('HINCRBY', p .. 'upbytes', blob, size)
for i = 6, #ARGV do
  redis.call('HSET', p .. 'chunk:' .. blob, first + i - 6, ARGV[i])
end
return 0
"""

_HEARTBEAT = """
local p, blob, now = ARGV[1], ARGV[2], ARGV[3]
if redis.call('ZSCORE', p .. 'uploads', blob) == false then return 0 end
redis.call('ZADD', p .. 'uploads', now, blob)
return 1
"""

_SWEEP = """
local p, cutoff = ARGV[1], ARGV[2]
local stale = redis.call('ZRANGEBYSCORE', p .. 'uploads', '-inf', '(' .. cutoff)
for _, blob in ipairs(stale) do
  redis.call('DEL', p .. 'chunk:' .. blob)
  redis.call('HDEL', p .. 'upbytes', blob)
  redis.call('ZREM', p .. 'uploads', blob)
end
return #stale
"""

_PIN = """
local p, id, expires = ARGV[1], ARGV[2], ARGV[4]
local entry = p .. 'entry:' .. id
if redis.call('EXISTS', entry) == 0 then return 0 end
if ARGV[3] == '1' then
  redis.call('HSET', entry, 'pinned', '1', 'expires_at', '')
  redis.call('ZREM', p .. 'lru', id)
  redis.call('ZREM', p .. 'expiry', id)
else
  redis.call('HSET', entry, 'pinned', '0', 'expires_at', expires)
  redis.call('ZADD', p .. 'lru', redis.call('HGET', entry, 'last_access'), id)
  if expires ~= '' then redis.call('ZADD', p .. 'expiry', expires, id) end
end
return 1
"""

_TOUCH = """
local p, id, last, expires = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local entry = p .. 'entry:' .. id
if redis.call('EXISTS', entry) == 0 then return 0 end
redis.call('HSET', entry, 'last_access', last)
if redis.call('HGET', entry, 'pinned') ~= '1' then
  redis.call('HSET', entry, 'expires_at', expires)
  redis.call('ZADD', p .. 'lru', last, id)
  if expires == '' then redis.call('ZREM', p .. 'expiry', id)
  else redis.call('ZADD', p .. 'expiry', expires, id) end
end
return 1
"""

_VOLATILE = ("last_access", "expires_at", "pinned")
"""Record fields kept as separate hash fields (exact float text, updated in place)."""


class RedisStore:
    """An :class:`~ctxgate.archive.stores.base.ArchiveStore` in a Redis database."""

    def __init__(self, client: Any, *, prefix: str = "ctxgate:") -> None:
        self.client = client
        self.prefix = prefix
        with self._mapped("connect"):
            self.client.ping()
            self._commit = client.register_script(_COMMIT)
            self._delete = client.register_script(_DELETE)
            self._pin = client.register_script(_PIN)
            self._touch = client.register_script(_TOUCH)
            self._write_chunks = client.register_script(_WRITE_CHUNKS)
            self._heartbeat = client.register_script(_HEARTBEAT)
            self._sweep = client.register_script(_SWEEP)

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "ctxgate:") -> RedisStore:
        """Connect to ``url`` (``redis://host:port/db``).

        Raises:
            ImportError: the redis package is missing (``pip install 'ctxgate[redis]'``).
            StoreUnavailable: the server does not answer.
        """
        try:
            import redis
        except ImportError as exc:
            raise ImportError("the Redis archive needs the redis package: "
                              "pip install 'ctxgate[redis]'") from exc
        client = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)
        try:
            return cls(client, prefix=prefix)
        except StoreUnavailable as exc:
            where = f"archive.redis_url = {_safe_url(url)!r}"
            raise StoreUnavailable(f"{exc} ({where})", why=f"{exc.why} ({where})",
                                   fix=exc.fix) from exc

    @contextmanager
    def _mapped(self, what: str) -> Iterator[None]:
        import redis

        try:
            yield
        except redis.RedisError as exc:
            why = f"the Redis archive failed to {what} ({type(exc).__name__}: {exc})"
            fix = "check that the server answers (redis-cli ping), or use archive.backend = 'sqlite'"
            raise StoreUnavailable(f"{why}; {fix}", why=why, fix=fix) from exc

    def _k(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    # -- writing -------------------------------------------------------------------------

    def write_chunks(self, blob: str, first_seq: int, chunks: Sequence[bytes]) -> None:
        import time

        data = [bytes(c) for c in chunks]
        with self._mapped("store chunks"):
            status = self._write_chunks(args=[self.prefix, blob, repr(time.time()), first_seq,
                                              sum(map(len, data)), *data])
        if int(status) < 0:
            raise upload_lost(blob)

    def commit(self, record: EntryRecord, chunks: Sequence[bytes] = (),
               first_seq: int = 0) -> EntryRecord:
        rec = asdict(record)
        for key in ("chunk_index", *_VOLATILE):
            rec.pop(key)
        expires = "" if record.expires_at is None else repr(record.expires_at)
        with self._mapped("commit an entry"):
            existed = self._commit(args=[
                self.prefix, record.id, record.blob, json.dumps(rec), record.chunk_index,
                repr(record.last_access), expires, "1" if record.pinned else "0",
                record.stored_bytes, first_seq, *[bytes(c) for c in chunks]])
        if int(existed) < 0:
            raise upload_lost(record.blob)
        if existed:
            return self.get(record.id) or record
        return record

    def discard(self, blob: str) -> None:
        with self._mapped("discard an upload"):
            pipe = self.client.pipeline(transaction=True)
            pipe.delete(self._k("chunk", blob))
            pipe.zrem(self._k("uploads"), blob)
            pipe.hdel(self._k("upbytes"), blob)
            pipe.execute()

    # -- reading -------------------------------------------------------------------------

    def get(self, entry_id: str) -> EntryRecord | None:
        with self._mapped("read an entry"):
            values = self.client.hmget(self._k("entry", entry_id), ["rec", "idx", *_VOLATILE])
        return _record(values, with_index=True)

    def match_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        if not prefix or any(c in prefix for c in "[]()-+"):
            return []
        with self._mapped("look up an id prefix"):
            ids = self.client.zrangebylex(self._k("ids"), f"[{prefix}", f"[{prefix}\xff",
                                          start=0, num=limit)
        return [i.decode() for i in ids]

    def read_chunk(self, blob: str, seq: int) -> bytes | None:
        with self._mapped("read a chunk"):
            return self.client.hget(self._k("chunk", blob), str(seq))

    def list(self, limit: int | None = None) -> list[EntryRecord]:
        with self._mapped("list entries"):
            ids = [i.decode() for i in self.client.zrange(self._k("ids"), 0, -1)]
            pipe = self.client.pipeline(transaction=False)
            for i in ids:
                pipe.hmget(self._k("entry", i), ["rec", "idx", *_VOLATILE])
            rows = pipe.execute()
        records = [r for r in (_record(v, with_index=False) for v in rows) if r is not None]
        records.sort(key=lambda r: (-r.last_access, r.id))
        return records if limit is None else records[:limit]

    # -- updating ------------------------------------------------------------------------

    def touch(self, entry_id: str, last_access: float, expires_at: float | None) -> None:
        with self._mapped("refresh an entry"):
            self._touch(args=[self.prefix, entry_id, repr(last_access),
                              "" if expires_at is None else repr(expires_at)])

    def set_pinned(self, entry_id: str, pinned: bool, expires_at: float | None) -> bool:
        with self._mapped("pin an entry"):
            return bool(self._pin(args=[self.prefix, entry_id, "1" if pinned else "0",
                                        "" if expires_at is None else repr(expires_at)]))

    def delete(self, entry_ids: Sequence[str], reason: str, at: float) -> int:
        if not entry_ids:
            return 0
        with self._mapped("delete entries"):
            return int(self._delete(args=[self.prefix, reason, repr(at), TOMBSTONES_KEPT,
                                          *entry_ids]))

    # -- retention -----------------------------------------------------------------------

    def expired_ids(self, now: float) -> list[str]:
        with self._mapped("find expired entries"):
            ids = self.client.zrangebyscore(self._k("expiry"), "-inf", f"({now!r}")
        return sorted(i.decode() for i in ids)

    def lru_ids(self) -> list[tuple[str, int]]:
        with self._mapped("rank entries by access"):
            ids = [i.decode() for i in self.client.zrange(self._k("lru"), 0, -1)]
            pipe = self.client.pipeline(transaction=False)
            for i in ids:
                pipe.hget(self._k("entry", i), "rec")
            raws = pipe.execute()
        out = []
        for i, raw in zip(ids, raws, strict=True):
            if raw is not None:
                out.append((i, int(json.loads(raw)["stored_bytes"])))
        return out

    def usage(self) -> tuple[int, int]:
        with self._mapped("read usage"):
            entries, stored = self.client.hmget(self._k("usage"), ["entries", "stored_bytes"])
        return int(entries or 0), int(stored or 0)

    def tombstone(self, prefix: str) -> Tombstone | None:
        with self._mapped("read tombstones"):
            recent = self.client.zrevrange(self._k("tombs"), 0, -1, withscores=True)
            for raw_id, at in recent:
                tomb_id = raw_id.decode()
                if tomb_id.startswith(prefix):
                    reason = self.client.get(self._k("tomb", tomb_id))
                    return Tombstone(id=tomb_id, reason=(reason or b"deleted").decode(), at=at)
        return None

    def heartbeat(self, blob: str, now: float) -> bool:
        with self._mapped("refresh an upload's lease"):
            return bool(self._heartbeat(args=[self.prefix, blob, repr(now)]))

    def upload_usage(self) -> tuple[int, int]:
        with self._mapped("read upload usage"):
            count = self.client.zcard(self._k("uploads"))
            sizes = self.client.hvals(self._k("upbytes"))
        return int(count), sum(int(v) for v in sizes)

    def sweep_uploads(self, older_than: float) -> int:
        with self._mapped("sweep uploads"):
            if not self.client.zrangebyscore(self._k("uploads"), "-inf", f"({older_than!r}",
                                             start=0, num=1):
                return 0  # the common case: one read, no script
            return int(self._sweep(args=[self.prefix, repr(older_than)]))

    def close(self) -> None:
        """Release the connection pool."""
        try:
            self.client.close()
        except Exception:  # noqa: BLE001 - closing must not raise
            pass


def _record(values: Sequence[Any], *, with_index: bool) -> EntryRecord | None:
    raw, idx, last, expires, pinned = values
    if raw is None:
        return None
    rec = json.loads(raw)
    expires_text = (expires or b"").decode()
    return EntryRecord(
        id=rec["id"], blob=rec["blob"], raw_bytes=int(rec["raw_bytes"]),
        stored_bytes=int(rec["stored_bytes"]), lines=int(rec["lines"]),
        created_at=float(rec["created_at"]), last_access=float(last),
        expires_at=float(expires_text) if expires_text else None,
        pinned=pinned == b"1", chunk_index=(idx or b"") if with_index else b"",
        meta=rec.get("meta") or {},
    )


def _safe_url(url: str) -> str:
    """The URL without a password."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url
