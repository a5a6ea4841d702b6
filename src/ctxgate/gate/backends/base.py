"""The DecisionModel seam: questions in, validated probabilities out.

A decision model answers *probability questions* about a state (the JSON the gate builds:
``{"user_request": ..., "tool_call": {...}}``). The main kind is the **noul**: the probability
that a yes/no question about the state is true. A backend implements one coroutine,
:meth:`DecisionModel.evaluate`, and declares its :class:`Capabilities`; everything else
(thresholds, budgets, fail-closed) lives in the gate. Every answer goes through
:func:`validate_answers` before the gate sees it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from ctxgate.errors import MalformedAnswer, RequestTooLarge

__all__ = [
    "ESTIMATE_BYTES_PER_TOKEN",
    "Answer",
    "Capabilities",
    "DecisionModel",
    "Question",
    "QuestionKind",
    "StateLimits",
    "check_capabilities",
    "question_bytes",
    "serialize_state",
    "state_limits",
    "state_size",
    "strictest",
    "validate_answers",
]

ESTIMATE_BYTES_PER_TOKEN = 4
"""UTF-8 bytes per token of the labelled estimate used for ``max_request_tokens``."""

QuestionKind = Literal["noul", "choice", "score"]


@dataclass(frozen=True, kw_only=True)
class Question:
    """One question asked about the state."""

    id: str
    """Stable identifier (``"destructive"``, ``"requested"``, or a check id)."""
    text: str
    """The yes/no question, in plain words."""
    kind: QuestionKind = "noul"
    """``"noul"``: the answer is P(yes) in [0, 1]."""
    true_criteria: str | None = None
    """When the answer is yes (shown to the model with the label)."""
    false_criteria: str | None = None
    """When the answer is no."""


@dataclass(frozen=True, kw_only=True)
class Answer:
    """A backend's answer to one question."""

    question_id: str
    p: float
    """P(yes) for a noul, in [0, 1]."""
    model_id: str = ""
    """The model that answered (for the audit log)."""
    detail: Mapping[str, Any] | None = None
    """Backend-specific evidence (label mass, rule that fired ...), JSON-serializable."""


@dataclass(frozen=True, kw_only=True)
class Capabilities:
    """What a backend can take; the gate checks a request against it before sending."""

    model_id: str
    kinds: frozenset[str] = frozenset({"noul"})
    question_ids: frozenset[str] | None = None
    """Question ids it can answer; ``None`` means any question text."""
    batching: bool = False
    """Whether several questions go in one request."""
    max_concurrency: int = 1
    max_request_tokens: int | None = None
    """Largest request (state + one question + prompt), tokens as the backend counts them."""
    max_request_chars: int | None = None
    """Largest serialized state in code points, when the backend limits characters."""
    max_request_bytes: int | None = None
    """Largest serialized state in UTF-8 bytes, when the backend limits bytes."""
    local: bool = True
    """True when nothing leaves this machine."""


@runtime_checkable
class DecisionModel(Protocol):
    """A decision backend. Implementations need not inherit from this class."""

    @property
    def capabilities(self) -> Capabilities: ...

    async def evaluate(
        self, state: Mapping[str, Any], questions: Sequence[Question]
    ) -> Sequence[Answer]:
        """Answer every question about ``state``.

        Raises:
            DecisionModelError: (or a subclass) on any failure; never returns partial junk.
            RequestTooLarge: the request exceeds this backend's limits (nothing was sent).
        """
        ...


