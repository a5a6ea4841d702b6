"""Decision-model backends behind the :class:`~ctxgate.gate.backends.base.DecisionModel` seam.

Names resolve lazily; a backend module is imported only when it is used.
"""

from __future__ import annotations

from ctxgate._lazy import lazy_exports

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

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
