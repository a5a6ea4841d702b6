"""Decision-model backends behind the :class:`~ctxgate.gate.backends.base.DecisionModel` seam.

Names resolve lazily; a backend module is imported only when it is used.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    "Answer": "ctxgate.gate.backends.base",
    "Capabilities": "ctxgate.gate.backends.base",
    "DecisionModel": "ctxgate.gate.backends.base",
    "FunctionDecisionModel": "ctxgate.gate.backends.function",
    "Question": "ctxgate.gate.backends.base",
    "check_capabilities": "ctxgate.gate.backends.base",
    "strictest": "ctxgate.gate.backends.base",
    "validate_answers": "ctxgate.gate.backends.base",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxgate.gate.backends' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