def serialize_state(state: Any) -> str:
    """The canonical serialization of a state: compact JSON, key order kept, non-ASCII raw.

    Every size in this module (``max_request_chars``, ``max_request_bytes``, the token
    estimate) is measured on this text; JSON escapes count (a newline is two characters).
    """
    return json.dumps(state, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def state_size(state: Any) -> tuple[int, int]:
    """``(code points, UTF-8 bytes)`` of :func:`serialize_state`."""
    text = serialize_state(state)
    if text.isascii():
        return len(text), len(text)
    return len(text), len(text.encode("utf-8", "surrogatepass"))


def question_bytes(q: Question) -> int:
    """Bytes a question adds to a request: ``json.dumps([text, true, false])`` (ASCII JSON)."""
    return len(json.dumps([q.text, q.true_criteria, q.false_criteria]))


@dataclass(frozen=True, kw_only=True)
class StateLimits:
    """The largest state a backend accepts with given questions (``None``: no limit)."""

    max_chars: int | None = None
    """Code points of the serialized state."""
    max_bytes: int | None = None
    """UTF-8 bytes of the serialized state (token limits are folded in here)."""

    def allows(self, chars: int, nbytes: int) -> bool:
        """Whether a state of ``chars`` code points and ``nbytes`` bytes is within the limits."""
        return (self.max_chars is None or chars <= self.max_chars) and (
            self.max_bytes is None or nbytes <= self.max_bytes
        )


def state_limits(caps: Capabilities, questions: Sequence[Question]) -> StateLimits:
    """The state limits ``caps`` imposes when asked ``questions``.

    A token limit becomes a byte limit through the labelled estimate
    ``tokens = ceil(bytes / ESTIMATE_BYTES_PER_TOKEN)`` over the state plus the questions sent
    with it: all of them for a batching backend, else the longest (a backend that asks one
    question per request sends each with the whole state).
    """
    max_bytes = caps.max_request_bytes
    if caps.max_request_tokens is not None:
        qbytes = [question_bytes(q) for q in questions] or [0]
        extra = sum(qbytes) if caps.batching else max(qbytes)
        by_tokens = caps.max_request_tokens * ESTIMATE_BYTES_PER_TOKEN - extra
        max_bytes = by_tokens if max_bytes is None else min(max_bytes, by_tokens)
    return StateLimits(max_chars=caps.max_request_chars, max_bytes=max_bytes)


def _min_opt(values: Sequence[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def strictest(caps: Sequence[Capabilities]) -> Capabilities:
    """The capabilities every member of a fallback chain shares: the strictest limits.

    Fitting a call to these means no member of the chain has to skip it. The model id is the
    members' ids joined with ``" -> "``.
    """
    if not caps:
        raise ValueError("strictest() needs at least one Capabilities")
    if len(caps) == 1:
        return caps[0]
    kinds = frozenset.intersection(*(frozenset(c.kinds) for c in caps))
    ids = [c.question_ids for c in caps if c.question_ids is not None]
    return Capabilities(
        model_id=" -> ".join(c.model_id for c in caps),
        kinds=kinds,
        question_ids=frozenset.intersection(*ids) if ids else None,
        batching=all(c.batching for c in caps),
        max_concurrency=min(c.max_concurrency for c in caps),
        max_request_tokens=_min_opt([c.max_request_tokens for c in caps]),
        max_request_chars=_min_opt([c.max_request_chars for c in caps]),
        max_request_bytes=_min_opt([c.max_request_bytes for c in caps]),
        local=all(c.local for c in caps),
    )


def check_capabilities(caps: Capabilities, questions: Sequence[Question]) -> None:
    """Raise ``ValueError`` when a backend with ``caps`` cannot answer ``questions``.

    Used at gate construction, so a check the backend cannot answer is rejected at start-up,
    not denied call by call.
    """
    for q in questions:
        if q.kind not in caps.kinds:
            raise ValueError(
                f"decision model {caps.model_id!r} cannot answer {q.kind} question {q.id!r}; "
                f"it answers {sorted(caps.kinds)}"
            )
        if caps.question_ids is not None and q.id not in caps.question_ids:
            raise ValueError(
                f"decision model {caps.model_id!r} cannot answer question {q.id!r}; it answers "
                f"only {sorted(caps.question_ids)} — use an LLM backend for custom checks"
            )


def validate_answers(
    questions: Sequence[Question], answers: Sequence[Answer] | Any
) -> dict[str, Answer]:
    """Check answers and return them by question id; answers nobody asked for are dropped.

    Raises:
        MalformedAnswer: an answer is missing, duplicated, not a number, NaN/inf or outside
            [0, 1]; the message names the question and the value.
    """
    asked = {q.id for q in questions}
    by_id: dict[str, Answer] = {}
    try:
        items = list(answers)
    except TypeError as exc:
        raise MalformedAnswer(f"decision model returned {type(answers).__name__}, not a list of answers") from exc
    for a in items:
        if not isinstance(a, Answer):
            raise MalformedAnswer(f"decision model returned {type(a).__name__}, not an Answer")
        if a.question_id not in asked:
            continue
        if a.question_id in by_id:
            raise MalformedAnswer(f"decision model answered question {a.question_id!r} twice")
        p = a.p
        if isinstance(p, bool) or not isinstance(p, (int, float)):
            raise MalformedAnswer(f"answer to {a.question_id!r} is {p!r}, not a probability")
        if not math.isfinite(p):
            raise MalformedAnswer(f"answer to {a.question_id!r} is {p!r}, not a finite probability")
        if not 0.0 <= p <= 1.0:
            raise MalformedAnswer(f"answer to {a.question_id!r} is {p!r}, outside [0, 1]")
        by_id[a.question_id] = a
    missing = sorted(asked - set(by_id))
    if missing:
        raise MalformedAnswer(f"decision model gave no answer to {missing}")
    return by_id


# Re-exported so backends can raise it without importing errors separately.
RequestTooLarge = RequestTooLarge
