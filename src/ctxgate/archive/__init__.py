"""The archive: a lossless, content-addressed store of tool outputs with bounded views.

Names resolve lazily so that ``import ctxgate.archive`` costs nothing on the per-call path.
"""

from __future__ import annotations

import importlib
from typing import Any

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxgate.archive' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
