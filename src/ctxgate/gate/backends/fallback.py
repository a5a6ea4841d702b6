"""FallbackDecisionModel: try decision models in order, under one deadline.

``a.or_(b).or_(c)`` (or ``FallbackDecisionModel.chain(a, b, c)``) asks ``a``; on any
:class:`~ctxgate.errors.DecisionModelError` it asks ``b``, and so on. Rules:

* **One overall deadline** (``timeout_seconds``) covers the whole chain, decided by the
  clock: when it passes, the result is :class:`~ctxgate.errors.DecisionTimeout`. A member's
  own timeout is just a member error — the next member gets the time that is left.
* **Members whose limits the request exceeds are skipped unsent** (question ids, kinds,
  characters, bytes, estimated tokens), and recorded as skipped.
* **A refusal ends the chain** (:class:`~ctxgate.errors.DecisionRefused`): a request one model
  refused is not shopped around. ``RequestTooLarge`` is not a refusal.
* **Every attempt is recorded** in :attr:`FallbackDecisionModel.attempts` (model, outcome,
  whether it was sent, seconds, and the member's spend delta when it keeps a ``spend``).
* **Capabilities are the strictest of the members** (kinds and question ids intersected,
  smallest limits, batching and locality only if all have them), so a gate fitting its
  request to them never builds one a fallback would have to reject.

Privacy: a failing local primary can pass the state on to a hosted fallback.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxgate.errors import DecisionModelError, DecisionRefused, DecisionTimeout, RequestTooLarge
from ctxgate.gate.backends._http import state_question_tokens
from ctxgate.gate.backends.base import (
    Answer,
    Capabilities,
    Question,
    state_size,
    strictest,
    validate_answers,
)

__all__ = ["FallbackAttempt", "FallbackDecisionModel", "from_policy", "unfit_reason"]

DEFAULT_CHAIN_TIMEOUT_SECONDS = 30.0
"""Overall deadline of a chain when none is given (the gate's own timeout replaces it)."""
MAX_ATTEMPT_LOG = 1_000
"""Attempts kept in :attr:`FallbackDecisionModel.attempts` (oldest dropped first)."""


@dataclass(frozen=True, kw_only=True)
class FallbackAttempt:
    """One member's turn in a chain."""

    model_id: str
    outcome: str
    """``"ok"``, ``"skipped"``, or the error type name."""
    sent: bool
    """Whether anything was sent to the member (a skipped member sent nothing)."""
    seconds: float
    message: str = ""
    spend: Mapping[str, int] = field(default_factory=dict)
    """Requests, failures, timeouts and tokens this attempt added to the member's spend."""


def unfit_reason(caps: Capabilities, state: Mapping[str, Any],
                 questions: Sequence[Question]) -> str | None:
    """Why a backend with ``caps`` cannot take this request, or ``None`` when it can.

    Sizes are measured as the gate measures them (:func:`~ctxgate.gate.backends.base.state_size`
    and the same token estimate), so a member is skipped only when the gate's own fit for the
    chain's strictest limits could not have made the request fit it.
    """
    for q in questions:
        if q.kind not in caps.kinds:
            return f"answers no {q.kind} questions"
        if caps.question_ids is not None and q.id not in caps.question_ids:
            return f"does not answer question {q.id!r}"
    try:
        chars, nbytes = state_size(state)
    except (TypeError, ValueError):
        return "the state is not JSON-serializable"
    if caps.max_request_chars is not None and chars > caps.max_request_chars:
        return f"state is {chars} characters, over its {caps.max_request_chars}"
    if caps.max_request_bytes is not None and nbytes > caps.max_request_bytes:
        return f"state is {nbytes} bytes, over its {caps.max_request_bytes}"
    if caps.max_request_tokens is not None:
        tokens = state_question_tokens(state, questions, batching=caps.batching)
        if tokens > caps.max_request_tokens:
            return f"about {tokens} tokens (estimate), over its {caps.max_request_tokens}"
    return None


def _spend_snapshot(model: Any) -> dict[str, int]:
    spend = getattr(model, "spend", None)
    if spend is None:
        return {}
    return {k: v for k, v in vars(spend).items() if isinstance(v, int) and not isinstance(v, bool)}


class Chainable:
    """Gives a backend ``.or_(other)``: a fallback chain of this model, then ``other``."""

    def or_(self, other: Any) -> FallbackDecisionModel:
        """A fallback chain: this model, then ``other`` on errors."""
        return FallbackDecisionModel.chain(self, other)


class FallbackDecisionModel:
    """Members in order on errors, one deadline, refusals final; see the module docstring."""

    def __init__(self, members: Sequence[Any], *,
                 timeout_seconds: float = DEFAULT_CHAIN_TIMEOUT_SECONDS) -> None:
        flat: list[Any] = []
        for m in members:
            flat.extend(m.members if isinstance(m, FallbackDecisionModel) else [m])
        if not flat:
            raise ValueError("a fallback chain needs at least one decision model")
        self.members: tuple[Any, ...] = tuple(flat)
        self.timeout_seconds = timeout_seconds
        self.attempts: list[FallbackAttempt] = []

    @classmethod
    def chain(cls, *members: Any, timeout_seconds: float | None = None) -> FallbackDecisionModel:
        """Flatten ``members`` (chains included) into one chain."""
        if timeout_seconds is None:
            timeout_seconds = max((m.timeout_seconds for m in members
                                   if isinstance(m, FallbackDecisionModel)),
                                  default=DEFAULT_CHAIN_TIMEOUT_SECONDS)
        return cls(members, timeout_seconds=timeout_seconds)

    def or_(self, other: Any) -> FallbackDecisionModel:
        """This chain, then ``other``."""
        return FallbackDecisionModel.chain(self, other, timeout_seconds=self.timeout_seconds)

    def __repr__(self) -> str:
        return f"FallbackDecisionModel({list(self.members)!r})"

    @property
    def capabilities(self) -> Capabilities:
        return strictest([m.capabilities for m in self.members])

    def _record(self, attempt: FallbackAttempt) -> None:
        self.attempts.append(attempt)
        if len(self.attempts) > MAX_ATTEMPT_LOG:
            del self.attempts[: len(self.attempts) - MAX_ATTEMPT_LOG]

    async def evaluate(self, state: Mapping[str, Any],
                       questions: Sequence[Question]) -> list[Answer]:
        """Answers from the first member that gives valid ones.

        Raises:
            DecisionTimeout: the chain's deadline passed.
            DecisionRefused: a member refused (the chain stops there).
            RequestTooLarge: every member was skipped because the request exceeds its limits.
            DecisionModelError: every member failed; the message lists each attempt.
        """
        deadline = time.monotonic() + self.timeout_seconds
        failures: list[str] = []
        all_too_large = True
        for member in self.members:
            caps = member.capabilities
            reason = unfit_reason(caps, state, questions)
            if reason is not None:
                self._record(FallbackAttempt(model_id=caps.model_id, outcome="skipped",
                                             sent=False, seconds=0.0, message=reason))
                failures.append(f"{caps.model_id}: skipped ({reason})")
                all_too_large &= "over its" in reason
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            before = _spend_snapshot(member)
            t0 = time.monotonic()
            try:
                answers = await asyncio.wait_for(member.evaluate(state, questions), remaining)
                validated = validate_answers(questions, answers)
            except Exception as exc:  # a member's bug must still fail closed, not crash
                if isinstance(exc, DecisionModelError):
                    err: DecisionModelError = exc
                elif isinstance(exc, TimeoutError):
                    err = DecisionTimeout(f"{caps.model_id}: no answer within the chain's "
                                          f"remaining {remaining:.2f} s")
                else:
                    err = DecisionModelError(f"{caps.model_id} raised {type(exc).__name__}: {exc}")
                after = _spend_snapshot(member)
                self._record(FallbackAttempt(
                    model_id=caps.model_id, outcome=type(err).__name__,
                    sent=not isinstance(err, RequestTooLarge), seconds=time.monotonic() - t0,
                    message=str(err), spend={k: after[k] - before.get(k, 0) for k in after}))
                if isinstance(err, DecisionRefused):
                    raise err from (None if err is exc else exc)
                all_too_large &= isinstance(err, RequestTooLarge)
                failures.append(f"{caps.model_id}: {type(err).__name__}: {err}")
                if time.monotonic() >= deadline:
                    break
                continue
            after = _spend_snapshot(member)
            self._record(FallbackAttempt(model_id=caps.model_id, outcome="ok", sent=True,
                                         seconds=time.monotonic() - t0,
                                         spend={k: after[k] - before.get(k, 0) for k in after}))
            return [validated[q.id] for q in questions]
        listing = "; ".join(failures) or "no member was tried"
        if time.monotonic() >= deadline:
            raise DecisionTimeout(f"the decision chain did not answer within "
                                  f"{self.timeout_seconds:.2f} s ({listing})")
        if all_too_large:
            raise RequestTooLarge(f"the request exceeds every decision model's limits "
                                  f"({listing}); nothing was sent")
        raise DecisionModelError(f"every decision model failed ({listing})")


def from_policy(policy: Any, environ: Mapping[str, str] | None = None) -> FallbackDecisionModel:
    """The chain ``[gate] fallback_backends`` names, under ``[gate] timeout_seconds``.

    Raises:
        ConfigError: an empty chain, an unknown or nested ``fallback`` member.
    """
    import importlib

    from ctxgate.errors import ConfigError

    builtin = {"local": "ctxgate.gate.backends.local",
               "openai": "ctxgate.gate.backends.openai_logprobs",
               "structured": "ctxgate.gate.backends.structured"}
    names = tuple(policy.fallback_backends)
    if not names:
        raise ConfigError("[gate] fallback_backends is empty; list members, e.g. "
                          '["openai", "local"]')
    members = []
    for name in names:
        if name not in builtin:
            raise ConfigError(f"[gate] fallback_backends member {name!r} is not one of "
                              f"{sorted(builtin)}")
        factory = importlib.import_module(builtin[name]).from_policy
        members.append(factory(policy) if name == "local" else factory(policy, environ))
    return FallbackDecisionModel(members, timeout_seconds=policy.timeout_seconds)
