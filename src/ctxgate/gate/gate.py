"""ToolGate: judge every tool call before it runs, and fail closed.

Per call: the read-only fast path, the user request, the budgeted argument view, then one
decision request with the nouls ``destructive`` (with its criteria) and ``requested`` plus the
added checks. The call is denied when ``p_destructive >= destructive_threshold`` and
``p_requested < requested_threshold``, or when any check reaches its threshold; everything else
is allowed. A backend error, a timeout, a missing/NaN/out-of-range answer and a missing user
request all deny, each with its own reason. :meth:`ToolGate.decide` is the only place where a
:class:`~ctxgate.errors.DecisionModelError` becomes a deny.

Defence in depth, not a security boundary: the user's words and the call's arguments can carry
text written to steer the decision model. Keep real sandboxing underneath.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ctxgate.errors import (
    ConfigError,
    DecisionModelError,
    DecisionTimeout,
    MalformedAnswer,
    RequestTooLarge,
)
from ctxgate.gate.argviews import (
    FullViewUnfit,
    TooLarge,
    build_state,
    fit_arguments,
    truncate_middle,
)
from ctxgate.gate.backends.base import (
    Capabilities,
    DecisionModel,
    Question,
    check_capabilities,
    serialize_state,
    state_limits,
    validate_answers,
)
from ctxgate.gate.policy import (
    DEFAULT_GATE_POLICY,
    DESTRUCTIVE_FALSE_CRITERIA,
    DESTRUCTIVE_TRUE_CRITERIA,
    GateCheck,
    GatePolicy,
)
from ctxgate.gate.verdict import Verdict

__all__ = ["ApprovalRequest", "Approver", "ToolCall", "ToolGate", "args_sha256", "canonical_args"]

log = logging.getLogger("ctxgate.gate")
log.addHandler(logging.NullHandler())  # a library logs only where the host configured logging

DESTRUCTIVE_ID = "destructive"
REQUESTED_ID = "requested"


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool call as the agent wants to run it."""

    tool: str
    arguments: Any = field(default_factory=dict)
    """The JSON arguments that will really run (the gate judges these, never a copy)."""
    call_id: str = ""


@dataclass(frozen=True, kw_only=True)
class ApprovalRequest:
    """What an approval hook is asked: may this exact call run once?"""

    call: ToolCall
    args_sha256: str
    verdict: Verdict
    """The deny verdict a person may overrule."""


Approver = Callable[[ApprovalRequest], "bool | None | Awaitable[bool | None]"]
"""``True`` approves this call once, ``False`` declines, ``None`` leaves it to the host (ask)."""


def canonical_args(arguments: Any) -> str:
    """Canonical JSON of arguments: sorted keys, compact, non-ASCII raw (hashing, caching)."""
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                      allow_nan=False)


def args_sha256(arguments: Any) -> str:
    """sha256 (hex) of :func:`canonical_args`, UTF-8 encoded."""
    return hashlib.sha256(canonical_args(arguments).encode("utf-8", "surrogatepass")).hexdigest()


def _fmt_p(p: float | None) -> str:
    return "unknown" if p is None else f"{p:.2f}"


def _at_or_above(value: float, threshold: float) -> bool:
    """``value >= threshold``, with NaN on the denying side."""
    return not value < threshold


