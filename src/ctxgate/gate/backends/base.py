"""The DecisionModel seam: questions in, validated probabilities out.

A decision model answers *probability questions* about a state (the JSON the gate builds:
``{"user_request": ..., "tool_call": {...}}``). The main kind is the **noul**: the probability
that a yes/no question about the state is true. A backend implements one coroutine,
:meth:`DecisionModel.evaluate`, and declares its :class:`Capabilities`; everything else
(thresholds, budgets, fail-closed) lives in the gate. Every answer goes through
:func:`validate_answers` before the gate sees it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from ctxgate.errors import MalformedAnswer, RequestTooLarge

__all__ = [
    "Answer",
    "Capabilities",
    "DecisionModel",
    "Question",
    "QuestionKind",
    "check_capabilities",
    "validate_answers",
]

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
