"""Decision model over any OpenAI-compatible chat-completions server that returns logprobs.

One client for OpenAI, vLLM, llama.cpp's server (and llama-cpp-python's), Ollama, LM Studio
and SGLang. Each question is one completion — ``max_tokens`` 1, ``temperature`` 0,
``logprobs`` with ``top_logprobs`` — over a prompt that shows the state and the question with
two labels, ``A: Yes`` / ``B: No`` (with the criteria when the question has them). P(yes) is
read from the first generated token's distribution over the labels, never from the text:

* top tokens are trimmed, upper-cased and stripped of trailing ``:``/``.``/``)``; ``A``
  (or ``YES``) counts for yes, ``B`` (or ``NO``) for no, and equal labels are summed;
* when the labels cover less than ``min_label_mass`` (default 0.5) of the first-token mass —
  a thinking model emitting ``<think>``, an answer in words — the answer is rejected
  (:class:`~ctxgate.errors.MalformedAnswer`) and the gate fails closed;
* a label missing from the top list gets ``min(smallest reported p, 1 − Σ reported)``;
* temperature scaling ``p^(1/T)`` with the calibrated ``T`` (``ctxgate gate calibrate``), then
  ``P(yes) = p_A / (p_A + p_B)``.

Requests are checked against ``max_request_tokens`` (estimate: UTF-8 bytes / 4) before
anything is sent; questions go out concurrently up to ``max_concurrency``, and after the first
failure no new request starts. Thinking can be switched off with
``chat_template_kwargs.enable_thinking = false`` (``disable_thinking=True``) — not the default,
because OpenAI rejects unknown fields.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

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

__all__ = ["DEFAULT_TOP_LOGPROBS", "MIN_LABEL_MASS", "OpenAILogprobModel", "from_policy",
           "label_probability", "render_prompt"]

MIN_LABEL_MASS = 0.5
"""Least share of the first token's probability the labels must cover."""
DEFAULT_TOP_LOGPROBS = 20
"""Alternatives requested per token (OpenAI's maximum)."""
DEFAULT_TIMEOUT_SECONDS = 30.0
"""Overall budget of one ``evaluate`` call, retries included (the gate's own timeout wraps it)."""
_ALIASES = {"A": "A", "YES": "A", "B": "B", "NO": "B"}
PROMPT_RESERVE_TOKENS = 128
"""Tokens of ``max_request_tokens`` kept for the prompt's fixed text and the JSON envelope;
the state and the question get the rest (``capabilities.max_request_tokens``)."""


def render_prompt(state: Mapping[str, Any], question: Question) -> str:
    """The one user message for ``question`` about ``state`` (deterministic)."""
    yes = "A: Yes" + (f" — {question.true_criteria}" if question.true_criteria else "")
    no = "B: No" + (f" — {question.false_criteria}" if question.false_criteria else "")
    body = json.dumps(state, ensure_ascii=False, separators=(",", ":"), default=str)
    return (
        "Read the state below, then answer the question with one label.\n"
        f"<state>\n{body}\n</state>\n"
        f"Question: {question.text}\n"
        f"Labels:\n{yes}\n{no}\n"
        "Answer with a single label, A or B, and nothing else."
    )


def _first_token_alternatives(data: Any) -> list[tuple[str, float]]:
    """(token, logprob) of the first generated token, from either logprob wire format."""
    choice = data["choices"][0]
    lp = choice.get("logprobs")
    if not isinstance(lp, Mapping):
        raise MalformedAnswer("the response has no logprobs; the server must support "
                              "logprobs/top_logprobs (OpenAI-compatible chat completions)")
    content = lp.get("content")
    if isinstance(content, list) and content:  # OpenAI chat format
        first = content[0]
        tops = first.get("top_logprobs") or [{"token": first["token"],
                                              "logprob": first["logprob"]}]
        return [(str(t["token"]), _num(t["logprob"])) for t in tops]
    tops = lp.get("top_logprobs")  # legacy completion format: [{token: logprob}, ...]
    if isinstance(tops, list) and tops and isinstance(tops[0], Mapping):
        return [(str(tok), _num(v)) for tok, v in tops[0].items()]
    raise MalformedAnswer("the response's logprobs hold no first-token alternatives")


