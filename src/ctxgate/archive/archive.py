"""Archive: the facade over an ArchiveStore (put, read, stat, list, expand, retention).

Everything that does not depend on the backend lives here or in the modules it calls: ids
(:mod:`.ids`), redaction (:mod:`.redact`), chunking and compression (:mod:`.chunks`,
:mod:`.writer`), slicing (:mod:`.selectors`, :mod:`.pages`), retention (:mod:`.retention`).
The store only keeps chunks and records.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ctxgate.archive import ids
from ctxgate.archive.entry import Entry, EntryMeta, View
from ctxgate.archive.policy import DEFAULT_ARCHIVE_POLICY, ArchivePolicy
from ctxgate.errors import ConfigError
from ctxgate.tokens import TokenCount

if TYPE_CHECKING:
    from ctxgate.archive.chunks import Chunker, ChunkReader
    from ctxgate.archive.redact import Redactor
    from ctxgate.archive.retention import PurgeResult, Usage
    from ctxgate.archive.stores.base import ArchiveStore, EntryRecord
    from ctxgate.archive.writer import EntryWriter

__all__ = ["Archive"]

_LONG_RUN = re.compile(rb"\S{256,}")

_READ_BYTES = 1 << 20
"""Bytes read from a stream per call, bytes."""


class Archive:
    """Lossless store of tool outputs with bounded views; safe across processes (SQLite).

    Example::

        archive = Archive.open(home)
        entry = archive.put(b"...", EntryMeta(tool="shell", command="cargo test"))
        print(archive.expand(entry.short_id, lines="1:50").text)
    """

    def __init__(self, store: ArchiveStore | None = None,
                 policy: ArchivePolicy = DEFAULT_ARCHIVE_POLICY) -> None:
        if store is None:
            from ctxgate.archive.stores.memory import MemoryStore

            store = MemoryStore()
        self.store = store
        self.policy = policy
        self._patterns = None  # compiled on the first store: reading never needs them
        if policy.redact and policy.extra_redact_patterns:
            self._compiled_patterns()  # report bad configured patterns right away

    @classmethod
    def open(cls, home: Path, policy: ArchivePolicy = DEFAULT_ARCHIVE_POLICY) -> Archive:
        """The archive at ``<home>/archive.db`` (created 0600 in a 0700 directory), or the
        in-memory or shared Redis store that ``policy.backend`` names."""
        if policy.backend == "memory":
            return cls(policy=policy)
        if policy.backend == "redis":
            try:
                import redis  # noqa: F401

                from ctxgate.archive.stores.redis import RedisStore
            except ImportError as exc:
                raise ConfigError(
                    "archive.backend = 'redis' needs the redis package: "
                    "pip install 'ctxgate[redis]'; or use 'sqlite'"
                ) from exc
            return cls(RedisStore.from_url(policy.redis_url, prefix=policy.redis_prefix), policy)
        if policy.backend != "sqlite":
            raise ConfigError(f"archive.backend {policy.backend!r} is unknown; use 'sqlite', "
                              "'memory' or 'redis'")
        from ctxgate.archive.stores.sqlite import SQLiteStore

        return cls(SQLiteStore.in_home(Path(home)), policy)

    def close(self) -> None:
        """Release the store's connections."""
        self.store.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- storing ---------------------------------------------------------------------------

    def writer(self, meta: EntryMeta | None = None, *,
               redacted_by: Redactor | None = None,
               background_flush: bool = False) -> EntryWriter:
        """An incremental writer (context manager); ``finish()`` returns the Entry.

        ``redacted_by``: the caller redacts what it writes with this redactor (from
        :meth:`new_redactor`), so it can use the same redacted bytes elsewhere; its count is
        recorded and the writer does not redact again. ``background_flush``: store batches of
        chunks on a worker thread while the caller goes on (a store error is then raised by
        a later write, heartbeat or ``finish()``).

        Raises:
            StoreUnavailable: the archive could not be opened (see :func:`open_archive`).
        """
        from ctxgate.archive.failure import UnavailableStore
        from ctxgate.archive.writer import EntryWriter

        if isinstance(self.store, UnavailableStore):
            self.store.write_chunks()  # raises why now, before any output is chunked
        return EntryWriter(self, meta or EntryMeta(), redacted_by=redacted_by,
                           background_flush=background_flush)

    def put(self, data: bytes, meta: EntryMeta | None = None) -> Entry:
        """Store whole bytes; returns the entry (existing one, refreshed, for repeated bytes)."""
        w = self.writer(meta)
        w.write(data)
        return w.finish()

    def put_stream(self, stream: IO[bytes] | Iterable[bytes],
                   meta: EntryMeta | None = None) -> Entry:
        """Store a binary stream or an iterable of byte chunks in constant memory."""
        w = self.writer(meta)
        try:
            if hasattr(stream, "read"):
                read = stream.read1 if hasattr(stream, "read1") else stream.read  # type: ignore[union-attr]
                while True:
                    data = read(_READ_BYTES)
                    if not data:
                        break
                    w.write(data)
            else:
                for data in stream:
                    w.write(data)
        except BaseException:
            w.finish(truncated=True)
            raise
        return w.finish()

    def _compiled_patterns(self):
        if self._patterns is None:
            from ctxgate.archive.redact import compile_patterns

            self._patterns = compile_patterns(self.policy.extra_redact_patterns)
        return self._patterns

    def new_redactor(self) -> Redactor | None:
        """A streaming redactor with this archive's patterns; None when redaction is off."""
        return self._new_redactor()

    def _new_redactor(self) -> Redactor | None:
        if not self.policy.redact:
            return None
        from ctxgate.archive.redact import Redactor

        return Redactor(self._compiled_patterns())

    def _count_tokens(self, chunker: Chunker) -> TokenCount:
        from ctxgate.tokens import count_tokens, estimate_tokens

        if chunker.size <= self.policy.exact_tokens_max_bytes and chunker.size <= len(chunker.head):
            head = bytes(chunker.head)
            # The pure-Python BPE is quadratic on long runs without whitespace: estimate those.
            if not _LONG_RUN.search(head):
                return count_tokens(head.decode("utf-8", "replace"), self.policy.tokenizer)
        return estimate_tokens(chunker.size)

    def _after_store(self) -> None:
        """Retention after each store: drop expired entries, evict past the disk cap."""
        from ctxgate.archive.retention import enforce

        enforce(self.store, self.policy, time.time())

    # -- reading ---------------------------------------------------------------------------

    def _entry(self, record: EntryRecord) -> Entry:
        m: dict[str, Any] = record.meta
        tokens = m.get("tokens")
        return Entry(
            id=record.id, short_id=ids.short_id(record.id), raw_bytes=record.raw_bytes,
            lines=record.lines, tokens=TokenCount(**tokens) if tokens else None,
            created_at=record.created_at, last_access=record.last_access,
            expires_at=record.expires_at, tool=m.get("tool"), command=m.get("command"),
            source=m.get("source"), exit_code=m.get("exit_code"),
            redacted=bool(m.get("redactions")), redactions=int(m.get("redactions") or 0),
            truncated=bool(m.get("truncated")), interrupted=m.get("interrupted"),
            session_id=m.get("session_id"),
            reason=m.get("reason"), pinned=record.pinned, extra=dict(m.get("extra") or {}),
            stored_bytes=record.stored_bytes,
        )

    def _resolve(self, entry_id: str) -> EntryRecord:
        return ids.resolve(self.store, entry_id)

    def _touch(self, record: EntryRecord) -> EntryRecord:
        now = time.time()
        if now - record.last_access < self.policy.touch_interval_seconds:
            return record
        from dataclasses import replace

        expires = None if record.pinned else now + self.policy.ttl_seconds
        self.store.touch(record.id, now, expires)
        return replace(record, last_access=now, expires_at=expires)

    def _reader(self, record: EntryRecord) -> ChunkReader:
        from ctxgate.archive.chunks import ChunkReader

        return ChunkReader(self.store, record)

    def stat(self, entry_id: str) -> Entry:
        """Metadata of one entry (id or unique prefix of at least 4 hex chars).

        Raises:
            EntryNotFound: unknown, expired, purged or evicted (lists recent ids).
            AmbiguousId: the prefix matches several entries.
        """
        return self._entry(self._resolve(entry_id))

    def list(self, limit: int | None = None) -> list[Entry]:
        """Live entries, most recently used first."""
        now = time.time()
        return [self._entry(r) for r in self.store.list(limit=None)
                if r.expires_at is None or r.expires_at >= now][:limit]

    def read(self, entry_id: str, offset: int = 0, length: int | None = None) -> bytes:
        """Stored bytes ``[offset, offset+length)``; a whole read is re-hashed against the id.

        Raises:
            IntegrityError: a chunk is corrupt or the content does not hash to its id.
        """
        record = self._touch(self._resolve(entry_id))
        reader = self._reader(record)
        if offset <= 0 and (length is None or length >= record.raw_bytes):
            data = reader.read(0, None)
            from ctxgate.archive.chunks import verify_bytes

            verify_bytes(record.id, data)
            return data
        return reader.read(offset, length)

    def verify(self, entry_id: str) -> Entry:
        """Re-hash a whole entry (streaming) against its id; returns it when intact."""
        record = self._resolve(entry_id)
        self._reader(record).verify()
        return self._entry(record)

    def expand(
        self,
        entry_id: str,
        *,
        lines: str | tuple[int | None, int | None] | None = None,
        head: int | None = None,
        tail: int | None = None,
        grep: str | None = None,
        ignore_case: bool = False,
        context: int = 0,
        before: int = 0,
        after: int = 0,
        max_matches: int | None = None,
        byte_range: str | tuple[int, int] | None = None,
        json_pointer: str | None = None,
        keys: bool = False,
        max_tokens: int | None = None,
        fixed_strings: bool = False,
    ) -> View:
        """A bounded view of an entry; see :mod:`ctxgate.archive.selectors` for the selectors.

        Raises:
            UsageError: bad or conflicting selectors, invalid or unsafe regex, not JSON.
            EntryNotFound, AmbiguousId: as for :meth:`stat`.
        """
        from ctxgate.archive import pages, selectors
        from ctxgate.archive.views import Budget

        sel = selectors.parse(
            lines=lines, head=head, tail=tail, grep=grep, ignore_case=ignore_case,
            context=context, before=before, after=after, max_matches=max_matches,
            byte_range=byte_range, json_pointer=json_pointer, keys=keys,
            default_max_matches=self.policy.grep_max_matches, fixed_strings=fixed_strings,
        )
        record = self._touch(self._resolve(entry_id))
        budget = Budget(max_tokens or self.policy.expand_max_tokens, self.policy.tokenizer)
        return pages.render(self._reader(record), self._entry(record), sel, budget, self.policy)

    # -- retention -------------------------------------------------------------------------

    def pin(self, entry_id: str, pinned: bool = True) -> Entry:
        """Pin (never expires, never evicted) or unpin (expiry restarts now)."""
        record = self._resolve(entry_id)
        expires = None if pinned else time.time() + self.policy.ttl_seconds
        self.store.set_pinned(record.id, pinned, expires)
        return self.stat(record.id)

    def delete(self, entry_id: str) -> Entry:
        """Remove one entry; returns what it was."""
        record = self._resolve(entry_id)
        self.store.delete([record.id], "deleted", time.time())
        return self._entry(record)

    def purge(self, all: bool = False, older_than_seconds: float | None = None,
              entry_id: str | None = None) -> PurgeResult:
        """Remove every entry, entries created more than ``older_than_seconds`` ago, or one id
        (pinned entries are kept unless named or ``all``)."""
        from ctxgate.archive.retention import purge

        if entry_id is not None:
            entry_id = self._resolve(entry_id).id
        return purge(self.store, all=all, older_than_seconds=older_than_seconds,
                     entry_id=entry_id, now=time.time(),
                     lease_seconds=self.policy.upload_lease_seconds)

    def expire(self) -> PurgeResult:
        """Apply TTL and the disk cap now (also done after every store)."""
        from ctxgate.archive.retention import enforce

        return enforce(self.store, self.policy, time.time())

    def stats(self) -> Usage:
        """Totals: entries, raw and stored bytes, pinned, oldest and newest, and the uploads
        in progress or abandoned (their bytes count against the disk cap)."""
        from ctxgate.archive.retention import usage

        return usage(self.store, self.policy, time.time())
