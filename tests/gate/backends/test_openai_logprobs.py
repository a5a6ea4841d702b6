"""The logprob backend against a real HTTP fault server on 127.0.0.1 (retries, timeouts, validation)."""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxgate.errors import (
    DecisionModelError,
    DecisionRefused,
    DecisionTimeout,
    MalformedAnswer,
    RequestTooLarge,
)
from ctxgate.gate.backends._http import ApiKey, RetryPolicy
from ctxgate.gate.backends.base import Question
from ctxgate.gate.backends.openai_logprobs import (
    OpenAILogprobModel,
    from_policy,
    label_probability,
    render_prompt,
)
from ctxgate.gate.policy import GatePolicy

from .conftest import Reply, logprob_body

Q = Question(id="destructive", text="Would `tool_call` delete data?",
             true_criteria="it removes data", false_criteria="it only reads")
Q2 = Question(id="requested", text="Did the user ask for `tool_call`?")
STATE = {"user_request": "clean the build dir", "tool_call": {"tool": "bash",
                                                               "arguments": {"command": "rm -rf build"}}}
FAST = RetryPolicy(max_retries=3, initial_backoff_seconds=0.01, max_backoff_seconds=2.0)
YES = [("A", math.log(0.8)), ("B", math.log(0.2))]


def model(srv, **kw) -> OpenAILogprobModel:
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout_seconds", 10.0)
    return OpenAILogprobModel(base_url=srv.url, model="judge", **kw)


def run(coro):
    return asyncio.run(coro)


def test_prompt_shows_state_question_labels_and_criteria():
    text = render_prompt(STATE, Q)
    assert '"command":"rm -rf build"' in text
    assert "Question: Would `tool_call` delete data?" in text
    assert "A: Yes — it removes data" in text and "B: No — it only reads" in text
    assert render_prompt(STATE, Q) == text  # deterministic


def test_reads_p_yes_from_first_token_and_sends_the_documented_body(fault_server):
    fault_server.push(Reply(body=logprob_body(YES)))
    [a] = run(model(fault_server, api_key=ApiKey("sk-secret-123", env_var="JUDGE_KEY"))
              .evaluate(STATE, [Q]))
    assert a.question_id == "destructive" and a.p == pytest.approx(0.8)
    assert a.detail["label_mass"] == pytest.approx(1.0)
    req = fault_server.requests[0]
    assert req["path"] == "/v1/chat/completions"
    body = req["body"]
    assert (body["max_tokens"], body["temperature"], body["logprobs"], body["top_logprobs"]) == (
        1, 0, True, 20)
    assert "chat_template_kwargs" not in body
    assert req["headers"]["authorization"] == "Bearer sk-secret-123"


def test_labels_with_spaces_case_and_yes_no_aliases_are_summed():
    p, detail = label_probability([(" a", math.log(0.3)), ("Yes", math.log(0.3)),
                                   ("B:", math.log(0.2)), ("the", math.log(0.2))])
    assert p == pytest.approx(0.6 / 0.8)
    assert detail["label_mass"] == pytest.approx(0.8)


def test_little_label_mass_is_rejected_thinking_model():
    with pytest.raises(MalformedAnswer, match="cover 0.10 .*<think>"):
        label_probability([("<think>", math.log(0.9)), ("A", math.log(0.1))])


def test_a_missing_label_gets_the_smallest_reported_mass_never_zero():
    p, _ = label_probability([("A", math.log(0.7)), ("x", math.log(0.05))])
    assert 0.0 < 1 - p and p == pytest.approx(0.7 / (0.7 + 0.05))


def test_temperature_scaling_softens_and_sharpens():
    alts = [("A", math.log(0.8)), ("B", math.log(0.2))]
    soft, _ = label_probability(alts, temperature=2.0)
    sharp, _ = label_probability(alts, temperature=0.5)
    assert soft == pytest.approx(math.sqrt(0.8) / (math.sqrt(0.8) + math.sqrt(0.2)))
    assert 0.5 < soft < 0.8 < sharp < 1.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["A", "B", " a", "yes", "No", "x", "<think>", "The"]),
                          st.floats(min_value=-30, max_value=0)), min_size=1, max_size=20),
       st.floats(min_value=0.2, max_value=5.0))