class ToolGate:
    """A fail-closed tool gate over a :class:`~ctxgate.gate.backends.base.DecisionModel`.

    Args:
        model: the decision backend (its ``capabilities`` are the strictest of its chain), or
            a zero-argument factory returning one: it is then loaded, and its capabilities
            checked, only when a call first needs the model (the fast path does not).
        policy: thresholds, questions, budgets, full views, fast path, escalation.
        checks: extra :class:`~ctxgate.gate.policy.GateCheck` asked after the policy's own.
        audit: an :class:`~ctxgate.gate.audit.AuditLog` recording every decision and holding
            the verdict cache; ``None`` keeps an in-process cache and records nothing.
        approver: the ask-outcome hook, consulted when a call would be denied.
        clock: seconds since the epoch (tests pass their own).

    Raises:
        ConfigError: invalid settings — a threshold outside [0, 1] or NaN; an empty,
            duplicate or built-in check id; a bad JSON pointer; a budget of 0; a check the
            backend cannot answer (checked here, at start-up, not call by call).
    """

    def __init__(
        self,
        model: DecisionModel,
        policy: GatePolicy = DEFAULT_GATE_POLICY,
        *,
        checks: Sequence[GateCheck] = (),
        audit: Any = None,
        approver: Approver | None = None,
        clock: Callable[[], float] = time.time,
    ):
        if not isinstance(policy, GatePolicy):
            raise ConfigError(f"policy must be a GatePolicy, got {type(policy).__name__}")
        all_checks = tuple(policy.checks) + tuple(checks)
        try:
            # GatePolicy.__post_init__ validates everything, the merged checks included
            policy = replace(policy, checks=all_checks)
        except TypeError as exc:
            raise ConfigError(f"invalid gate check: {exc}") from exc
        self.policy = policy
        self.checks = all_checks
        self.audit = audit
        self.approver = approver
        self.clock = clock
        self.questions = self._questions()
        self._factory: Callable[[], DecisionModel] | None = None
        if hasattr(model, "evaluate"):
            self._bind_model(model)
        elif callable(model):
            self._factory = model  # loaded (and checked) when a call first needs the model
        else:
            raise ConfigError(
                f"decision model {type(model).__name__} is neither a DecisionModel nor a "
                "factory returning one"
            )
        self._memory_cache: dict[str, tuple[float, Verdict]] = {}
        self._approvals: dict[tuple[str, str], int] = {}
        self.consecutive_denials = 0
        self.total_denials = 0

    # ------------------------------------------------------------------ configuration

    def _bind_model(self, model: DecisionModel) -> None:
        caps = getattr(model, "capabilities", None)
        if not isinstance(caps, Capabilities):
            raise ConfigError(
                f"decision model {type(model).__name__} has no Capabilities; implement the "
                "DecisionModel protocol (capabilities + evaluate)"
            )
        try:
            check_capabilities(caps, self.questions)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        p = self.policy
        self.model = model
        self.capabilities = caps
        self.limits = state_limits(caps, self.questions)
        self.fingerprint = hashlib.sha256(json.dumps([
            caps.model_id, p.destructive_threshold, p.requested_threshold,
            [(q.id, q.text) for q in self.questions],
            [(c.id, c.deny_at_or_above) for c in self.checks],
            p.arg_budget_chars, p.user_request_max_chars,
            sorted((k, list(v)) for k, v in p.full_views.items()),
        ]).encode()).hexdigest()[:16]

    def _ensure_model(self) -> None:
        """Load a lazily given model. Raises ConfigError (never a verdict) when it is unusable."""
        if self._factory is not None:
            factory, self._factory = self._factory, None
            self._bind_model(factory())

    def _questions(self) -> tuple[Question, ...]:
        p = self.policy
        qs = [
            Question(id=DESTRUCTIVE_ID, text=p.destructive_question,
                     true_criteria=DESTRUCTIVE_TRUE_CRITERIA,
                     false_criteria=DESTRUCTIVE_FALSE_CRITERIA),
            Question(id=REQUESTED_ID, text=p.requested_question),
        ]
        qs += [Question(id=c.id, text=c.question) for c in self.checks]
        return tuple(qs)

    def full_views_for(self, tool: str) -> tuple[str, ...]:
        """The full-view pointers of ``tool``."""
        return tuple(self.policy.full_views.get(tool, ()))

    def new_run(self) -> None:
        """Start a new run: the denial counters of escalation go back to 0."""
        self.consecutive_denials = 0
        self.total_denials = 0

    def approve(self, call: ToolCall) -> str:
        """Approve this exact call once (e.g. after asking the user out of band).

        The approval binds to the sha256 of the canonical arguments: the same tool with any
        other arguments is judged as usual. Returns that hash.
        """
        digest = args_sha256(call.arguments)
        key = (call.tool, digest)
        self._approvals[key] = self._approvals.get(key, 0) + 1
        return digest

    # ------------------------------------------------------------------ decision

    def decide_sync(self, call: ToolCall, **kwargs: Any) -> Verdict:
        """:meth:`decide` for synchronous callers (runs its own event loop)."""
        return asyncio.run(self.decide(call, **kwargs))

    async def decide(
        self,
        call: ToolCall,
        *,
        conversation: Sequence[Mapping[str, Any]] | None = None,
        user_request: str | None = None,
        run_prompts: Sequence[str] = (),
    ) -> Verdict:
        """Judge one call; never raises for a backend failure (it denies instead).

        Args:
            call: the tool and the arguments that will really run.
            conversation: OpenAI or Anthropic messages, oldest first; the user request is
                extracted from them (see :mod:`ctxgate.gate.request`).
            user_request: the request text, when the caller already has it (wins over
                ``conversation``).
            run_prompts: this run's own prompts, used when the conversation holds no request.
        """
        started = time.perf_counter()
        verdict = await self._decide(call, conversation, user_request, run_prompts)
        verdict = await self._after(call, verdict)
        verdict = replace(verdict, latency_ms=(time.perf_counter() - started) * 1000.0,
                          timestamp=self.clock())
        if self.audit is not None:
            try:
                self.audit.record(verdict)
            except Exception as exc:  # the audit log must never change a verdict
                log.warning("gate audit log could not record a decision: %s", exc)
        return verdict

    async def _decide(self, call, conversation, user_request, run_prompts) -> Verdict:
        tool, p = call.tool, self.policy
        try:
            digest = args_sha256(call.arguments)
        except (TypeError, ValueError) as exc:
            return self._deny(tool, "unserializable", (
                f"Tool gate: this call's arguments are not valid JSON ({exc}), so the gate "
                "cannot show them to the decision model and the call was not run. Send JSON "
                "arguments (no NaN, no binary objects) and retry."))
        base = {"tool": tool, "args_sha256": digest}
        if self._approvals.get((tool, digest)):
            self._approvals[(tool, digest)] -= 1
            return Verdict(outcome="allow", code="approved", approved=True, **base,
                           reason="Tool gate: a person approved this exact call.")
        if p.fast_path:
            from ctxgate.gate.fastpath import is_read_only, shell_command

            command = shell_command(tool, call.arguments, p.shell_tools)
            if command is not None:
                proof = is_read_only(command)
                if proof.read_only:
                    return Verdict(outcome="allow", code="fast_path", fast_path=True, **base,
                                   reason=f"Tool gate: {proof.reason} (no model call).")
        request, source = self._user_request(conversation, user_request, run_prompts)
        if request is None:
            return self._deny(tool, "no_user_request", (
                "Tool gate: there is no user request to judge this call against (the history "
                "was compacted or holds no user message, and this run has no prompt), so it "
                "was not run. The gate fails closed; ask the user to restate the request."),
                **base)
        request = truncate_middle(request, p.user_request_max_chars)
        common = dict(base, user_request=request, user_request_source=source)
        self._ensure_model()
        cache_key = self._cache_key(request, tool, digest)
        cached = self._cache_get(cache_key)
        if cached is not None:
            return replace(cached, cached=True, **common)
        view = fit_arguments(call.arguments, user_request=request, tool=tool,
                             full_views=self.full_views_for(tool),
                             budget_chars=p.arg_budget_chars, limits=self.limits)
        if isinstance(view, FullViewUnfit):
            return self._deny(tool, "full_view_unfit", (
                f"Tool gate: `{tool}`'s `{view.argument}` argument is {view.chars} characters, "
                "more than the gate can review in full, and it never judges part of it, so this "
                "call was not run. The gate fails closed; split it into smaller calls or ask "
                "the user."), **common)
        if isinstance(view, TooLarge):
            return self._deny(tool, "too_large", (
                "Tool gate: this call's arguments are too large to evaluate: even at the "
                f"shortest the gate may make them ({view.chars} characters) they exceed its "
                f"budget ({p.arg_budget_chars}) or the decision model's limits, so it was not "
                "run. The gate fails closed; split the work into smaller calls or ask the user."),
                **common)
        if view.omitted:
            log.info("tool gate judges a shortened call to %s: %s", tool,
                     ", ".join(f"{o.argument} (-{o.chars} chars)" for o in view.omitted))
        state = build_state(request, tool, view)
        common.update(omitted=view.omitted, state=state, model_id=self.capabilities.model_id)
        try:
            answers = await self._evaluate(state)
        except DecisionModelError as exc:
            return self._failure(tool, exc, common)
        probs = {qid: a.p for qid, a in answers.items()}
        model_ids = sorted({a.model_id for a in answers.values() if a.model_id})
        if model_ids:
            common["model_id"] = ",".join(model_ids)
        verdict = self._judge(tool, probs, common)
        self._cache_put(cache_key, verdict)
        return verdict

    def _user_request(self, conversation, user_request, run_prompts):
        if user_request is not None and str(user_request).strip():
            return str(user_request), "explicit"
        from ctxgate.gate.request import extract_user_request

        p = self.policy
        found = extract_user_request(
            conversation or (), run_prompts=run_prompts,
            compaction_markers=p.compaction_markers, injected_prefixes=p.injected_prefixes,
            short_reply_chars=p.short_reply_chars)
        return (None, "") if found is None else (found.text, found.source)

    async def _evaluate(self, state: Mapping[str, Any]):
        """Ask the backend under the gate's deadline; every failure is a DecisionModelError."""
        timeout = self.policy.timeout_seconds
        try:
            serialize_state(state)  # a state the backend cannot serialize is our bug, caught here
            raw = await asyncio.wait_for(self.model.evaluate(state, self.questions), timeout)
        except TimeoutError as exc:
            raise DecisionTimeout(
                f"timed out after {timeout:g} s") from exc
        except DecisionModelError:
            raise
        except Exception as exc:  # a backend bug must deny too, never allow or crash the loop
            raise DecisionModelError(
                f"the decision backend raised {type(exc).__name__}: {exc}") from exc
        return validate_answers(self.questions, raw)

    def _failure(self, tool: str, exc: DecisionModelError, common: dict) -> Verdict:
        log.warning("tool gate denied a call to %s: %s", tool, exc)
        if isinstance(exc, DecisionTimeout):
            return self._deny(tool, "timeout", (
                f"Tool gate: the decision model could not be consulted ({exc}), so this call "
                "was not run. The gate fails closed; retry in a moment, or ask the user how to "
                "proceed."), **common)
        if type(exc).__name__ == "DecisionRefused":
            return self._deny(tool, "refused", (
                f"Tool gate: the decision model refused to judge this call ({exc}), so it was "
                "not run. The gate fails closed; ask the user whether to proceed."), **common)
        if isinstance(exc, MalformedAnswer):
            return self._deny(tool, "malformed_answer", (
                f"Tool gate: the decision model could not be consulted: its answer was unusable "
                f"({exc}), so this call was not run. The gate fails closed; ask the user how to "
                "proceed."), **common)
        if isinstance(exc, RequestTooLarge):
            return self._deny(tool, "request_too_large", (
                f"Tool gate: the decision model could not be consulted: it refused the request "
                f"as too large ({exc}), so this call was not run. The gate fails closed; split "
                "the work into smaller calls or ask the user."), **common)
        return self._deny(tool, "backend_error", (
            f"Tool gate: the decision model could not be consulted ({exc}), so this call was "
            "not run. The gate fails closed; ask the user how to proceed."), **common)

    def _judge(self, tool: str, probs: Mapping[str, float], common: dict) -> Verdict:
        """Thresholds; a second layer that denies on anything missing, NaN or out of range."""

        def p(qid: str) -> float | None:
            v = probs.get(qid)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
                return None
            return float(v) if 0.0 <= v <= 1.0 else None

        common = dict(common, probabilities=dict(probs))
        for check in self.checks:
            v = p(check.id)
            if v is None or _at_or_above(v, check.deny_at_or_above):
                return self._deny(tool, "check", (
                    f"Tool gate: check `{check.id}` (\"{check.question}\") answered "
                    f"{_fmt_p(v)}, at or above {check.deny_at_or_above:.2f}. Ask the user to "
                    "confirm before retrying."), **common)
        d, r = p(DESTRUCTIVE_ID), p(REQUESTED_ID)
        looks_destructive = d is None or _at_or_above(d, self.policy.destructive_threshold)
        clearly_requested = r is not None and r >= self.policy.requested_threshold
        if d is None or r is None or (looks_destructive and not clearly_requested):
            return self._deny(tool, "destructive_unrequested", (
                f"Tool gate: this call looks destructive or irreversible (p={_fmt_p(d)}) and "
                f"not clearly what the user asked for (p={_fmt_p(r)}), so it was not run. Ask "
                "the user to confirm before retrying."), **common)
        return Verdict(outcome="allow", code="allowed", tool=tool, **{
            k: v for k, v in common.items() if k != "tool"},
            reason=f"Tool gate: allowed (destructive p={_fmt_p(d)}, requested p={_fmt_p(r)}).")

    def _deny(self, tool_name: str, code: str, reason: str, /, **fields: Any) -> Verdict:
        fields.pop("tool", None)
        return Verdict(outcome="deny", code=code, reason=reason, tool=tool_name, **fields)

    # ------------------------------------------------------------------ after the decision

    async def _after(self, call: ToolCall, verdict: Verdict) -> Verdict:
        """The ask outcome, then denial escalation."""
        if not verdict.allowed and self.approver is not None and verdict.args_sha256:
            answer = self.approver(ApprovalRequest(call=call, args_sha256=verdict.args_sha256,
                                                   verdict=verdict))
            if inspect.isawaitable(answer):
                answer = await answer
            if answer is True:
                verdict = replace(verdict, outcome="allow", code="approved", approved=True,
                                  reason="Tool gate: a person approved this exact call "
                                         f"(the gate had said: {verdict.reason})")
            elif answer is None:
                verdict = replace(verdict, outcome="ask", code="awaiting_approval", reason=(
                    f"{verdict.reason} It needs a person's approval of this exact call; ask the "
                    "user, then retry the identical call."))
            else:
                verdict = replace(verdict, code="declined", reason=(
                    f"{verdict.reason} The user declined this call; do not retry it, ask the "
                    "user what to do instead."))
        if verdict.allowed:
            self.consecutive_denials = 0
            return verdict
        self.consecutive_denials += 1
        self.total_denials += 1
        p = self.policy
        if self.consecutive_denials >= p.max_consecutive_denials or \
                self.total_denials >= p.max_total_denials:
            verdict = replace(verdict, escalated=True, reason=(
                f"{verdict.reason} This is the gate's denial number {self.total_denials} in this "
                f"run ({self.consecutive_denials} in a row): stop calling tools and ask the user "
                "how to proceed."))
        return verdict

    # ------------------------------------------------------------------ cache

    def _cache_key(self, request: str, tool: str, digest: str) -> str:
        raw = json.dumps([self.fingerprint, request, tool, digest], ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()

    def _cache_get(self, key: str) -> Verdict | None:
        ttl = self.policy.cache_ttl_seconds
        if ttl <= 0:
            return None
        now = self.clock()
        if self.audit is not None:
            return self.audit.cache_get(key, now)
        hit = self._memory_cache.get(key)
        if hit is None or hit[0] <= now:
            return None
        return hit[1]

    def _cache_put(self, key: str, verdict: Verdict) -> None:
        """Cache a verdict the model's answers decided; errors and timeouts never get here."""
        ttl = self.policy.cache_ttl_seconds
        if ttl <= 0 or verdict.code not in ("allowed", "destructive_unrequested", "check"):
            return
        now = self.clock()
        if self.audit is not None:
            self.audit.cache_put(key, verdict, now + ttl, now=now)
        else:
            self._memory_cache[key] = (now + ttl, verdict)
