"""FallbackDecisionModel: order, refusals, skipping unsent, one deadline, strictest capabilities."""

from __future__ import annotations

import asyncio
import math
import time

import pytest

from ctxgate.errors import (
    ConfigError,
    DecisionModelError,
    DecisionRefused,
    DecisionTimeout,
    MalformedAnswer,
    RequestTooLarge,
)
from ctxgate.gate.backends._http import RetryPolicy
from ctxgate.gate.backends.base import Capabilities, Question, strictest
from ctxgate.gate.backends.fallback import FallbackDecisionModel, from_policy
from ctxgate.gate.backends.function import FunctionDecisionModel
from ctxgate.gate.backends.local import LOCAL_QUESTION_IDS, LocalDecisionModel
from ctxgate.gate.backends.openai_logprobs import OpenAILogprobModel
from ctxgate.gate.policy import GatePolicy

from .conftest import Reply, logprob_body

QS = [Question(id="destructive", text="d?"), Question(id="requested", text="r?")]
STATE = {"user_request": "x", "tool_call": {"tool": "bash", "arguments": {"command": "ls"}}}


def fn_model(name, result, caps=None):
    async def fn(state, questions):
        if isinstance(result, BaseException):
            raise result
        if callable(result):
            return await result()
        return result
    return FunctionDecisionModel(fn=fn, model_id=name, capabilities=caps or Capabilities(
        model_id=name))


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("error", [
    DecisionModelError("HTTP 503"), DecisionTimeout("own timeout"), MalformedAnswer("NaN"),
    RequestTooLarge("too big for me"), RuntimeError("bug"),
])
def test_falls_back_on_every_error_but_a_refusal(error):
    a = fn_model("a", error)
    b = fn_model("b", {"destructive": 0.1, "requested": 0.9})
    chain = FallbackDecisionModel([a, b], timeout_seconds=5)
    answers = run(chain.evaluate(STATE, QS))
    assert [x.p for x in answers] == [0.1, 0.9]
    assert [(t.model_id, t.outcome) for t in chain.attempts][-1] == ("b", "ok")
    assert chain.attempts[0].outcome != "ok" and len(b.calls) == 1


def test_a_malformed_answer_from_a_member_falls_through_after_validation():
    a = fn_model("a", {"destructive": math.nan, "requested": 0.5})
    b = fn_model("b", {"destructive": 0.2, "requested": 0.3})
    chain = a_or_b = FallbackDecisionModel.chain(a, b)
    assert [x.p for x in run(a_or_b.evaluate(STATE, QS))] == [0.2, 0.3]
    assert chain.attempts[0].outcome == "MalformedAnswer"


def test_a_refusal_ends_the_chain():
    a = fn_model("a", DecisionRefused("will not"))
    b = fn_model("b", {"destructive": 0.1, "requested": 0.9})
    with pytest.raises(DecisionRefused, match="will not"):
        run(FallbackDecisionModel([a, b]).evaluate(STATE, QS))
    assert b.calls == []


def test_members_over_their_limits_are_skipped_unsent():
    tiny = fn_model("tiny", {"destructive": 0.0, "requested": 0.0},
                    Capabilities(model_id="tiny", max_request_tokens=10))
    picky = fn_model("picky", {"destructive": 0.0, "requested": 0.0},
                     Capabilities(model_id="picky", question_ids=frozenset({"destructive"})))
    ok = fn_model("ok", {"destructive": 0.4, "requested": 0.6})
    chain = FallbackDecisionModel([tiny, picky, ok])
    assert [x.p for x in run(chain.evaluate(STATE, QS))] == [0.4, 0.6]
    assert tiny.calls == [] and picky.calls == []
    assert [(t.outcome, t.sent) for t in chain.attempts] == [
        ("skipped", False), ("skipped", False), ("ok", True)]
    assert "tokens (estimate), over its 10" in chain.attempts[0].message


def test_a_request_too_large_for_everyone_is_request_too_large():
    caps = Capabilities(model_id="t", max_request_chars=5)
    chain = FallbackDecisionModel([fn_model("t1", {}, caps), fn_model("t2", {}, caps)])
    with pytest.raises(RequestTooLarge, match="every decision model's limits"):
        run(chain.evaluate(STATE, QS))


def test_all_failing_lists_every_attempt():
    chain = FallbackDecisionModel([fn_model("a", DecisionModelError("down")),
                                   fn_model("b", MalformedAnswer("junk"))])
    with pytest.raises(DecisionModelError, match=r"a: DecisionModelError: down; b: Malformed"):
        run(chain.evaluate(STATE, QS))


def test_one_overall_deadline_covers_the_chain():
    async def slow():
        await asyncio.sleep(10)
    a = fn_model("a", slow)
    b = fn_model("b", slow)
    t0 = time.monotonic()
    with pytest.raises(DecisionTimeout, match="within 0.40 s"):
        run(FallbackDecisionModel([a, b], timeout_seconds=0.4).evaluate(STATE, QS))
    assert time.monotonic() - t0 < 1.5
    assert b.calls == []  # a used the whole budget; b never started


def test_a_members_own_timeout_leaves_time_for_the_next(fault_server):
    fault_server.default = Reply(delay_seconds=3.0, body=logprob_body([("A", 0.0)]))
    fast_fail = OpenAILogprobModel(base_url=fault_server.url, model="slow", timeout_seconds=0.3,
                                   retry=RetryPolicy(max_retries=0))
    b = fn_model("b", {"destructive": 0.3, "requested": 0.8})
    chain = fast_fail.or_(b)
    assert [x.p for x in run(chain.evaluate(STATE, QS))] == [0.3, 0.8]
    first = chain.attempts[0]
    assert (first.outcome, first.sent) == ("DecisionTimeout", True)
    assert first.spend["requests"] >= 1 and first.spend["timeouts"] >= 1


def test_chains_flatten_and_capabilities_are_the_strictest():
    a = fn_model("a", {}, Capabilities(model_id="a", max_request_tokens=8000, batching=True,
                                       max_concurrency=8))
    b = fn_model("b", {}, Capabilities(model_id="b", max_request_tokens=4000, batching=False,
                                       max_concurrency=2, local=False))
    local = LocalDecisionModel()
    chain = FallbackDecisionModel.chain(a, b).or_(local)
    assert chain.members == (a, b, local)
    caps = chain.capabilities
    assert caps.max_request_tokens == 4000 and caps.max_concurrency == 1
    assert not caps.batching and not caps.local
    assert caps.question_ids == LOCAL_QUESTION_IDS
    assert caps.model_id.startswith("a -> b -> ctxgate-local")
    assert strictest([a.capabilities]).max_request_tokens == 8000


def test_from_policy_builds_the_configured_chain():
    policy = GatePolicy(backend="fallback", model="judge", fallback_backends=("openai", "local"),
                        timeout_seconds=2.0)
    chain = from_policy(policy, {})
    assert [type(m).__name__ for m in chain.members] == ["OpenAILogprobModel",
                                                          "LocalDecisionModel"]
    assert chain.timeout_seconds == 2.0
    with pytest.raises(ConfigError, match="not one of"):
        from_policy(GatePolicy(fallback_backends=("fallback",)), {})
