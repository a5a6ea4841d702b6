"""The logprob backend against a real llama-cpp-python server serving SmolLM2-135M on 127.0.0.1.

SmolLM2-135M is useless as a judge (about chance); these tests prove the wire path: the real
logprob format, label-mass handling, concurrency, limits and real error mapping.
"""

from __future__ import annotations

import asyncio
import json
import math

import httpx
import pytest

from ctxgate.errors import DecisionModelError, MalformedAnswer, RequestTooLarge
from ctxgate.gate.backends.base import Question, validate_answers
from ctxgate.gate.backends.openai_logprobs import (
    OpenAILogprobModel,
    label_probability,
    render_prompt,
)

from .conftest import LLAMA_N_CTX

STATE = {"user_request": "show me the disk usage of /var/log",
         "tool_call": {"tool": "bash", "arguments": {"command": "du -sh /var/log"}}}
Q = Question(id="destructive", text="Would executing `tool_call` delete or overwrite data?",
             true_criteria="it removes or replaces data", false_criteria="it only reads")


def judge(url: str, **kw) -> OpenAILogprobModel:
    kw.setdefault("timeout_seconds", 120.0)
    return OpenAILogprobModel(base_url=url, model="smollm2-135m", **kw)


def raw_first_token(url: str, prompt: str) -> list[tuple[str, float]]:
    r = httpx.post(url + "/chat/completions", timeout=120, json={
        "model": "smollm2-135m", "messages": [{"role": "user", "content": prompt}],
        "max_tokens": 1, "temperature": 0, "logprobs": True, "top_logprobs": 20})
    r.raise_for_status()
    data = r.json()
    first = data["choices"][0]["logprobs"]["content"][0]
    # the real format: OpenAI chat logprobs, token + logprob + top_logprobs list
    assert set(first) >= {"token", "logprob", "top_logprobs"}
    assert all(set(t) >= {"token", "logprob"} for t in first["top_logprobs"])
    assert len(first["top_logprobs"]) == 20
    assert all(math.isfinite(t["logprob"]) and t["logprob"] <= 0 for t in first["top_logprobs"])
    return [(t["token"], t["logprob"]) for t in first["top_logprobs"]]


def test_real_format_and_the_backend_agree_with_the_raw_distribution(llama_server):
    alts = raw_first_token(llama_server, render_prompt(STATE, Q))
    mass = sum(math.exp(lp) for tok, lp in alts
               if tok.strip().upper().rstrip(":.)") in ("A", "B", "YES", "NO"))
    m = judge(llama_server)
    try:
        [answer] = asyncio.run(m.evaluate(STATE, [Q]))
    except MalformedAnswer as exc:  # temperature 0: the same distribution, so the same verdict
        assert mass < 0.5, exc
        return
    assert mass >= 0.5
    expected, _ = label_probability(alts)
    assert answer.p == pytest.approx(expected, abs=1e-3)
    assert answer.detail["label_mass"] == pytest.approx(mass, abs=1e-3)
    assert m.spend.input_tokens > 0 and m.spend.requests == 1


def test_an_impossible_label_mass_floor_is_rejected_by_a_real_model(llama_server):
    with pytest.raises(MalformedAnswer, match="labels A/B cover"):
        asyncio.run(judge(llama_server, min_label_mass=0.9999).evaluate(STATE, [Q]))


def test_eight_questions_concurrently(llama_server):
    qs = [Question(id=f"q{i}", text=f"Is `tool_call` step {i} of what the user asked?")
          for i in range(8)]
    m = judge(llama_server, max_concurrency=8, min_label_mass=0.05)
    answers = asyncio.run(m.evaluate(STATE, qs))
    by_id = validate_answers(qs, answers)
    assert list(by_id) == [q.id for q in qs]
    assert all(0.0 <= a.p <= 1.0 for a in answers)
    assert m.spend.requests == 8 and m.spend.failures == 0


def test_token_limit_is_checked_before_sending(llama_server):
    big = {"user_request": "tidy up " * 3000, "tool_call": STATE["tool_call"]}
    m = judge(llama_server, max_request_tokens=LLAMA_N_CTX)
    with pytest.raises(RequestTooLarge, match="nothing was sent"):
        asyncio.run(m.evaluate(big, [Q]))
    assert m.spend.requests == 0


def test_a_state_over_the_real_context_is_a_mapped_http_error(llama_server):
    big = {"user_request": "tidy up " * 3000, "tool_call": STATE["tool_call"]}
    m = judge(llama_server)  # no client-side limit: the server's own error must be mapped
    with pytest.raises(DecisionModelError, match=r"HTTP 4\d\d") as info:
        asyncio.run(m.evaluate(big, [Q]))
    assert not isinstance(info.value, RequestTooLarge)
    assert json.dumps(big)[:50] not in str(info.value)  # a snippet, not the whole request
