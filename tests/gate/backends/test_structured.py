"""The structured (stated-probability) backend in both wire formats, against the fault server."""

from __future__ import annotations

import asyncio
import json

import pytest

from ctxgate.errors import ConfigError, DecisionRefused, MalformedAnswer, RequestTooLarge
from ctxgate.gate.backends._http import ApiKey, RetryPolicy
from ctxgate.gate.backends.base import Question
from ctxgate.gate.backends.structured import StructuredDecisionModel, answer_schema, from_policy
from ctxgate.gate.policy import GatePolicy

from .conftest import Reply

QS = [Question(id="destructive", text="Does it delete data?", true_criteria="removes data"),
      Question(id="requested", text="Did the user ask for it?")]
STATE = {"user_request": "delete tmp", "tool_call": {"tool": "bash",
                                                      "arguments": {"command": "rm -r tmp"}}}
FAST = RetryPolicy(max_retries=1, initial_backoff_seconds=0.01)


def openai_reply(content: str, refusal=None) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": content, "refusal": refusal},
                         "finish_reason": "stop"}], "usage": {"prompt_tokens": 80,
                                                              "completion_tokens": 9}}


def anthropic_reply(values, stop_reason="tool_use") -> dict:
    return {"content": [{"type": "text", "text": "ok"},
                        {"type": "tool_use", "name": "record_probabilities", "input": values}],
            "stop_reason": stop_reason, "usage": {"input_tokens": 70, "output_tokens": 12}}


def make(srv, api="openai", **kw) -> StructuredDecisionModel:
    base = srv.url if api == "openai" else srv.url.removesuffix("/v1")
    return StructuredDecisionModel(api=api, base_url=base, model="m", retry=FAST,
                                   timeout_seconds=5, **kw)


def test_schema_requires_every_id_and_forbids_others():
    schema = answer_schema(QS)
    assert schema["required"] == ["destructive", "requested"]
    assert schema["additionalProperties"] is False
    assert all(v["type"] == "number" for v in schema["properties"].values())


def test_openai_json_schema_round_trip(fault_server):
    fault_server.push(Reply(body=openai_reply('{"destructive": 0.9, "requested": 0.95}')))
    m = make(fault_server, api_key=ApiKey("sk-x", env_var="K"))
    answers = asyncio.run(m.evaluate(STATE, QS))
    assert [(a.question_id, a.p) for a in answers] == [("destructive", 0.9), ("requested", 0.95)]
    assert all(a.detail == {"stated": True} for a in answers)
    req = fault_server.requests[0]
    assert req["path"] == "/v1/chat/completions"
    fmt = req["body"]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert req["headers"]["authorization"] == "Bearer sk-x"
    assert (m.spend.input_tokens, m.spend.output_tokens) == (80, 9)


def test_anthropic_forced_tool_round_trip(fault_server):
    fault_server.push(Reply(body=anthropic_reply({"requested": 0.2, "destructive": 0.7})))
    m = make(fault_server, api="anthropic", api_key=ApiKey("ant-key", env_var="ANTHROPIC_KEY"))
    answers = asyncio.run(m.evaluate(STATE, QS))
    assert [(a.question_id, a.p) for a in answers] == [("destructive", 0.7), ("requested", 0.2)]
    req = fault_server.requests[0]
    assert req["path"] == "/v1/messages"
    assert req["headers"]["x-api-key"] == "ant-key"
    assert req["headers"]["anthropic-version"] == "2023-06-01"
    assert req["body"]["tool_choice"] == {"type": "tool", "name": "record_probabilities"}


@pytest.mark.parametrize("content,match", [
    ('{"destructive": 0.9}', "no probability for question 'requested'"),
    ('{"destructive": 1.5, "requested": 0.1}', "not a probability"),
    ('{"destructive": NaN, "requested": 0.1}', "not a probability"),
    ('{"destructive": "high", "requested": 0.1}', "not a probability"),
    ('{"destructive": true, "requested": 0.1}', "not a probability"),
    ("[0.9, 0.1]", "not an object"),
    ("definitely destructive", "not JSON"),
])
def test_invalid_replies_are_malformed(fault_server, content, match):
    fault_server.push(Reply(body=openai_reply(content)))
    with pytest.raises(MalformedAnswer, match=match):
        asyncio.run(make(fault_server).evaluate(STATE, QS))


def test_refusals_in_both_formats(fault_server):
    fault_server.push(Reply(body=openai_reply("", refusal="I won't judge this")))
    with pytest.raises(DecisionRefused, match="won't judge"):
        asyncio.run(make(fault_server).evaluate(STATE, QS))
    fault_server.push(Reply(body={"content": [], "stop_reason": "refusal"}))
    with pytest.raises(DecisionRefused):
        asyncio.run(make(fault_server, api="anthropic").evaluate(STATE, QS))


def test_limit_checked_before_sending(fault_server):
    big = {**STATE, "user_request": "é" * 10_000}  # 20,000 bytes ≈ 5,000 tokens (estimate)
    with pytest.raises(RequestTooLarge, match="nothing was sent"):
        asyncio.run(make(fault_server, max_request_tokens=4000).evaluate(big, QS))
    assert fault_server.requests == []


def test_from_policy_validates_and_reads_the_key():
    with pytest.raises(ConfigError, match="structured_api"):
        from_policy(GatePolicy(backend="structured", model="m", structured_api="gemini"), {})
    with pytest.raises(ConfigError, match="needs \\[gate\\] model"):
        from_policy(GatePolicy(backend="structured"), {})
    m = from_policy(GatePolicy(backend="structured", model="claude", structured_api="anthropic",
                               base_url="https://api.anthropic.com", api_key_env="AK"),
                    {"AK": "secret"})
    assert m.url == "https://api.anthropic.com/v1/messages" and not m.capabilities.local
    assert "secret" not in repr(m) and json.dumps(m.capabilities.batching) == "true"
