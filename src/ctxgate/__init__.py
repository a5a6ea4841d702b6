"""ctxgate: a context firewall, tool gate and record bound between an LLM agent and its tools.

The names below resolve lazily, so ``import ctxgate`` stays cheap for per-call hooks.
"""

from __future__ import annotations

from ctxgate._lazy import lazy_exports

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "App": "ctxgate.app",
    "Archive": "ctxgate.archive",
    "Config": "ctxgate.settings",
    "CtxgateError": "ctxgate.errors",
    "load_config": "ctxgate.settings",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
