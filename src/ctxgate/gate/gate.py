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
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxgate.errors import (
    ConfigError,
    DecisionModelError,
    DecisionTimeout,
)
from ctxgate.gate import reasons
from ctxgate.gate.argviews import (
    FullViewUnfit,
    TooLarge,
    build_state,
    fit_arguments,
    truncate_middle,
)
from ctxgate.gate.audit import MemoryVerdictCache
from ctxgate.gate.backends.base import (
    Capabilities,
    DecisionModel,
    Question,
    check_capabilities,
    serialize_state,
    state_limits,
    validate_answers,
)
from ctxgate.gate.call import (
    ApprovalRequest,
    Approver,
    ToolCall,
    args_sha256,
    canonical_args,
    run_sync,
)
from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource
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

STRONG_SOURCES = frozenset({EffectSource.CONFIG, EffectSource.MCP_ANNOTATIONS,
                            EffectSource.HARNESS_TOOL})
"""Sources whose ``read_only`` allows a call without the model (the shell parser's does not:
its read-only only means "not destructive", and the model is still asked)."""

DESTRUCTIVE_ID = "destructive"
REQUESTED_ID = "requested"


def _model_counted_learned(answers: Mapping[str, Any], effect: Effect | None) -> bool:
    """Whether the backend's P(destructive) was computed from the learned effect classifier
    that also gave ``effect`` (the local backend does so for function calls and says so in
    its answer's detail): that evidence must then not be counted a second time."""
    if effect is None or effect.rule_based:
        return False
    answer = answers.get(DESTRUCTIVE_ID)
    detail = getattr(answer, "detail", None)
    used = detail.get("effect") if isinstance(detail, Mapping) else None
    return isinstance(used, Mapping) and used.get("source") == EffectSource.LEARNED.value


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
        home: the ctxgate home; when given, the remembered MCP annotations
            (``mcp-tools.json``) feed the effect rules and the one-time approvals of
            ``ctxgate gate approve`` (``gate-grants.db``) are honoured.
        consume_grants: whether an allow by such an approval uses it up (the real call
            does); ``False`` only looks (``ctxgate gate check`` asking what would happen).

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
        home: str | Path | None = None,
        consume_grants: bool = True,
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
        self._cache = audit if audit is not None else MemoryVerdictCache()
        self.annotations = None
        self.grants = None
        if home is not None:
            from ctxgate.gate.effects.annotations import AnnotationStore
            from ctxgate.gate.grants import GrantStore

            self.annotations = AnnotationStore.in_home(home)
            self.grants = GrantStore.in_home(home)
        self.consume_grants = consume_grants
        self._approvals: dict[tuple[str, str], int] = {}
        self._audit_warned = False
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
            p.ask_threshold, p.effects, sorted(p.trusted_mcp_servers),
            sorted((k, repr(v)) for k, v in p.tool_rules.items()),
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

    def full_views_for(self, tool: str, arguments: Any = None, *,
                       server: str = "") -> tuple[str, ...]:
        """The full-view pointers of ``tool``: the configured ones when ``full_views`` names
        the tool (an empty list included: the user's choice), else the argument that the
        call runs as a shell command, SQL or code
        (:func:`~ctxgate.gate.effects.executed.executed_pointer`), which is judged whole or
        the call is denied."""
        if tool in self.policy.full_views:  # configured (even as none): the user's word
            return tuple(self.policy.full_views[tool])
        if arguments is None or not self.policy.effects:
            return ()
        from ctxgate.gate.effects.executed import executed_pointer

        try:
            pointer = executed_pointer(tool, arguments, server=server)
        except Exception:  # noqa: BLE001 - a rule bug: the arguments are fitted as before
            pointer = None
        return (pointer,) if pointer is not None else ()

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
        """:meth:`decide` for synchronous callers (also from inside a running event loop)."""
        return run_sync(self.decide(call, **kwargs))

    async def decide(
        self,
        call: ToolCall,
        *,
        conversation: Sequence[Mapping[str, Any]]
        | Callable[[], Sequence[Mapping[str, Any]]] | None = None,
        user_request: str | None = None,
        run_prompts: Sequence[str] = (),
    ) -> Verdict:
        """Judge one call; never raises for a backend failure (it denies instead).

        Args:
            call: the tool and the arguments that will really run.
            conversation: OpenAI or Anthropic messages, oldest first; the user request is
                extracted from them (see :mod:`ctxgate.gate.request`). A callable is called
                only when the request is needed (not for a fast-path or approved call); what
                it raises propagates, so a hook blocks the call.
            user_request: the request text, when the caller already has it (wins over
                ``conversation``).
            run_prompts: this run's own prompts, used when the conversation holds no request.
        """
        started = time.perf_counter()
        if callable(conversation):
            conversation = _Once(conversation)
        verdict = await self._decide(call, conversation, user_request, run_prompts)
        verdict = self._provenance(call, verdict, conversation)
        verdict = self._scope(call, verdict)
        verdict = await self._after(call, verdict)
        verdict = replace(verdict, latency_ms=(time.perf_counter() - started) * 1000.0,
                          timestamp=self.clock())
        if self.audit is not None:
            try:
                self.audit.record(verdict)
            except Exception as exc:  # noqa: BLE001 - the audit log never changes a verdict
                self._audit_failed("record a decision", exc)
        return verdict

    async def _decide(self, call, conversation, user_request, run_prompts) -> Verdict:
        tool, p = call.tool, self.policy
        try:
            digest = args_sha256(call.arguments)
        except (TypeError, ValueError) as exc:
            return self._deny(tool, "unserializable", reasons.unserializable(exc))
        base: dict[str, Any] = {"tool": tool, "args_sha256": digest}
        if self._approvals.get((tool, digest)):
            self._approvals[(tool, digest)] -= 1
            return Verdict(outcome="allow", code="approved", approved=True, **base,
                           reason=reasons.approved())
        if self.grants is not None and self._consume_grant(tool, digest):
            return Verdict(outcome="allow", code="approved", approved=True, **base,
                           reason=reasons.approved())
        if p.fast_path:
            from ctxgate.gate.fastpath import is_read_only, shell_command

            command = shell_command(tool, call.arguments, p.shell_tools)
            if command is not None:
                proof = is_read_only(command, cwd=call.cwd or None)
                if proof.read_only:
                    proved = Effect(effect=EffectClass.READ_ONLY, source=EffectSource.FAST_PATH,
                                    evidence=f"proved {proof.reason}")
                    return Verdict(outcome="allow", code="fast_path", fast_path=True, **base,
                                   effect=proved, reason=reasons.fast_path(proof.reason))
        effect = self._effect(call) if p.effects else None
        base["effect"] = effect
        if effect is not None and effect.effect is EffectClass.READ_ONLY and \
                effect.source in STRONG_SOURCES and not effect.needs_model:
            return Verdict(outcome="allow", code="read_only_effect", **base,
                           reason=reasons.read_only_effect(effect.evidence))
        request, source = self._user_request(conversation, user_request, run_prompts)
        if request is None:
            return self._deny(tool, "no_user_request", reasons.no_user_request(), **base)
        request = truncate_middle(request, p.user_request_max_chars)
        common = dict(base, user_request=request, user_request_source=source)
        self._ensure_model()
        judged = self._judged_writes(call, effect)
        cache_key = self._cache_key(request, tool, digest, effect, judged)
        cached = self._cache_get(cache_key)
        if cached is not None:
            return replace(cached, cached=True, **common)
        view = fit_arguments(call.arguments, user_request=request, tool=tool,
                             full_views=self.full_views_for(tool, call.arguments,
                                                            server=call.server),
                             budget_chars=p.arg_budget_chars, limits=self.limits)
        if isinstance(view, FullViewUnfit):
            return self._deny(tool, "full_view_unfit",
                              reasons.full_view_unfit(tool, view.argument, view.chars), **common)
        if isinstance(view, TooLarge):
            return self._deny(tool, "too_large", reasons.too_large(view.chars, p.arg_budget_chars),
                              **common)
        if view.omitted:
            log.info("tool gate judges a shortened call to %s: %s", tool,
                     ", ".join(f"{o.argument} (-{o.chars} chars)" for o in view.omitted))
        state = build_state(request, tool, view)
        if judged:
            state["effect_rules"] = {"writes": "recoverable", "evidence": list(judged[:5])}
        common.update(omitted=view.omitted, state=state, model_id=self.capabilities.model_id)
        try:
            answers = await self._evaluate(state)
        except DecisionModelError as exc:
            return self._failure(tool, exc, common)
        probs = {qid: a.p for qid, a in answers.items()}
        model_ids = sorted({a.model_id for a in answers.values() if a.model_id})
        if model_ids:
            common["model_id"] = ",".join(model_ids)
        verdict = self._judge(tool, probs, common, effect,
                              learned_counted=_model_counted_learned(answers, effect))
        self._cache_put(cache_key, verdict)
        return verdict

    def _provenance(self, call: ToolCall, verdict: Verdict, conversation) -> Verdict:
        """An allowed call that looks destructive or external and is aimed at a value only
        tool output named (:mod:`ctxgate.gate.provenance`) becomes ``ask`` (``deny`` when the
        ask band is off)."""
        if not self.policy.provenance or verdict.code != "allowed" or conversation is None \
                or not self._risky(call, verdict):
            return verdict
        _dt, rt, at = self._thresholds(call.tool)
        d = verdict.probabilities.get(DESTRUCTIVE_ID)
        effect = verdict.effect
        from ctxgate.gate.provenance import foreign_targets

        messages = conversation() if callable(conversation) else conversation
        values = foreign_targets(call.arguments, messages or (), verdict.user_request)
        if not values:
            return verdict
        ask = at < rt
        reason = reasons.foreign_targets(values, d if isinstance(d, (int, float)) else None,
                                         effect=effect, approve_id=verdict.args_sha256[:12],
                                         ask=ask)
        return replace(verdict, outcome="ask" if ask else "deny", code="tool_output_target",
                       reason=reason)

    def _risky(self, call: ToolCall, verdict: Verdict) -> bool:
        """Whether an allowed call looks destructive or external (rules first, else the
        model's P(destructive) at or above the threshold)."""
        dt, _rt, _at = self._thresholds(call.tool)
        d = verdict.probabilities.get(DESTRUCTIVE_ID)
        effect = verdict.effect
        if effect is not None and effect.rule_based and not effect.needs_model:
            return effect.effect.destructive
        return (isinstance(d, (int, float)) and _at_or_above(float(d), dt)) or (
            effect is not None and effect.effect.destructive)

    def _scope(self, call: ToolCall, verdict: Verdict) -> Verdict:
        """An allowed call that looks destructive or external and also acts on what the
        request never names (:mod:`ctxgate.gate.scope`), or any allowed shell call that
        installs a package the request does not name or skips the repository's hooks, becomes
        ``ask`` (``deny`` when the ask band is off)."""
        if not self.policy.scope or verdict.code != "allowed" or not verdict.user_request \
                or verdict.approved:
            return verdict
        from ctxgate.gate.scope import unasked_extras, unnamed_targets

        risky = self._risky(call, verdict)
        try:
            if risky:
                unnamed = unnamed_targets(call.tool, call.arguments, verdict.user_request,
                                          cwd=call.cwd or os.getcwd())
            else:  # an install is not destructive, but runs the package's code; a skipped
                # hook is no change at all, but the check it skips was the project's
                unnamed = unasked_extras(call.tool, call.arguments, verdict.user_request)
        except Exception as exc:  # noqa: BLE001 - a bug here must not let the call through
            unnamed = [f"(the scope check failed: {type(exc).__name__}: {exc})"]
        if not unnamed:
            return verdict
        _dt, rt, at = self._thresholds(call.tool)
        ask = at < rt
        d = verdict.probabilities.get(DESTRUCTIVE_ID)
        reason = reasons.beyond_request(unnamed, d if isinstance(d, (int, float)) else None,
                                        effect=verdict.effect,
                                        approve_id=verdict.args_sha256[:12], ask=ask,
                                        risky=risky)
        return replace(verdict, outcome="ask" if ask else "deny", code="beyond_request",
                       reason=reason)

    def _user_request(self, conversation, user_request, run_prompts):
        if user_request is not None and str(user_request).strip():
            return str(user_request), "explicit"
        from ctxgate.gate.request import extract_user_request

        if callable(conversation):
            conversation = conversation()
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
        code, reason = reasons.failure(exc)
        return self._deny(tool, code, reason, **common)

    def _consume_grant(self, tool: str, digest: str) -> bool:
        try:
            if not self.consume_grants:
                return bool(self.grants.has(tool, digest))
            return bool(self.grants.consume(tool, digest))
        except Exception as exc:  # noqa: BLE001 - an unreadable store grants nothing
            log.warning("tool gate: the approvals store could not be read: %s", exc)
            return False

    def _effect(self, call: ToolCall) -> Effect | None:
        from ctxgate.gate.effects.resolve import resolve_effect

        return resolve_effect(call.tool, call.arguments, policy=self.policy,
                              cwd=call.cwd or None, server=call.server,
                              annotations=self.annotations)

    def _thresholds(self, tool: str) -> tuple[float, float, float]:
        """(destructive, requested, ask) thresholds of ``tool`` (a tool rule may override)."""
        p = self.policy
        dt, rt, at = p.destructive_threshold, p.requested_threshold, p.ask_threshold
        if p.tool_rules:
            from ctxgate.gate.effects.config import match_rule

            found = match_rule(tool, p.tool_rules)
            if found is not None:
                rule = found[1]
                dt = rule.destructive_threshold if rule.destructive_threshold is not None else dt
                rt = rule.requested_threshold if rule.requested_threshold is not None else rt
                at = rule.ask_threshold if rule.ask_threshold is not None else at
        return dt, rt, min(at, rt)

    def _judge(self, tool: str, probs: Mapping[str, float], common: dict,
               effect: Effect | None = None, *, learned_counted: bool = False) -> Verdict:
        """Thresholds; a second layer that denies on anything missing, NaN or out of range.

        The effect class enters here. A rule-based destructive class (irreversible, external,
        untrusted code) is destructive whatever P(destructive) says; a rule-based read-only or
        recoverable class is not destructive. A learned class is combined with the model,
        each evidence counted once: when the backend's P(destructive) already came from the
        same learned classifier (the local backend's answer for a function call names that
        effect in its detail: ``learned_counted``), P(destructive) alone decides; otherwise
        (an LLM, a scripted model) the call looks destructive when ``max(P(destructive),
        confidence of a destructive learned class)`` reaches the threshold (a learned class
        never lowers the model's).
        An effect that ``needs_model`` (a secret-looking read, a web request) leaves the
        destructive test to the model. A destructive call then runs only when clearly
        requested; in the grey band
        ``[ask_threshold, requested_threshold)`` the outcome is ``ask``.
        """

        def p(qid: str) -> float | None:
            v = probs.get(qid)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
                return None
            return float(v) if 0.0 <= v <= 1.0 else None

        common = dict(common, probabilities=dict(probs))
        for check in self.checks:
            v = p(check.id)
            if v is None or _at_or_above(v, check.deny_at_or_above):
                return self._deny(tool, "check", reasons.check(
                    check.id, check.question, v, check.deny_at_or_above), **common)
        d, r = p(DESTRUCTIVE_ID), p(REQUESTED_ID)
        dt, rt, at = self._thresholds(tool)
        approve_id = str(common.get("args_sha256", ""))[:12]
        if effect is not None and effect.rule_based and not effect.needs_model:
            looks_destructive = effect.effect.destructive
        else:
            score = d
            if d is not None and effect is not None and effect.effect.destructive \
                    and not learned_counted:
                score = max(d, effect.confidence)
            looks_destructive = score is None or _at_or_above(score, dt)
        clearly_requested = r is not None and r >= rt
        if d is None or r is None:
            return self._deny(tool, "destructive_unrequested", reasons.destructive_unrequested(
                d, r, effect=effect, approve_id=approve_id), **common)
        if looks_destructive and not clearly_requested:
            if at < rt and r >= at:
                fields = {k: v for k, v in common.items() if k != "tool"}
                return Verdict(outcome="ask", code="ask", tool=tool, reason=reasons.ask(
                    d, r, effect=effect, approve_id=approve_id), **fields)
            return self._deny(tool, "destructive_unrequested", reasons.destructive_unrequested(
                d, r, effect=effect, approve_id=approve_id), **common)
        fields = {k: v for k, v in common.items() if k != "tool"}
        return Verdict(outcome="allow", code="allowed", tool=tool,
                       reason=reasons.allowed(d, r, effect), **fields)

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
                                  reason=reasons.approved(verdict.reason))
            elif answer is None:
                verdict = replace(verdict, outcome="ask", code="awaiting_approval",
                                  reason=reasons.awaiting_approval(verdict.reason))
            else:
                verdict = replace(verdict, code="declined", reason=reasons.declined(verdict.reason))
        if verdict.allowed:
            self.consecutive_denials = 0
            return verdict
        self.consecutive_denials += 1
        self.total_denials += 1
        p = self.policy
        if self.consecutive_denials >= p.max_consecutive_denials or \
                self.total_denials >= p.max_total_denials:
            verdict = replace(verdict, escalated=True, reason=reasons.escalated(
                verdict.reason, self.total_denials, self.consecutive_denials))
        return verdict

    # ------------------------------------------------------------------ cache

    def _judged_writes(self, call: ToolCall, effect: Effect | None) -> tuple[str, ...]:
        """The recoverable writes the shell rules judged in a command they otherwise leave to
        the model (:func:`ctxgate.gate.effects.shell.recoverable_writes`): they go into the
        state as ``effect_rules``, so the model knows the writes were looked at (the local
        model then does not floor them as unjudged overwrites; an LLM reads the evidence)."""
        p = self.policy
        if not p.effects or effect is not None:
            return ()
        from ctxgate.gate.effects.shell import recoverable_writes
        from ctxgate.gate.fastpath import shell_command

        command = shell_command(call.tool, call.arguments, p.shell_tools)
        if command is None:
            return ()
        try:
            return recoverable_writes(command, cwd=call.cwd or None)
        except Exception as exc:  # noqa: BLE001 - no hint is the cautious default
            log.warning("tool gate: the shell rules could not judge the writes: %s", exc)
            return ()

    def _cache_key(self, request: str, tool: str, digest: str,
                   effect: Effect | None = None, judged: tuple[str, ...] = ()) -> str:
        # the effect depends on the filesystem (git status), so it is part of the key
        raw = json.dumps([self.fingerprint, request, tool, digest,
                          effect.to_dict() if effect is not None else None, list(judged)],
                         ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()

    def _cache_get(self, key: str) -> Verdict | None:
        if self.policy.cache_ttl_seconds <= 0:
            return None
        try:
            return self._cache.cache_get(key, self.clock())
        except Exception as exc:  # noqa: BLE001 - a broken audit file is a cache miss
            self._audit_failed("read the verdict cache", exc)
            return None

    def _cache_put(self, key: str, verdict: Verdict) -> None:
        """Cache a verdict the model's answers decided; errors and timeouts never get here."""
        ttl = self.policy.cache_ttl_seconds
        if ttl <= 0 or verdict.code not in ("allowed", "destructive_unrequested", "check", "ask"):
            return
        now = self.clock()
        try:
            self._cache.cache_put(key, verdict, now + ttl, now=now)
        except Exception as exc:  # noqa: BLE001 - the verdict stands uncached
            self._audit_failed("write the verdict cache", exc)

    def _audit_failed(self, what: str, exc: Exception) -> None:
        """Log an audit-file failure once per gate (it never changes a verdict)."""
        if not self._audit_warned:
            self._audit_warned = True
            log.warning("gate audit log could not %s (verdicts are unaffected): %s", what, exc)


class _Once:
    """A conversation loader called at most once (the request and the provenance check both
    read it; a hook's loader reads a transcript file)."""

    __slots__ = ("_load", "_value", "_done")

    def __init__(self, load: Callable[[], Sequence[Mapping[str, Any]]]) -> None:
        self._load, self._value, self._done = load, None, False

    def __call__(self) -> Sequence[Mapping[str, Any]]:
        if not self._done:
            self._value, self._done = self._load(), True
        return self._value  # type: ignore[return-value]
