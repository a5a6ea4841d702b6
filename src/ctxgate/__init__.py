"""ctxgate: a context firewall, tool gate and record bound between an LLM agent and its tools.

The names below resolve lazily, so ``import ctxgate`` stays cheap for per-call hooks.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "Archive": "ctxgate.archive",
    "Config": "ctxgate.settings",
    "CtxgateError": "ctxgate.errors",
    "load_config": "ctxgate.settings",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxgate' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
