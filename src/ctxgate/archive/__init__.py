"""The archive: a lossless, content-addressed store of tool outputs with bounded views.

Names resolve lazily so that ``import ctxgate.archive`` costs nothing on the per-call path.
"""

from __future__ import annotations

from ctxgate._lazy import lazy_exports

_LAZY: dict[str, str] = {
    "Archive": "ctxgate.archive.archive",
    "ArchivePolicy": "ctxgate.archive.policy",
    "ArchiveStore": "ctxgate.archive.stores.base",
    "DEFAULT_ARCHIVE_POLICY": "ctxgate.archive.policy",
    "Entry": "ctxgate.archive.entry",
    "EntryMeta": "ctxgate.archive.entry",
    "EntryRecord": "ctxgate.archive.stores.base",
    "EntryWriter": "ctxgate.archive.writer",
    "MemoryStore": "ctxgate.archive.stores.memory",
    "PurgeResult": "ctxgate.archive.retention",
    "SQLiteStore": "ctxgate.archive.stores.sqlite",
    "Usage": "ctxgate.archive.retention",
    "View": "ctxgate.archive.entry",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
