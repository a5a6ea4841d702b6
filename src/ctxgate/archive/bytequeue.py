"""A FIFO of bytes that hands out fixed-size pieces with one copy per byte.

Ingest cuts the stream into pieces whose boundaries do not match those of the writes: 1 MiB
zstd chunks (:mod:`ctxgate.archive.chunks`), newline-aligned scan blocks
(:mod:`ctxgate.firewall.scan`). Appending every write to a ``bytearray`` and slicing pieces
off it copies each byte two or three times; :class:`ByteQueue` holds the writes as they came
(``[object, start, end]`` spans, no copy) and joins a piece once, when it is taken. A piece
that is exactly one write is that write, not copied at all. Small writes (a slow producer,
a test feeding bytes one by one) gather in one buffer of the queue's own, so the number of
spans stays small.

Memory: what is held is what was appended and not taken, plus at most one partly taken write.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ByteQueue"]

_SMALL = 65_536
"""Writes shorter than this are copied into a gathering buffer, bytes."""


class ByteQueue:
    """Append bytes with :meth:`append`, take them back in order with :meth:`take`."""

    __slots__ = ("held", "spans")

    def __init__(self) -> None:
        self.spans: list[list[Any]] = []
        """``[bytes or bytearray, start, end]`` in stream order (read-only for callers)."""
        self.held = 0
        """Bytes appended and not yet taken."""

    def append(self, data: bytes) -> None:
        """Add ``data`` (held by reference when it is ``bytes``: never mutate it after)."""
        n = len(data)
        if not n:
            return
        spans = self.spans
        if n < _SMALL:
            last = spans[-1] if spans else None
            if last is not None and type(last[0]) is bytearray and last[1] == 0:
                last[0] += data  # never partly taken yet: it may still grow
                last[2] += n
            else:
                spans.append([bytearray(data), 0, n])
        else:
            spans.append([data if type(data) is bytes else bytes(data), 0, n])
        self.held += n

    def take(self, n: int) -> bytes:
        """The first ``n`` held bytes (all of them when fewer are held)."""
        n = min(n, self.held)
        spans = self.spans
        parts = []
        left = n
        while left:
            span = spans[0]
            obj, lo, hi = span
            if hi - lo <= left:
                parts.append((obj, lo, hi))
                del spans[0]
                left -= hi - lo
            else:
                parts.append((obj, lo, lo + left))
                span[1] = lo + left  # partly taken: it grows no more (see append)
                left = 0
        self.held -= n
        if len(parts) == 1:
            obj, lo, hi = parts[0]
            if type(obj) is bytes and lo == 0 and hi == len(obj):
                return obj
        return b"".join([memoryview(obj)[lo:hi] for obj, lo, hi in parts])

    def located(self) -> list[tuple[int, Any, int, int]]:
        """``(offset in the held bytes, object, start, end)`` of every span, in order."""
        out = []
        base = 0
        for obj, lo, hi in self.spans:
            out.append((base, obj, lo, hi))
            base += hi - lo
        return out
