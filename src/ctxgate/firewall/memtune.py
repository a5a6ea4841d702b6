"""Keep glibc from faulting in fresh pages for every 1 MiB buffer of a large output.

Ingest allocates and frees several 1 MiB ``bytes`` per block (a pipe read, the redacted
piece, the scanner's block, its lower-cased copy, the chunk handed to zstd). With glibc's
defaults those come from ``mmap``, or from a heap top that is trimmed as soon as they are
freed, so every block pays page faults and page zeroing again. Measured on 32 MiB in 1 MiB
blocks: a copy (``bytes(bytearray(b))``) cost 129 ms per 100 MiB with the defaults and 14 ms
with the heap kept; the redactor alone went from 289 to 202 ms per 100 MiB.

:func:`keep_heap` raises ``M_MMAP_THRESHOLD`` to 16 MiB and ``M_TRIM_THRESHOLD`` to 64 MiB,
once per process, when an output has grown large (the pipeline calls it past 4 MiB): freed
blocks are then reused by the next block. The cost is that the process keeps up to 64 MiB of
freed heap (per glibc arena) instead of returning it to the system, and the settings override
any ``MALLOC_*_`` tuning for the rest of the process. That is right for the short-lived
``ctxgate run`` process and wrong inside someone else's long-lived one (the MCP server, a
framework adapter in the user's application), so it applies only after :func:`allow` — which
only the ``ctxgate run`` command calls. A no-op off glibc, or where ``ctypes`` cannot load the
C library.
"""

from __future__ import annotations

import sys

__all__ = ["allow", "keep_heap"]

_MMAP_THRESHOLD = 16 << 20
_TRIM_THRESHOLD = 64 << 20
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_done: list[bool] = []
_allowed: list[bool] = []


def allow() -> None:
    """Let :func:`keep_heap` tune this process (the ``ctxgate run`` command's own process)."""
    _allowed.append(True)


def keep_heap() -> bool:
    """Tune glibc's allocator as the module docstring says; True when it was applied."""
    if not _allowed:
        return False
    if _done:
        return _done[0]
    ok = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6")
            ok = bool(libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(
                libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
            )
        except (ImportError, OSError, AttributeError):
            ok = False
    _done.append(ok)
    return ok
