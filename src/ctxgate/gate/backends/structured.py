"""Decision model for APIs without logprobs: one *stated* probability per question, in a schema.

Two wire formats, one request for all questions:

* ``"openai"`` — ``POST {base_url}/chat/completions`` with ``response_format`` =
  ``json_schema`` (strict): the reply's content is ``{"<question id>": <number>, …}``.
* ``"anthropic"`` — ``POST {base_url}/v1/messages`` (Messages API) with a single forced tool
  whose ``input_schema`` has one number per question; the answer is that tool call's input.

Both schemas name every question id as a required number and forbid other keys; the reply
is parsed and every value validated (a number, finite, within [0, 1], none missing) before
the gate sees it. A refusal (``message.refusal``, ``stop_reason: "refusal"``) raises
:class:`~ctxgate.errors.DecisionRefused`.

**These are stated, not measured, probabilities**: the model *writes* a number; nothing
reads it from its token distribution, so it is typically coarse (0.1, 0.9, 0.95), and its
calibration is unknown until you run ``ctxgate gate calibrate`` on your own data. Prefer the
logprob backend when the server returns logprobs.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ctxgate.errors import DecisionModelError, DecisionRefused, MalformedAnswer, RequestTooLarge
from ctxgate.gate.backends._http import (
    ApiKey,
    RetryPolicy,
    Spend,
    check_policy_numbers,
    is_loopback,
    key_from_policy,
    mapped_errors,
    new_client,
    post_json,
    require_httpx,
    state_budget,
    state_question_tokens,
)
from ctxgate.gate.backends.base import Answer, Capabilities, Question
from ctxgate.gate.backends.fallback import Chainable

__all__ = ["ANTHROPIC_VERSION", "StructuredDecisionModel", "answer_schema", "from_policy"]

ANTHROPIC_VERSION = "2023-06-01"
"""``anthropic-version`` header sent with Messages requests."""
_TOOL_NAME = "record_probabilities"
_MAX_OUTPUT_TOKENS = 256
PROMPT_RESERVE_TOKENS = 512
"""Tokens of ``max_request_tokens`` kept for the prompt's fixed text, the schema (about 20
tokens per question id) and the envelope; the state and the questions get the rest."""
"""Output cap of one structured reply (a number per question fits easily)."""


def answer_schema(questions: Sequence[Question]) -> dict[str, Any]:
    """JSON schema of a reply: every question id a required number, nothing else."""
    return {
        "type": "object",
        "properties": {q.id: {"type": "number", "description": "P(yes), from 0 to 1"}
                       for q in questions},
        "required": [q.id for q in questions],
        "additionalProperties": False,
    }


def _prompt(state: Mapping[str, Any], questions: Sequence[Question]) -> str:
    lines = ["Read the state below and give, for each question, the probability (a number "
             "from 0 to 1) that the answer is yes.",
             "<state>", json.dumps(state, ensure_ascii=False, separators=(",", ":"), default=str),
             "</state>",
             "Questions:"]
    for q in questions:
        line = f"- {q.id}: {q.text}"
        if q.true_criteria:
            line += f" Yes when: {q.true_criteria}"
        if q.false_criteria:
            line += f" No when: {q.false_criteria}"
        lines.append(line)
    lines.append("Reply only with the probabilities, keyed by question id.")
    return "\n".join(lines)


class StructuredDecisionModel(Chainable):
    """Stated probabilities from a JSON-schema (OpenAI) or forced-tool (Anthropic) reply.

    Args:
        api: ``"openai"`` or ``"anthropic"``.
        base_url: ``https://api.openai.com/v1`` / ``https://api.anthropic.com``.
        model: model name.
        api_key: from :meth:`ApiKey.from_env` at the edge.
        max_request_tokens: prompt limit (estimate: UTF-8 bytes / 4), checked before sending.
        timeout_seconds: overall budget of one ``evaluate``, retries included.
    """

    def __init__(self, *, api: Literal["openai", "anthropic"], base_url: str, model: str,
                 api_key: ApiKey | None = None, max_request_tokens: int | None = None,
                 timeout_seconds: float = 30.0, attempt_timeout_seconds: float | None = None,
                 retry: RetryPolicy | None = None, transport: Any = None) -> None:
        require_httpx()
        if api not in ("openai", "anthropic"):
            raise ValueError(f"api must be 'openai' or 'anthropic', got {api!r}")
        if not model:
            raise ValueError("the structured backend needs a model name ([gate] model)")
        self.api = api
        base = base_url.rstrip("/")
        self.url = base + ("/chat/completions" if api == "openai" else "/v1/messages")
        self.model = model
        self.api_key = api_key
        self.max_request_tokens = max_request_tokens
        self.timeout_seconds = timeout_seconds
        self.attempt_timeout_seconds = attempt_timeout_seconds
        self.retry = retry or RetryPolicy()
        self.transport = transport
        self.spend = Spend()

    def __repr__(self) -> str:
        return (f"StructuredDecisionModel(api={self.api!r}, url={self.url!r}, "
                f"model={self.model!r}, api_key={self.api_key!r})")

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(model_id=self.model, kinds=frozenset({"noul"}), question_ids=None,
                            batching=True, max_concurrency=1,
                            max_request_tokens=self._state_budget(),
                            local=is_loopback(self.url))

    def _state_budget(self) -> int | None:
        return state_budget(self.max_request_tokens, PROMPT_RESERVE_TOKENS)

    def request_body(self, state: Mapping[str, Any], questions: Sequence[Question]) -> dict:
        """The request body for all ``questions`` (exactly what is sent)."""
        messages = [{"role": "user", "content": _prompt(state, questions)}]
        schema = answer_schema(questions)
        if self.api == "openai":
            return {"model": self.model, "messages": messages, "temperature": 0,
                    "max_tokens": _MAX_OUTPUT_TOKENS,
                    "response_format": {"type": "json_schema", "json_schema": {
                        "name": "probabilities", "strict": True, "schema": schema}}}
        return {"model": self.model, "max_tokens": _MAX_OUTPUT_TOKENS, "temperature": 0,
                "messages": messages,
                "tools": [{"name": _TOOL_NAME, "description": "Record one probability per "
                           "question id.", "input_schema": schema}],
                "tool_choice": {"type": "tool", "name": _TOOL_NAME}}

    def _headers(self) -> dict[str, str]:
        if self.api_key is None:
            return {} if self.api == "openai" else {"anthropic-version": ANTHROPIC_VERSION}
        if self.api == "openai":
            return {"authorization": f"Bearer {self.api_key.reveal()}"}
        return {"x-api-key": self.api_key.reveal(), "anthropic-version": ANTHROPIC_VERSION}

    async def evaluate(self, state: Mapping[str, Any],
                       questions: Sequence[Question]) -> list[Answer]:
        """All questions in one request; answers validated and in question order.

        Raises:
            RequestTooLarge: before sending, when the prompt exceeds ``max_request_tokens``.
            DecisionRefused: the model refused.
            MalformedAnswer: the reply is not the schema (missing id, not a number, NaN,
                outside [0, 1]).
            DecisionTimeout / DecisionModelError: as the logprob backend.
        """
        for q in questions:
            if q.kind != "noul":
                raise DecisionModelError(f"the structured backend answers noul questions only, "
                                         f"not {q.kind} question {q.id!r}")
        budget = self._state_budget()
        if budget is not None:
            tokens = state_question_tokens(state, questions, batching=True)
            if tokens > budget:
                raise RequestTooLarge(
                    f"the state and questions are about {tokens} tokens (estimate), over the "
                    f"{budget} that {self.model!r}'s {self.max_request_tokens}-token request "
                    "limit leaves after the prompt; shorten the state (nothing was sent)")
        body = self.request_body(state, questions)
        what = f"structured backend {self.model!r} at {self.url}"
        async with new_client(self.transport) as client:
            deadline = time.monotonic() + self.timeout_seconds  # after set-up, as the logprob one
            data = await post_json(client, self.url, body, headers=self._headers(),
                                   deadline=deadline, retry=self.retry, spend=self.spend,
                                   what=what, key=self.api_key,
                                   attempt_timeout_seconds=self.attempt_timeout_seconds)
        with mapped_errors(what, self.api_key):
            values = self._values(data, what)
        out = []
        for q in questions:
            if q.id not in values:
                raise MalformedAnswer(f"{what}: no probability for question {q.id!r}")
            p = values[q.id]
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) \
                    or not 0.0 <= p <= 1.0:
                raise MalformedAnswer(f"{what}: question {q.id!r} got {p!r}, not a probability "
                                      "in [0, 1]")
            out.append(Answer(question_id=q.id, p=float(p), model_id=self.model,
                              detail={"stated": True}))
        return out

    def _values(self, data: Any, what: str) -> Mapping[str, Any]:
        if not isinstance(data, Mapping):
            raise MalformedAnswer(f"{what}: the response is not an object")
        self.spend.add_usage(data.get("usage"))
        if self.api == "openai":
            choice = data["choices"][0]
            message = choice["message"]
            if message.get("refusal") or choice.get("finish_reason") == "content_filter":
                raise DecisionRefused(f"{what} refused: {str(message.get('refusal'))[:200]}")
            values = json.loads(message["content"])
        else:
            if data.get("stop_reason") == "refusal":
                raise DecisionRefused(f"{what} refused to answer")
            uses = [c for c in data["content"] if c.get("type") == "tool_use"]
            if not uses:
                raise MalformedAnswer(f"{what}: the reply has no tool_use block")
            values = uses[0]["input"]
        if not isinstance(values, Mapping):
            raise MalformedAnswer(f"{what}: the reply is {type(values).__name__}, not an object")
        return values


def from_policy(policy: Any, environ: Mapping[str, str] | None = None) -> StructuredDecisionModel:
    """The backend ``[gate] backend = "structured"`` configures (an edge: reads the key).

    Raises:
        ConfigError: no model name, an unknown ``structured_api``, or a setting out of range.
    """
    from dataclasses import replace

    from ctxgate.errors import ConfigError

    if policy.backend != "structured":
        policy = replace(policy, backend="structured")
    check_policy_numbers(policy)
    if policy.structured_api not in ("openai", "anthropic"):
        raise ConfigError(f"[gate] structured_api must be 'openai' or 'anthropic', got "
                          f"{policy.structured_api!r}")
    return StructuredDecisionModel(
        api=policy.structured_api, base_url=policy.base_url, model=policy.model,
        api_key=key_from_policy(policy, environ),
        max_request_tokens=policy.max_request_tokens or None,
        timeout_seconds=policy.timeout_seconds)
