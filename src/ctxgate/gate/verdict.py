"""Verdict: the gate's outcome for one call, its reason, and the full decision record.

``outcome`` is ``"allow"`` (run it), ``"deny"`` (do not run; the reason goes back to the model
as an error tool result) or ``"ask"`` (do not run yet; a person must approve this exact call).
``code`` names the rule that decided, for programs; ``reason`` is the sentence for the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxgate.gate.argviews import Omission
from ctxgate.gate.effects.model import Effect

__all__ = ["CODES", "Outcome", "Verdict", "render_denial"]

Outcome = Literal["allow", "deny", "ask"]

CODES = {
    "allowed": "the model's answers are below the deny rule",
    "fast_path": "a shell command proved read-only, allowed without a model call",
    "approved": "a person approved this exact call",
    "read_only_effect": "a rule knows the tool only reads, allowed without a model call",
    "ask": "looks destructive and only possibly requested: a person decides",
    "destructive_unrequested": "looks destructive and not clearly requested",
    "tool_output_target": "looks destructive and aimed at a value only tool output named",
    "check": "an added check reached its threshold",
    "no_user_request": "no user request survives to judge against",
    "full_view_unfit": "a full-view argument does not fit the budget",
    "too_large": "the arguments do not fit even at their shortest",
    "unserializable": "the arguments are not JSON",
    "timeout": "the decision model did not answer in time",
    "malformed_answer": "an answer was missing, NaN or out of range",
    "request_too_large": "the backend refused the request as too large",
    "backend_error": "the decision model failed",
    "refused": "the decision model refused to answer",
    "declined": "a person declined this call",
    "awaiting_approval": "the call waits for a person's approval",
}
"""Every ``Verdict.code`` and what it means."""


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The gate's decision on one tool call (JSON-serializable through :meth:`to_dict`)."""

    outcome: Outcome
    code: str
    """Which rule decided (a key of :data:`CODES`)."""
    reason: str
    """One actionable sentence or two; for a deny it is what the model reads."""
    tool: str
    args_sha256: str = ""
    """sha256 of the canonical full arguments (sorted keys, compact, UTF-8)."""
    probabilities: Mapping[str, float] = field(default_factory=dict)
    """P(yes) per question id, as answered."""
    omitted: tuple[Omission, ...] = ()
    """What the model did not see (shortened strings)."""
    model_id: str = ""
    latency_ms: float = 0.0
    """Time spent in ``decide``, milliseconds (the model call included)."""
    cached: bool = False
    fast_path: bool = False
    approved: bool = False
    """A person approved the call (the ask outcome)."""
    escalated: bool = False
    """The denial count passed a limit; the reason tells the model to stop and ask."""
    user_request: str = ""
    """The request the call was judged against (as sent, at most 8,000 code points)."""
    user_request_source: str = ""
    timestamp: float = 0.0
    """Unix time of the decision, seconds."""
    state: Mapping[str, Any] | None = None
    """The state sent to the decision model (``None`` when none was sent)."""
    effect: Effect | None = None
    """The call's effect class, its source and evidence (``None``: no source knew it)."""

    @property
    def allowed(self) -> bool:
        """True only for ``"allow"``."""
        return self.outcome == "allow"

    def to_dict(self, *, include_state: bool = True) -> dict[str, Any]:
        """The full decision record as plain JSON types."""
        record: dict[str, Any] = {
            "outcome": self.outcome,
            "code": self.code,
            "reason": self.reason,
            "tool": self.tool,
            "args_sha256": self.args_sha256,
            "probabilities": dict(self.probabilities),
            "omitted": [{"argument": o.argument, "chars": o.chars} for o in self.omitted],
            "model_id": self.model_id,
            "latency_ms": round(self.latency_ms, 3),
            "cached": self.cached,
            "fast_path": self.fast_path,
            "approved": self.approved,
            "escalated": self.escalated,
            "user_request": self.user_request,
            "user_request_source": self.user_request_source,
            "timestamp": self.timestamp,
            "effect": self.effect.to_dict() if self.effect is not None else None,
        }
        if include_state:
            record["state"] = self.state
        return record


def render_denial(verdict: Verdict, *, call_id: str = "", style: str = "openai") -> dict[str, Any]:
    """The error tool result that carries a denial back to the model.

    Args:
        verdict: a ``deny`` or ``ask`` verdict.
        call_id: the tool call's id (``tool_call_id`` / ``tool_use_id``).
        style: ``"openai"`` (a ``role: tool`` message) or ``"anthropic"`` (a ``tool_result``
            content block with ``is_error``).

    Raises:
        ValueError: the verdict allows the call, or ``style`` is unknown.
    """
    if verdict.allowed:
        raise ValueError("render_denial() needs a deny or ask verdict; this call was allowed")
    text = verdict.reason
    if style == "openai":
        return {"role": "tool", "tool_call_id": call_id, "content": f"Error: {text}"}
    if style == "anthropic":
        return {"type": "tool_result", "tool_use_id": call_id, "is_error": True,
                "content": [{"type": "text", "text": text}]}
    raise ValueError(f"unknown tool-result style {style!r}; use 'openai' or 'anthropic'")
