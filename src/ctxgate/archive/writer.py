"""Ingest: redact, chunk, compress and commit one entry from bytes, a stream or incremental writes.

The redactor is the archive's own, or the caller's (``redacted_by``: the firewall redacts once
and feeds the same redacted bytes to the archive and to its digest). Every text field of the
metadata (the command line included) is redacted with the same patterns.

Memory stays constant: the redactor holds a 32 KiB tail, the chunker one 1 MiB chunk, and
compressed chunks are flushed to the store every :data:`FLUSH_CHUNKS` chunks under a fresh blob
key. With ``background_flush`` (the firewall's pipeline, where the caller's thread is the
bottleneck) a flush runs on a worker thread while the caller goes on (SQLite and redis release
the GIL while they write); at most one flush is in flight, and its failure is raised by the
next write, heartbeat or the commit, so nothing is lost silently. The record (and the last chunks) is committed in one transaction when the stream ends, at
which point the content's sha256 is known and becomes the id.

While the upload is in progress it holds a lease in the store: every flush refreshes it, and
:meth:`EntryWriter.heartbeat` (called on each write, and by whoever drives a slow stream, e.g.
the run loop every half second) refreshes it every
:func:`~ctxgate.archive.retention.heartbeat_seconds`. A writer that stops refreshing (killed,
crashed) loses its chunks to the next sweep after ``upload_lease_seconds``; if this writer's
upload was swept, the next flush, heartbeat or commit raises
:class:`~ctxgate.errors.UploadLost` rather than storing an unreadable entry.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ctxgate.archive.chunks import Chunker
from ctxgate.archive.entry import Entry, EntryMeta
from ctxgate.archive.stores.base import EntryRecord
from ctxgate.errors import UsageError
from ctxgate.tokens import TokenCount

if TYPE_CHECKING:
    from ctxgate.archive.archive import Archive
    from ctxgate.archive.redact import Redactor

__all__ = ["FLUSH_CHUNKS", "EntryWriter"]

FLUSH_CHUNKS = 8
"""Compressed chunks buffered before a write transaction, chunks (at most ~8 MiB)."""


class EntryWriter:
    """Incremental writer returned by :meth:`Archive.writer`; ``finish()`` returns the Entry.

    Leaving the ``with`` block without ``finish()`` finalizes anyway, and an exception inside
    the block still stores what was written (then propagates).
    """

    def __init__(self, archive: Archive, meta: EntryMeta, *,
                 redacted_by: Redactor | None = None, background_flush: bool = False) -> None:
        self._archive = archive
        self._meta = meta
        policy = archive.policy
        self._external = redacted_by
        """The caller's redactor: it redacts before writing (its count is recorded)."""
        self._redactor = None if redacted_by is not None else archive._new_redactor()
        self._chunker = Chunker(level=policy.compression_level, chunk_bytes=policy.chunk_bytes,
                                head_bytes=policy.exact_tokens_max_bytes)
        self._blob = secrets.token_hex(16)
        self._pending: list[bytes] = []
        self._flushed = 0
        self._background = background_flush
        self._flushing: Any = None
        """The flush in flight on the worker thread (a future), if any."""
        self._flush_pool: Any = None
        self._started = time.time()
        from ctxgate.archive.retention import heartbeat_seconds

        self._beat_every = heartbeat_seconds(policy)
        self._beat_at = 0.0
        self.entry: Entry | None = None
        """The stored entry once finished."""

    def __enter__(self) -> EntryWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.entry is None:
            self.finish(truncated=True if exc_type is not None else None)

    @property
    def bytes_written(self) -> int:
        """Bytes accepted so far (before redaction), bytes."""
        return self._accepted

    _accepted = 0

    def write(self, data: bytes) -> int:
        """Add bytes (any chunk sizes); returns ``len(data)``."""
        if self.entry is not None:
            raise ValueError("archive writer already finished")
        if not data:
            return 0
        data = bytes(data)
        n = len(data)
        self._accepted += n
        if self._redactor is not None:
            data = self._redactor.feed(data)
        self._add(self._chunker.feed(data))
        self.heartbeat()
        return n

    def heartbeat(self, now: float | None = None) -> None:
        """Refresh the upload's lease when it is due (cheap otherwise: one clock read).

        Raises:
            UploadLost: the upload was swept meanwhile (this entry can no longer be stored).
        """
        self._settle(wait=False)
        if self.entry is not None or self._flushed == 0:
            return  # nothing stored yet: nothing a sweep could take
        now = time.time() if now is None else now
        if now - self._beat_at < self._beat_every:
            return
        if not self._archive.store.heartbeat(self._blob, now):
            from ctxgate.archive.stores.base import upload_lost

            raise upload_lost(self._blob)
        self._beat_at = now

    def _add(self, chunks: list[bytes]) -> None:
        if not chunks:
            return
        self._pending.extend(chunks)
        if len(self._pending) >= FLUSH_CHUNKS:
            batch, first = self._pending, self._flushed
            if self._background:
                self._settle(wait=True)  # one flush in flight at most (bounded memory)
                if self._flush_pool is None:
                    from concurrent.futures import ThreadPoolExecutor

                    self._flush_pool = ThreadPoolExecutor(1, thread_name_prefix="ctxgate-store")
                self._flushing = self._flush_pool.submit(
                    self._archive.store.write_chunks, self._blob, first, batch)
            else:
                self._archive.store.write_chunks(self._blob, first, batch)
            self._beat_at = time.time()
            self._flushed += len(batch)
            self._pending = []

    def _settle(self, *, wait: bool) -> None:
        """Collect the flush in flight: raise its error (``wait``: block until it is done;
        otherwise only a finished one is collected)."""
        future = self._flushing
        if future is None or (not wait and not future.done()):
            return
        self._flushing = None
        future.result()

    def _stop_flushing(self) -> None:
        if self._flush_pool is not None:
            self._flush_pool.shutdown(wait=True)
            self._flush_pool = None

    def abort(self) -> None:
        """Drop everything written (nothing is stored)."""
        with contextlib.suppress(Exception):  # the upload is dropped anyway
            self._settle(wait=True)
        self._stop_flushing()
        self._archive.store.discard(self._blob)
        self._pending = []

    def finish(
        self,
        *,
        exit_code: int | None = None,
        reason: str | None = None,
        truncated: bool | None = None,
        extra: dict[str, Any] | None = None,
        tokens: TokenCount | None = None,
        interrupted: str | None = None,
    ) -> Entry:
        """Commit the entry; arguments override the metadata given at the start.

        ``tokens`` is a count the caller made while streaming (the archive then does not
        tokenize the content itself). ``interrupted`` says why the producing command was
        stopped before it ended (the entry is then also ``truncated``).
        """
        if self.entry is not None:
            return self.entry
        if self._redactor is not None:
            self._add(self._chunker.feed(self._redactor.flush()))
        tail = self._chunker.close()
        self._pending.extend(tail)
        try:
            self._settle(wait=True)
        finally:
            self._stop_flushing()
        chunker = self._chunker
        meta = self._meta
        tokens = tokens or meta.tokens or self._archive._count_tokens(chunker)
        now = time.time()
        redactor = self._external or self._redactor
        info: dict[str, Any] = {
            "tool": meta.tool, "command": meta.command, "source": meta.source,
            "session_id": meta.session_id,
            "exit_code": meta.exit_code if exit_code is None else exit_code,
            "reason": meta.reason if reason is None else reason,
            "truncated": bool(truncated) or interrupted is not None,
            "redactions": redactor.count if redactor is not None else 0,
            "redaction": redactor is not None,
            "extra": {**meta.extra, **(extra or {})},
            "tokens": asdict(tokens) if tokens is not None else None,
        }
        if interrupted is not None:
            info["interrupted"] = interrupted
        if redactor is not None:  # the command line and every other text field too
            from ctxgate.archive.redact import redact_value

            for key in ("tool", "command", "source", "session_id", "reason", "extra"):
                info[key], n = redact_value(info[key], redactor.patterns)
                info["redactions"] += n
        try:
            json.dumps(info)
        except (TypeError, ValueError) as exc:
            self.abort()
            raise UsageError(
                f"archive metadata is not JSON-serializable ({exc}); pass plain str/int/float/"
                "bool/list/dict values in EntryMeta.extra"
            ) from exc
        record = EntryRecord(
            id=chunker.digest, blob=self._blob, raw_bytes=chunker.size,
            stored_bytes=chunker.stored, lines=chunker.lines, created_at=now,
            last_access=now, expires_at=now + self._archive.policy.ttl_seconds,
            pinned=False, chunk_index=chunker.index().pack(), meta=info,
        )
        stored = self._archive.store.commit(record, self._pending, self._flushed)
        self._pending = []
        self.entry = self._archive._entry(stored)
        self._archive._after_store()
        return self.entry