def test_label_probability_is_a_probability_or_a_rejection(alts, t):
    try:
        p, detail = label_probability(alts, temperature=t)
    except MalformedAnswer:
        return
    assert 0.0 <= p <= 1.0 and detail["label_mass"] >= 0.5 - 1e-9


def test_retries_500_then_answers(fault_server):
    fault_server.push(Reply(status=500, body={"error": "boom"}), Reply(status=503, body=b"down"),
                      Reply(body=logprob_body(YES)))
    m = model(fault_server)
    [a] = run(m.evaluate(STATE, [Q]))
    assert a.p == pytest.approx(0.8)
    assert len(fault_server.requests) == 3
    assert (m.spend.requests, m.spend.failures, m.spend.retries) == (3, 2, 2)


def test_429_retry_after_is_honoured(fault_server):
    fault_server.push(Reply(status=429, headers={"retry-after": "1"}, body={"error": "slow"}),
                      Reply(body=logprob_body(YES)))
    [a] = run(model(fault_server).evaluate(STATE, [Q]))
    gap = fault_server.times[1] - fault_server.times[0]
    assert gap >= 0.95, gap  # the server's 1 s beat the 0.01 s backoff
    assert a.p == pytest.approx(0.8)


def test_retries_give_up_with_the_status_in_the_message(fault_server):
    fault_server.default = Reply(status=502, body={"error": "bad gateway"})
    with pytest.raises(DecisionModelError, match="gave up after 4 attempts; last: HTTP 502"):
        run(model(fault_server).evaluate(STATE, [Q]))
    assert len(fault_server.requests) == 4


def test_retry_after_beyond_the_deadline_is_a_timeout_without_waiting(fault_server):
    fault_server.push(Reply(status=429, headers={"retry-after": "20"}, body={}))
    t0 = time.monotonic()
    with pytest.raises(DecisionTimeout, match="no time to retry"):
        run(model(fault_server, timeout_seconds=1.0).evaluate(STATE, [Q]))
    assert time.monotonic() - t0 < 1.0


@pytest.mark.parametrize("body,match", [
    (b"<html>oops</html>", "not JSON"),
    ({"choices": []}, "unexpected response shape"),
    ({"choices": [{"message": {"content": "A"}}]}, "no logprobs"),
    (b'{"choices":[{"message":{},"logprobs":{"content":[{"token":"A","logprob":NaN,'
     b'"top_logprobs":[{"token":"A","logprob":NaN}]}]}}]}', "is nan"),
    (logprob_body([("A", 0.5)]), "at most 0"),
    (logprob_body([("I", math.log(0.9)), ("A", math.log(0.05))]), "cover 0.05"),
])
def test_garbage_bodies_are_malformed_answers(fault_server, body, match):
    fault_server.push(Reply(body=body))
    with pytest.raises(MalformedAnswer, match=match):
        run(model(fault_server).evaluate(STATE, [Q]))
    assert len(fault_server.requests) == 1  # a bad 2xx body is not retried


def test_a_hang_times_out_within_the_budget(fault_server):
    fault_server.push(Reply(delay_seconds=5.0, body=logprob_body(YES)))
    t0 = time.monotonic()
    with pytest.raises(DecisionTimeout):
        run(model(fault_server, timeout_seconds=0.5).evaluate(STATE, [Q]))
    assert time.monotonic() - t0 < 2.0


def test_an_unreachable_server_is_a_decision_error_after_retries():
    m = OpenAILogprobModel(base_url="http://127.0.0.1:9", model="judge", retry=FAST,
                           timeout_seconds=5)
    with pytest.raises(DecisionModelError, match="gave up after 4 attempts"):
        run(m.evaluate(STATE, [Q]))
    assert m.spend.requests == 4


