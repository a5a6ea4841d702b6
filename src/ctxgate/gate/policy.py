"""Gate configuration values: thresholds, questions, checks, budgets, full views, fast path.

Every invalid value raises :class:`~ctxgate.errors.ConfigError` when the policy is built
(threshold outside [0, 1] or NaN, an empty, duplicate or built-in check id, a bad JSON pointer,
a budget of 0), so a misconfigured gate fails at start-up rather than silently never (or
always) firing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ctxgate.errors import ConfigError

__all__ = [
    "BUILTIN_QUESTION_IDS",
    "DEFAULT_DESTRUCTIVE_QUESTION",
    "DEFAULT_GATE_POLICY",
    "DEFAULT_REQUESTED_QUESTION",
    "DESTRUCTIVE_FALSE_CRITERIA",
    "DESTRUCTIVE_TRUE_CRITERIA",
    "GateCheck",
    "GatePolicy",
    "ToolRule",
    "check_threshold",
]

DEFAULT_DESTRUCTIVE_QUESTION = (
    "Would executing `tool_call` delete, overwrite, or irreversibly change data or external "
    "state — files, databases, remote systems, or messages sent to other people?"
)
DESTRUCTIVE_TRUE_CRITERIA = (
    "The call removes or replaces existing data, or changes something outside the "
    "conversation that cannot easily be undone."
)
DESTRUCTIVE_FALSE_CRITERIA = (
    "The call only reads, lists or searches, or creates something new without replacing "
    "anything."
)
DEFAULT_REQUESTED_QUESTION = (
    "Is `tool_call` something the user asked for in `user_request`, or a direct step toward "
    "what they asked for?"
)
BUILTIN_QUESTION_IDS = frozenset({"destructive", "requested"})

DEFAULT_TIMEOUT_SECONDS = 5.0
DEFAULT_ARG_BUDGET_CHARS = 48_000
DEFAULT_USER_REQUEST_MAX_CHARS = 8_000
DEFAULT_CACHE_TTL_SECONDS = 300.0
DEFAULT_SHORT_REPLY_CHARS = 40


def check_threshold(name: str, value: float) -> float:
    """Return ``value`` if it is a probability in [0, 1].

    Raises:
        ConfigError: it is not a number, is NaN, or lies outside [0, 1].
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) \
            or not 0.0 <= value <= 1.0:
        raise ConfigError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


@dataclass(frozen=True, kw_only=True)
class GateCheck:
    """An extra yes/no question asked on every call; denies at or above its threshold."""

    id: str
    """Answer id; not empty, not ``destructive``/``requested``, unique in a gate."""
    question: str
    """The question; refer to the state's parts in backticks (`tool_call`, `user_request`)."""
    deny_at_or_above: float = 0.5
    """The call is denied when P(yes) reaches this."""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise ConfigError("a tool gate check id must not be empty; give it a short name")
        if self.id in BUILTIN_QUESTION_IDS:
            raise ConfigError(
                f"tool gate check id {self.id!r} collides with a built-in question; rename it"
            )
        if not isinstance(self.question, str) or not self.question.strip():
            raise ConfigError(f"tool gate check {self.id!r} has an empty question")
        check_threshold(f"check {self.id!r} threshold", self.deny_at_or_above)


@dataclass(frozen=True, kw_only=True)
class ToolRule:
    """The user's word on tools whose name matches a pattern (``[gate.tool_rules."send_*"]``)."""

    effect: str | None = None
    """Effect class of these tools: read_only, local_recoverable, local_irreversible, external
    or untrusted_code (the strongest evidence: it overrides every other source)."""
    destructive_threshold: float | None = None
    """Per-tool ``destructive_threshold``."""
    requested_threshold: float | None = None
    """Per-tool ``requested_threshold``."""
    ask_threshold: float | None = None
    """Per-tool ``ask_threshold``."""

    def __post_init__(self) -> None:
        from ctxgate.gate.effects.model import EffectClass

        if self.effect is not None and self.effect not in {c.value for c in EffectClass}:
            raise ConfigError(
                f"tool rule effect {self.effect!r} is not an effect class; use one of "
                f"{[c.value for c in EffectClass]}")
        for name in ("destructive_threshold", "requested_threshold", "ask_threshold"):
            value = getattr(self, name)
            if value is not None:
                check_threshold(f"tool rule {name}", value)


