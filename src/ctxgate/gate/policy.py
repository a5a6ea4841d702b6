"""Gate configuration values: thresholds, budgets, full views, fast path, escalation."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_GATE_POLICY", "GatePolicy"]


def _default_full_views() -> dict[str, tuple[str, ...]]:
    return {"bash": ("/command",)}


@dataclass(frozen=True, kw_only=True)
class GatePolicy:
    """How the gate judges a tool call."""

    destructive_threshold: float = 0.5
    """Deny when P(destructive) reaches this ..."""
    requested_threshold: float = 0.7
    """... and P(requested) stays below this."""
    timeout_seconds: float = 5.0
    """Deadline of the whole backend chain, seconds."""
    arg_budget_chars: int = 48_000
    """Character budget of the serialized arguments (code points, JSON escapes counted)."""
    user_request_max_chars: int = 8_000
    """The user request sent is cut to this many code points (head and tail)."""
    full_views: dict[str, tuple[str, ...]] = field(default_factory=_default_full_views)
    """Per tool, JSON pointers of arguments judged whole (never shortened); ``""`` is all."""
    fast_path: bool = True
    """Allow provably read-only shell commands without a model call."""
    cache_ttl_seconds: float = 300.0
    """Verdict cache lifetime, seconds; 0 disables."""
    max_consecutive_denials: int = 3
    """After this many denials in a row the reason tells the model to stop and ask."""
    max_total_denials: int = 20
    """After this many denials in a run the reason tells the model to stop and ask."""
    backend: str = "local"
    """Decision backend: ``"local"`` (offline embedding classifier), ``"openai"``, ``"structured"``."""
    base_url: str = "http://127.0.0.1:8080/v1"
    """OpenAI-compatible endpoint for the ``openai`` backend."""
    model: str = ""
    """Model name sent to a remote backend."""
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the API key (the key itself is never configured)."""


DEFAULT_GATE_POLICY = GatePolicy()