def test_401_names_the_variable_and_never_the_key(fault_server):
    fault_server.push(Reply(status=401, body={"error": "bad key sk-secret-123"}))
    key = ApiKey("sk-secret-123", env_var="JUDGE_KEY")
    m = model(fault_server, api_key=key)
    with pytest.raises(DecisionModelError) as info:
        run(m.evaluate(STATE, [Q]))
    assert "JUDGE_KEY" in str(info.value) and "sk-secret-123" not in str(info.value)
    assert "sk-secret" not in repr(m) and "sk-secret" not in repr(key) and "sk-" not in str(key)
    assert len(fault_server.requests) == 1


def test_refusal_is_a_decision_refused(fault_server):
    fault_server.push(Reply(body=logprob_body(YES, refusal="I can't help with that")))
    with pytest.raises(DecisionRefused, match="can't help"):
        run(model(fault_server).evaluate(STATE, [Q]))


def test_request_too_large_is_raised_before_anything_is_sent(fault_server):
    big = {"user_request": "x" * 8000, "tool_call": {"tool": "bash", "arguments": {}}}
    with pytest.raises(RequestTooLarge, match=r"about \d+ tokens \(estimate\), over the 872 .*"
                                              r"1000-token request limit"):
        run(model(fault_server, max_request_tokens=1000).evaluate(big, [Q]))
    assert fault_server.requests == []
    run_ok = model(fault_server, max_request_tokens=1000)
    fault_server.push(Reply(body=logprob_body(YES)))
    assert run(run_ok.evaluate(STATE, [Q]))[0].p == pytest.approx(0.8)


def test_disable_thinking_and_extra_body_merge(fault_server):
    fault_server.push(Reply(body=logprob_body(YES)))
    m = model(fault_server, disable_thinking=True,
              extra_body={"max_tokens": 99, "chat_template_kwargs": {"foo": 1}, "seed": 7})
    run(m.evaluate(STATE, [Q]))
    body = fault_server.requests[0]["body"]
    assert body["chat_template_kwargs"] == {"foo": 1, "enable_thinking": False}
    assert body["max_tokens"] == 1 and body["seed"] == 7  # required fields win


def test_one_request_per_question_concurrently_first_error_wins(fault_server):
    fault_server.default = Reply(body=logprob_body(YES), delay_seconds=0.3)
    qs = [Question(id=f"q{i}", text=f"question {i}?") for i in range(6)]
    t0 = time.monotonic()
    answers = run(model(fault_server, max_concurrency=6).evaluate(STATE, qs))
    assert [a.question_id for a in answers] == [q.id for q in qs]
    assert len(fault_server.requests) == 6 and time.monotonic() - t0 < 1.5  # not 6 × 0.3 s


def test_after_a_failure_no_new_request_starts(fault_server):
    fault_server.push(Reply(status=400, body={"error": "bad"}))
    fault_server.default = Reply(body=logprob_body(YES))
    qs = [Question(id=f"q{i}", text="?") for i in range(5)]
    with pytest.raises(DecisionModelError, match="HTTP 400"):
        run(model(fault_server, max_concurrency=1).evaluate(STATE, qs))
    assert len(fault_server.requests) == 1


def test_from_policy_reads_the_named_variable_at_the_edge(fault_server):
    policy = GatePolicy(backend="openai", base_url=fault_server.url, model="judge",
                        api_key_env="MY_JUDGE_KEY", model_temperature=2.0, disable_thinking=True,
                        max_request_tokens=5000)
    m = from_policy(policy, {"MY_JUDGE_KEY": " sk-abc "})
    assert m.api_key is not None and m.api_key.reveal() == "sk-abc"
    assert m.capabilities.local and m.capabilities.max_request_tokens == 5000 - 128  # reserve
    assert m.temperature == 2.0 and m.disable_thinking
    assert from_policy(policy, {}).api_key is None