def _num(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise MalformedAnswer(f"a logprob is {v!r}, not a number")
    if math.isnan(v) or v > 1e-6:
        raise MalformedAnswer(f"a logprob is {v!r}; logprobs are finite and at most 0")
    return float(v)


def label_probability(alternatives: Sequence[tuple[str, float]], *, temperature: float = 1.0,
                      min_label_mass: float = MIN_LABEL_MASS) -> tuple[float, dict[str, Any]]:
    """P(yes) from the first token's alternatives, and the evidence for the audit log.

    Raises:
        MalformedAnswer: the labels cover less than ``min_label_mass`` of the mass.
    """
    mass = {"A": 0.0, "B": 0.0}
    reported = 0.0
    smallest = 1.0
    for token, logprob in alternatives:
        p = math.exp(logprob)
        reported += p
        smallest = min(smallest, p)
        label = _ALIASES.get(token.strip().upper().rstrip(":.)"))
        if label:
            mass[label] += p
    covered = mass["A"] + mass["B"]
    top = [t for t, _ in sorted(alternatives, key=lambda x: -x[1])[:3]]
    if covered < min_label_mass:
        raise MalformedAnswer(
            f"the labels A/B cover {covered:.2f} of the first token's probability (need "
            f"{min_label_mass:.2f}); top tokens {top!r} — a thinking model or an answer in "
            "words; disable thinking or use another model")
    fill = max(min(smallest, 1.0 - reported), 1e-12)
    pa, pb = (mass[k] if mass[k] > 0 else fill for k in ("A", "B"))
    if temperature != 1.0:
        pa, pb = pa ** (1.0 / temperature), pb ** (1.0 / temperature)
    p_yes = pa / (pa + pb)
    return min(1.0, max(0.0, p_yes)), {"label_mass": round(covered, 6), "top_tokens": top}


class OpenAILogprobModel(Chainable):
    """Decision model over ``{base_url}/chat/completions`` with first-token label logprobs.

    Args:
        base_url: server root up to the API version, e.g. ``http://127.0.0.1:8080/v1``
            (``/v1`` is added to a bare host).
        model: the model name the server expects.
        api_key: from :meth:`ApiKey.from_env` at the edge; ``None`` sends no Authorization.
        temperature: calibration temperature T (> 0) applied as ``p^(1/T)``.
        disable_thinking: send ``chat_template_kwargs: {enable_thinking: false}``.
        extra_body: merged into each request body (required fields win).
        max_concurrency: completions in flight at once.
        max_request_tokens: largest prompt (estimate: UTF-8 bytes / 4); ``None``: unchecked.
        timeout_seconds: overall budget of one ``evaluate``, retries included.
        attempt_timeout_seconds: cap of one HTTP attempt within that budget.
        transport: an ``httpx`` async transport (tests); default: a real connection pool.
    """

    def __init__(self, *, base_url: str, model: str, api_key: ApiKey | None = None,
                 temperature: float = 1.0, disable_thinking: bool = False,
                 extra_body: Mapping[str, Any] | None = None, max_concurrency: int = 8,
                 top_logprobs: int = DEFAULT_TOP_LOGPROBS, min_label_mass: float = MIN_LABEL_MASS,
                 max_request_tokens: int | None = None,
                 timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
                 attempt_timeout_seconds: float | None = None,
                 retry: RetryPolicy | None = None, transport: Any = None) -> None:
        require_httpx()
        if not model:
            raise ValueError("the logprob backend needs a model name ([gate] model)")
        if not (temperature > 0 and math.isfinite(temperature)):
            raise ValueError(f"temperature must be a positive number, got {temperature}")
        if not 0.0 < min_label_mass <= 1.0:
            raise ValueError(f"min_label_mass must be in (0, 1], got {min_label_mass}")
        base = base_url.rstrip("/")
        if base.count("/") <= 2:  # scheme://host[:port] only
            base += "/v1"
        self.url = base + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.temperature = temperature
        self.disable_thinking = disable_thinking
        self.extra_body = dict(extra_body or {})
        self.max_concurrency = max(1, max_concurrency)
        self.top_logprobs = top_logprobs
        self.min_label_mass = min_label_mass
        self.max_request_tokens = max_request_tokens
        self.timeout_seconds = timeout_seconds
        self.attempt_timeout_seconds = attempt_timeout_seconds
        self.retry = retry or RetryPolicy()
        self.transport = transport
        self.spend = Spend()

    def __repr__(self) -> str:
        return f"OpenAILogprobModel(url={self.url!r}, model={self.model!r}, api_key={self.api_key!r})"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(model_id=self.model, kinds=frozenset({"noul"}), question_ids=None,
                            batching=False, max_concurrency=self.max_concurrency,
                            max_request_tokens=self._state_budget(),
                            local=is_loopback(self.url))

    def _state_budget(self) -> int | None:
        return state_budget(self.max_request_tokens, PROMPT_RESERVE_TOKENS)

    def request_body(self, state: Mapping[str, Any], question: Question) -> dict[str, Any]:
        """The chat-completions body for one question (exactly what is sent)."""
        body: dict[str, Any] = dict(self.extra_body)
        if self.disable_thinking:
            kwargs = dict(body.get("chat_template_kwargs") or {})
            kwargs["enable_thinking"] = False
            body["chat_template_kwargs"] = kwargs
        body.update({
            "model": self.model,
            "messages": [{"role": "user", "content": render_prompt(state, question)}],
            "max_tokens": 1, "temperature": 0, "logprobs": True,
            "top_logprobs": self.top_logprobs, "stream": False,
        })
        return body

    def check_limits(self, state: Mapping[str, Any], questions: Sequence[Question]) -> None:
        """Raise :class:`RequestTooLarge` when a question's request exceeds the token limit.

        Measured as the gate measures (state + question, UTF-8 bytes / 4) against
        ``capabilities.max_request_tokens`` (the limit minus :data:`PROMPT_RESERVE_TOKENS`).
        """
        budget = self._state_budget()
        if budget is None:
            return
        for q in questions:
            tokens = state_question_tokens(state, [q], batching=False)
            if tokens > budget:
                raise RequestTooLarge(
                    f"question {q.id!r}: the state and question are about {tokens} tokens "
                    f"(estimate), over the {budget} that {self.model!r}'s "
                    f"{self.max_request_tokens}-token request limit leaves after the prompt; "
                    "shorten the state (nothing was sent)")

    async def evaluate(self, state: Mapping[str, Any],
                       questions: Sequence[Question]) -> list[Answer]:
        """One completion per question; answers in question order.

        Raises:
            RequestTooLarge: before sending, when a request exceeds ``max_request_tokens``.
            DecisionTimeout: the overall budget passed.
            DecisionRefused: the server refused (a refusal field, ``content_filter``).
            MalformedAnswer: no logprobs, NaN, or labels under ``min_label_mass``.
            DecisionModelError: HTTP or transport failures after retries.
        """
        for q in questions:
            if q.kind != "noul":
                raise DecisionModelError(f"the logprob backend answers noul questions only, not "
                                         f"{q.kind} question {q.id!r}")
        self.check_limits(state, questions)
        headers = {}
        if self.api_key is not None:
            headers["authorization"] = f"Bearer {self.api_key.reveal()}"
        sem = asyncio.Semaphore(self.max_concurrency)
        failed = asyncio.Event()
        async with new_client(self.transport) as client:
            # the budget starts once the client exists: the first client in a process loads
            # the TLS context (~0.5 s cold), which is set-up, not the server's time
            deadline = time.monotonic() + self.timeout_seconds

            async def one(q: Question) -> Answer | None:
                async with sem:
                    if failed.is_set():
                        return None
                    try:
                        return await self._ask(client, state, q, headers, deadline)
                    except BaseException:
                        failed.set()
                        raise

            results = await asyncio.gather(*(one(q) for q in questions), return_exceptions=True)
        for r in results:  # the earliest question's error wins
            if isinstance(r, BaseException):
                raise r
        return [r for r in results if isinstance(r, Answer)]

    async def _ask(self, client: Any, state: Mapping[str, Any], q: Question,
                   headers: Mapping[str, str], deadline: float) -> Answer:
        what = f"logprob backend {self.model!r} at {self.url}"
        data = await post_json(client, self.url, self.request_body(state, q), headers=headers,
                               deadline=deadline, retry=self.retry, spend=self.spend, what=what,
                               key=self.api_key,
                               attempt_timeout_seconds=self.attempt_timeout_seconds)
        with mapped_errors(what, self.api_key):
            if not isinstance(data, Mapping):
                raise MalformedAnswer(f"{what}: the response is {type(data).__name__}, "
                                      "not an object")
            self.spend.add_usage(data.get("usage"))
            choice = data["choices"][0]
            message = choice.get("message") or {}
            if message.get("refusal") or choice.get("finish_reason") == "content_filter":
                raise DecisionRefused(f"{what} refused to answer question {q.id!r}: "
                                      f"{str(message.get('refusal') or 'content filter')[:200]}")
            p, detail = label_probability(_first_token_alternatives(data),
                                          temperature=self.temperature,
                                          min_label_mass=self.min_label_mass)
        return Answer(question_id=q.id, p=p, model_id=str(data.get("model") or self.model),
                      detail=detail)


def from_policy(policy: Any, environ: Mapping[str, str] | None = None) -> OpenAILogprobModel:
    """The backend ``[gate] backend = "openai"`` configures (an edge: reads the key variable).

    Raises:
        ConfigError: no model name, or a setting out of range.
    """
    policy = _as_backend(policy, "openai")
    check_policy_numbers(policy)
    return OpenAILogprobModel(
        base_url=policy.base_url, model=policy.model, api_key=key_from_policy(policy, environ),
        temperature=float(policy.model_temperature), disable_thinking=policy.disable_thinking,
        max_concurrency=policy.max_concurrency,
        max_request_tokens=policy.max_request_tokens or None,
        timeout_seconds=policy.timeout_seconds)


def _as_backend(policy: Any, name: str) -> Any:
    from dataclasses import replace

    return policy if policy.backend == name else replace(policy, backend=name)
