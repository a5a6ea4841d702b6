"""The tool gate: judge every tool call before it runs, and fail closed.

Names resolve lazily (``import ctxgate.gate`` loads nothing heavy); see ``docs/gate.md``.
"""

from __future__ import annotations

from ctxgate._lazy import lazy_exports

_LAZY: dict[str, str] = {
    "ApprovalRequest": "ctxgate.gate.call",
    "ArgumentView": "ctxgate.gate.argviews",
    "AuditLog": "ctxgate.gate.audit",
    "FunctionDecisionModel": "ctxgate.gate.backends.function",
    "GateCheck": "ctxgate.gate.policy",
    "GatePolicy": "ctxgate.gate.policy",
    "Omission": "ctxgate.gate.argviews",
    "ToolCall": "ctxgate.gate.call",
    "ToolGate": "ctxgate.gate.gate",
    "UserRequest": "ctxgate.gate.request",
    "Verdict": "ctxgate.gate.verdict",
    "extract_user_request": "ctxgate.gate.request",
    "fit_arguments": "ctxgate.gate.argviews",
    "gated": "ctxgate.gate.wrap",
    "is_read_only": "ctxgate.gate.fastpath",
    "prompt_approver": "ctxgate.gate.approval",
    "render_denial": "ctxgate.gate.verdict",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