def _leaf_httpx_errors():
    import httpx

    seen, todo = [], [httpx.HTTPError]
    while todo:
        cls = todo.pop()
        subs = cls.__subclasses__()
        todo.extend(subs)
        if not subs:
            seen.append(cls)
    return sorted(seen, key=lambda c: c.__name__)


@pytest.mark.parametrize("exc_type", _leaf_httpx_errors(), ids=lambda c: c.__name__)
def test_every_httpx_error_is_mapped_into_the_tree(exc_type):
    import httpx

    from ctxgate.gate.backends._http import mapped_errors

    req = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    try:
        exc = exc_type("boom sk-secret-123", request=req)
    except TypeError:
        resp = httpx.Response(500, request=req)
        exc = exc_type("boom sk-secret-123", request=req, response=resp)
    with pytest.raises(DecisionModelError) as info:
        with mapped_errors("backend", ApiKey("sk-secret-123", env_var="K")):
            raise exc
    assert info.value.__cause__ is exc
    assert "sk-secret-123" not in str(info.value)
    if isinstance(exc, httpx.TimeoutException):
        assert isinstance(info.value, DecisionTimeout)


def test_an_attempt_timeout_is_retried_within_the_overall_budget(fault_server):
    fault_server.push(Reply(delay_seconds=2.0, body=logprob_body(YES)),
                      Reply(body=logprob_body(YES)))
    m = model(fault_server, timeout_seconds=5.0, attempt_timeout_seconds=0.3)
    [a] = run(m.evaluate(STATE, [Q]))
    assert a.p == pytest.approx(0.8)
    assert len(fault_server.requests) == 2 and m.spend.timeouts == 1


@pytest.mark.parametrize("reply,code", [
    (Reply(status=500, body={"error": "boom"}), "backend_error"),
    (Reply(status=429, headers={"retry-after": "30"}, body={}), "timeout"),
    (Reply(body=b"garbage"), "malformed_answer"),
    (Reply(body=logprob_body([("A", float("nan"))])), "malformed_answer"),
    (Reply(body=logprob_body([("<think>", -0.01)])), "malformed_answer"),
    (Reply(delay_seconds=3.0, body=logprob_body(YES)), "timeout"),
])
def test_every_fault_denies_through_the_gate(fault_server, reply, code):
    from ctxgate.gate.gate import ToolCall, ToolGate

    fault_server.default = reply
    gate = ToolGate(model(fault_server, retry=RetryPolicy(max_retries=1,
                                                          initial_backoff_seconds=0.01)),
                    GatePolicy(timeout_seconds=1.0, cache_ttl_seconds=0, fast_path=False))
    verdict = gate.decide_sync(ToolCall(tool="bash", arguments={"command": "rm -rf build"}),
                               user_request="clean the build dir")
    assert verdict.outcome == "deny" and verdict.code == code, verdict.reason
    assert "fails closed" in verdict.reason


def test_a_call_the_gate_fitted_to_the_limits_is_sent_not_refused(fault_server):
    from ctxgate.gate.gate import ToolCall, ToolGate

    fault_server.default = Reply(body=logprob_body(YES))
    m = model(fault_server, max_request_tokens=2000)
    gate = ToolGate(m, GatePolicy(cache_ttl_seconds=0, fast_path=False))
    content = "".join(f"line {i}: some text to write\n" for i in range(3000))  # ~90 kB
    verdict = gate.decide_sync(ToolCall(tool="write_file",
                                        arguments={"path": "notes.txt", "content": content}),
                               user_request="write my notes to notes.txt")
    assert verdict.code in ("allowed", "destructive_unrequested"), verdict.reason
    assert verdict.omitted  # the gate shortened the content to the backend's limits ...
    assert len(fault_server.requests) == 2  # ... and the backend sent both questions
    assert m.spend.requests == 2
