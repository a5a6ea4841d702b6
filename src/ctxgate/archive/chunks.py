"""Streaming ingest into zstd chunks with a line-offset index, and random access back.

Stored bytes are cut into chunks of :data:`CHUNK_BYTES` raw bytes (the last one shorter), each
compressed as its own zstd frame with a content checksum. The entry keeps a small packed index,
one row per chunk: ``(raw length, compressed length, newline count)``. From the running sums a
byte offset or a line number maps to one chunk, so a slice decompresses only the chunks it
touches, and memory stays constant whatever the entry size (one chunk in flight).

Integrity: every chunk frame carries zstd's checksum (verified on decompression), and reading
a whole entry re-hashes it against its sha256 id. Either failure raises
:class:`~ctxgate.errors.IntegrityError` and returns nothing.
"""

from __future__ import annotations

import bisect
import hashlib
from array import array
from collections import OrderedDict, deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ctxgate.archive.bytequeue import ByteQueue
from ctxgate.errors import IntegrityError

if TYPE_CHECKING:
    from ctxgate.archive.stores.base import ArchiveStore, EntryRecord

__all__ = ["CHUNK_BYTES", "ChunkIndex", "ChunkReader", "Chunker", "verify_bytes"]

CHUNK_BYTES = 1 << 20
"""Raw bytes per chunk (1 MiB)."""

_CACHE_CHUNKS = 4
"""Decompressed chunks a reader keeps, chunks (bounded memory: 4 MiB)."""


class ChunkIndex:
    """Per-chunk raw lengths, compressed lengths and newline counts, with running sums."""

    def __init__(self, rows: list[tuple[int, int, int]]) -> None:
        self.rows = rows
        self.starts = [0]
        self.newlines_before = [0]
        for raw, _comp, nl in rows:
            self.starts.append(self.starts[-1] + raw)
            self.newlines_before.append(self.newlines_before[-1] + nl)

    @classmethod
    def unpack(cls, packed: bytes) -> ChunkIndex:
        values = array("Q")
        values.frombytes(packed)
        return cls([(values[i], values[i + 1], values[i + 2]) for i in range(0, len(values), 3)])

    def pack(self) -> bytes:
        values = array("Q")
        for row in self.rows:
            values.extend(row)
        return values.tobytes()

    @property
    def size(self) -> int:
        """Total raw bytes."""
        return self.starts[-1]

    @property
    def newlines(self) -> int:
        """Total newline bytes."""
        return self.newlines_before[-1]

    def chunk_at(self, offset: int) -> int:
        """Index of the chunk holding byte ``offset`` (0 <= offset < size)."""
        return bisect.bisect_right(self.starts, offset) - 1

    def chunk_of_newline(self, k: int) -> int:
        """Index of the chunk holding the ``k``-th newline (1-based)."""
        return bisect.bisect_left(self.newlines_before, k) - 1


_IN_FLIGHT = 4
"""Chunks compressed ahead on the worker thread before :meth:`Chunker.feed` waits."""


class Chunker:
    """Cuts a byte stream into compressed chunks; hashes and counts lines on the way."""

    def __init__(self, level: int = 1, chunk_bytes: int = CHUNK_BYTES,
                 head_bytes: int = 65_536) -> None:
        import zstandard

        self._compressor = zstandard.ZstdCompressor(level=level, write_checksum=True)
        self._chunk_bytes = chunk_bytes
        self._head_bytes = head_bytes
        self._queue = ByteQueue()
        self._sha = hashlib.sha256()
        self.rows: list[tuple[int, int, int]] = []
        self.size = 0
        self.stored = 0
        self.last_byte = b""
        self.head = bytearray()
        """The first ``head_bytes`` of the stream, kept for token counting."""
        self._pool: Any = None
        self._pending: deque[tuple[Any, int, int]] = deque()

    def _emit(self, piece: bytes, out: list[bytes]) -> None:
        """Compress ``piece`` on the worker thread; move finished chunks, in order, to ``out``.

        zstd and sha256 both release the GIL, so hashing and compressing chunk N overlap
        redacting and scanning chunk N+1 on the other core. The one worker takes chunks in
        order, so the hash is the stream's. At most ``_IN_FLIGHT`` chunks wait (bounded
        memory).
        """
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="ctxgate-zstd")
        future = self._pool.submit(self._hash_and_compress, piece)
        self._pending.append((future, len(piece), piece.count(b"\n")))
        while len(self._pending) > _IN_FLIGHT:
            self._finish_one(out)

    def _hash_and_compress(self, piece: bytes) -> bytes:
        self._sha.update(piece)
        return self._compressor.compress(piece)

    def _finish_one(self, out: list[bytes]) -> None:
        future, raw, nl = self._pending.popleft()
        comp = future.result()
        self.rows.append((raw, len(comp), nl))
        self.stored += len(comp)
        out.append(comp)

    def feed(self, data: bytes) -> list[bytes]:
        """Add bytes; returns the compressed chunks completed by them (possibly none)."""
        if not data:
            return []
        self.size += len(data)
        self.last_byte = data[-1:]
        if len(self.head) < self._head_bytes:
            self.head += data[: self._head_bytes - len(self.head)]
        out: list[bytes] = []
        queue = self._queue
        queue.append(data)
        while queue.held >= self._chunk_bytes:
            self._emit(queue.take(self._chunk_bytes), out)
        return out

    def close(self) -> list[bytes]:
        """Flush the last partial chunk and every chunk still being compressed."""
        out: list[bytes] = []
        if self._queue.held:
            piece = self._queue.take(self._queue.held)
            if self._pool is None:  # the whole stream is this one piece: no worker needed
                comp = self._hash_and_compress(piece)
                self.rows.append((len(piece), len(comp), piece.count(b"\n")))
                self.stored += len(comp)
                out.append(comp)
            else:
                self._emit(piece, out)
        while self._pending:
            self._finish_one(out)
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
        return out

    @property
    def digest(self) -> str:
        """sha256 hex of everything fed (read it after :meth:`close`: chunks are hashed as
        they are compressed)."""
        return self._sha.hexdigest()

    @property
    def lines(self) -> int:
        """Line count: newlines, plus one for a final line without newline."""
        newlines = sum(r[2] for r in self.rows)
        return newlines + (1 if self.size and self.last_byte != b"\n" else 0)

    def index(self) -> ChunkIndex:
        return ChunkIndex(list(self.rows))