def _default_full_views() -> dict[str, tuple[str, ...]]:
    return {"bash": ("/command",)}


def _default_shell_tools() -> dict[str, str]:
    return {"bash": "/command"}


def _default_markers() -> tuple[str, ...]:
    from ctxgate.gate.request import DEFAULT_COMPACTION_MARKERS

    return DEFAULT_COMPACTION_MARKERS


def _default_injected() -> tuple[str, ...]:
    from ctxgate.gate.request import DEFAULT_INJECTED_PREFIXES

    return DEFAULT_INJECTED_PREFIXES


@dataclass(frozen=True, kw_only=True)
class GatePolicy:
    """How the gate judges a tool call."""

    destructive_threshold: float = 0.5
    """Deny when P(destructive) reaches this ..."""
    requested_threshold: float = 0.7
    """... and P(requested) stays below this."""
    ask_threshold: float = 0.3
    """A destructive call whose P(requested) is at or above this but below
    ``requested_threshold`` is ``ask`` (a person decides) instead of ``deny``; set it equal to
    ``requested_threshold`` to never ask."""
    effects: bool = True
    """Decide each call's effect class from rules (configuration, MCP annotations, the
    harness's tools, the shell parser) before the model; a destructive class needs a clear
    request, a recoverable or read-only one does not."""
    tool_rules: dict[str, ToolRule] = field(default_factory=dict)
    """Per tool-name glob pattern (``send_*``, ``mcp__github__*``): an effect class and/or
    thresholds, as ``[gate.tool_rules."send_*"]`` tables in the TOML file. The exact name
    wins, then the longest matching pattern."""
    trusted_mcp_servers: tuple[str, ...] = ()
    """MCP servers whose annotations may lower caution (``readOnlyHint`` → read-only);
    any server's annotations may raise it."""
    provenance: bool = True
    """A call the model would allow that looks destructive or external, and whose arguments
    hold a target (e-mail address, URL host, account or wallet number) that only tool output
    named, never the user, is asked about (denied when the ask band is off): the shape of a
    prompt injection (:mod:`ctxgate.gate.provenance`)."""
    scope: bool = True
    """A call the model would allow that looks destructive or external, and also acts on
    what the user's request never names (home or a dotfile beside the directory asked for,
    a file beside the one named, another recipient, ``HEAD~10`` for "my last commit", the
    ``prod`` context, a force push nobody asked for), is asked about (denied when the ask
    band is off): an agent's over-reach (:mod:`ctxgate.gate.scope`)."""
    destructive_question: str = DEFAULT_DESTRUCTIVE_QUESTION
    """The destructive question (its true/false criteria stay the built-in ones)."""
    requested_question: str = DEFAULT_REQUESTED_QUESTION
    """The requested question."""
    checks: tuple[GateCheck, ...] = ()
    """Extra checks asked on every call, in order."""
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    """Deadline of the whole backend chain, seconds."""
    arg_budget_chars: int = DEFAULT_ARG_BUDGET_CHARS
    """Character budget of the serialized arguments (code points, JSON escapes counted)."""
    user_request_max_chars: int = DEFAULT_USER_REQUEST_MAX_CHARS
    """The user request sent is cut to this many code points (head and tail)."""
    full_views: dict[str, tuple[str, ...]] = field(default_factory=_default_full_views)
    """Per tool, JSON pointers of arguments judged whole (never shortened); ``""`` is all."""
    fast_path: bool = True
    """Allow provably read-only shell commands without a model call."""
    shell_tools: dict[str, str] = field(default_factory=_default_shell_tools)
    """Tools whose argument at the JSON pointer is a shell command (fast-path candidates)."""
    cache_ttl_seconds: float = DEFAULT_CACHE_TTL_SECONDS
    """Verdict cache lifetime, seconds; 0 disables."""
    audit: bool = True
    """Record every decision in the ``gate_audit`` table of ``<home>/audit.db`` (its own file:
    a broken archive never touches it, and an unusable one is reported, never a denial)."""
    max_consecutive_denials: int = 3
    """After this many denials in a row the reason tells the model to stop and ask."""
    max_total_denials: int = 20
    """After this many denials in a run the reason tells the model to stop and ask."""
    compaction_markers: tuple[str, ...] = field(default_factory=_default_markers)
    """Prefixes of a user message marking a compaction boundary."""
    injected_prefixes: tuple[str, ...] = field(default_factory=_default_injected)
    """Prefixes of user-role messages the agent loop injected (skipped)."""
    short_reply_chars: int = DEFAULT_SHORT_REPLY_CHARS
    """A reply under this many code points to an assistant question carries that question."""
    backend: str = "local"
    """Decision backend: ``"local"``, ``"openai"``, ``"structured"``, or ``"module:attr"``."""
    base_url: str = "http://127.0.0.1:8080/v1"
    """OpenAI-compatible endpoint for the ``openai`` backend."""
    model: str = ""
    """Model name sent to a remote backend."""
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the API key (the key itself is never configured)."""

    # --- decision-model backends (docs/decision-models.md) -----------------------------------
    model_temperature: float = 1.0
    """Calibration temperature T of the ``openai`` logprob backend (``p^(1/T)``; 1 = off);
    ``ctxgate gate calibrate`` reports the best one."""
    disable_thinking: bool = False
    """Send ``chat_template_kwargs.enable_thinking = false`` (Qwen3-style servers); OpenAI
    itself rejects the field, so it is off by default."""
    max_request_tokens: int = 0
    """Largest request a remote backend takes, tokens (estimate: UTF-8 bytes / 4), checked
    before sending; 0 = not checked (the server's own limit applies)."""
    max_concurrency: int = 8
    """Questions in flight at once for the ``openai`` logprob backend."""
    structured_api: str = "openai"
    """Wire format of the ``structured`` backend: ``"openai"`` (JSON schema) or
    ``"anthropic"`` (Messages API with a forced tool)."""
    fallback_backends: tuple[str, ...] = ("openai", "local")
    """Members, in order, of the ``fallback`` backend (built-in names)."""

    def __post_init__(self) -> None:
        from ctxgate.gate.pointers import validate_pointer

        check_threshold("destructive threshold", self.destructive_threshold)
        check_threshold("requested threshold", self.requested_threshold)
        check_threshold("ask threshold", self.ask_threshold)
        if self.ask_threshold > self.requested_threshold:
            raise ConfigError(
                f"gate ask_threshold ({self.ask_threshold}) must not exceed requested_threshold "
                f"({self.requested_threshold}); equal values turn the ask band off")
        for pattern, rule in self.tool_rules.items():
            if not isinstance(rule, ToolRule):
                raise ConfigError(f"gate tool_rules[{pattern!r}] must be a table of effect "
                                  "and thresholds")
        for name in ("arg_budget_chars", "user_request_max_chars", "short_reply_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"gate {name} must be a whole number above 0, got {value!r}")
        t = self.timeout_seconds
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not (t > 0 and math.isfinite(t)):
            raise ConfigError(f"gate timeout_seconds must be a positive number, got {t!r}")
        if not self.cache_ttl_seconds >= 0:
            raise ConfigError(
                f"gate cache_ttl_seconds must be 0 (off) or more, got {self.cache_ttl_seconds!r}"
            )
        for name in ("max_consecutive_denials", "max_total_denials"):
            if getattr(self, name) < 1:
                raise ConfigError(f"gate {name} must be at least 1, got {getattr(self, name)!r}")
        for tool, pointers in self.full_views.items():
            if isinstance(pointers, str):
                raise ConfigError(
                    f"gate full_views[{tool!r}] must be a list of JSON pointers, got {pointers!r}"
                )
            for p in pointers:
                validate_pointer(p, what=f"full view of tool {tool!r}")
        for tool, p in self.shell_tools.items():
            validate_pointer(p, what=f"shell command pointer of tool {tool!r}")
        seen: set[str] = set()
        for check in self.checks:
            if check.id in seen:
                raise ConfigError(f"tool gate check id {check.id!r} is used twice; rename one")
            seen.add(check.id)
        if not all(isinstance(m, str) and m for m in self.compaction_markers):
            raise ConfigError("gate compaction_markers must be non-empty strings")


DEFAULT_GATE_POLICY = GatePolicy()