class ChunkReader:
    """Random access to one entry's bytes: offsets, line starts, chunk iteration."""

    def __init__(self, store: ArchiveStore, record: EntryRecord) -> None:
        self.store = store
        self.record = record
        self.index = ChunkIndex.unpack(record.chunk_index)
        self._cache: OrderedDict[int, bytes] = OrderedDict()
        self._decompressor = None

    @property
    def size(self) -> int:
        return self.index.size

    def chunk(self, i: int) -> bytes:
        """Decompressed chunk ``i`` (checksum verified)."""
        cached = self._cache.get(i)
        if cached is not None:
            self._cache.move_to_end(i)
            return cached
        import zstandard

        comp = self.store.read_chunk(self.record.blob, i)
        if comp is None:
            raise IntegrityError(
                f"archive entry {self.record.id[:12]} is missing chunk {i}; the store is "
                "damaged: delete the entry with 'ctxgate archive rm'"
            )
        if self._decompressor is None:
            self._decompressor = zstandard.ZstdDecompressor()
        try:
            data = self._decompressor.decompress(comp)
        except zstandard.ZstdError as exc:
            raise IntegrityError(
                f"archive entry {self.record.id[:12]} chunk {i} is corrupt ({exc}); delete it "
                "with 'ctxgate archive rm'"
            ) from exc
        if len(data) != self.index.rows[i][0]:
            raise IntegrityError(
                f"archive entry {self.record.id[:12]} chunk {i} has {len(data)} bytes, "
                f"index says {self.index.rows[i][0]}"
            )
        if len(self.index.rows) == 1:
            verify_bytes(self.record.id, data)  # a one-chunk entry: check the full id, cheaply
        self._cache[i] = data
        if len(self._cache) > _CACHE_CHUNKS:
            self._cache.popitem(last=False)
        return data

    def iter_range(self, start: int, end: int) -> Iterator[tuple[int, bytes]]:
        """Yield ``(offset, bytes)`` pieces covering ``[start, end)``, one chunk at a time."""
        end = min(end, self.size)
        if start >= end:
            return
        i = self.index.chunk_at(start)
        while i < len(self.index.rows) and self.index.starts[i] < end:
            data = self.chunk(i)
            c0 = self.index.starts[i]
            lo = max(start, c0) - c0
            hi = min(end, c0 + len(data)) - c0
            yield c0 + lo, data[lo:hi] if (lo or hi != len(data)) else data
            i += 1

    def read(self, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes ``[offset, offset+length)`` (clamped to the entry)."""
        offset = max(0, offset)
        end = self.size if length is None else min(self.size, offset + max(0, length))
        return b"".join(piece for _, piece in self.iter_range(offset, end))

    def verify(self) -> None:
        """Re-hash the whole entry against its id (streaming)."""
        sha = hashlib.sha256()
        for _, piece in self.iter_range(0, self.size):
            sha.update(piece)
        if sha.hexdigest() != self.record.id:
            raise IntegrityError(
                f"archive entry {self.record.id[:12]} does not hash to its id "
                f"(got {sha.hexdigest()[:12]}); nothing returned; delete it with "
                "'ctxgate archive rm'"
            )

    def newline_pos(self, k: int) -> int:
        """Byte offset of the ``k``-th newline (1-based; k <= total newlines)."""
        i = self.index.chunk_of_newline(k)
        data = self.chunk(i)
        need = k - self.index.newlines_before[i]
        pos = -1
        for _ in range(need):
            pos = data.index(b"\n", pos + 1)
        return self.index.starts[i] + pos

    def line_start(self, n: int) -> int:
        """Byte offset where 1-based line ``n`` starts (``size`` past the last line)."""
        if n <= 1:
            return 0
        if n - 1 > self.index.newlines:
            return self.size
        return self.newline_pos(n - 1) + 1

    def line_end(self, n: int) -> int:
        """Byte offset just past line ``n``, including its newline."""
        return self.line_start(n + 1)

    def line_of(self, offset: int) -> int:
        """1-based number of the line containing byte ``offset``."""
        if offset <= 0:
            return 1
        offset = min(offset, self.size)
        i = self.index.chunk_at(offset) if offset < self.size else len(self.index.rows) - 1
        c0 = self.index.starts[i]
        data = self.chunk(i)
        return self.index.newlines_before[i] + data.count(b"\n", 0, offset - c0) + 1


def verify_bytes(entry_id: str, data: bytes) -> None:
    """Check that ``data`` hashes to ``entry_id``.

    Raises:
        IntegrityError: it does not (nothing should be returned to the caller).
    """
    got = hashlib.sha256(data).hexdigest()
    if got != entry_id:
        raise IntegrityError(
            f"archive entry {entry_id[:12]} does not hash to its id (got {got[:12]}); "
            "nothing returned; delete it with 'ctxgate archive rm'"
        )
