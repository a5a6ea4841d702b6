"""The exact reason texts the model reads (a changed word shows up as a reviewed diff)."""

from __future__ import annotations

import asyncio

from ctxgate.errors import DecisionModelError
from ctxgate.gate import GateCheck, GatePolicy, ToolCall, ToolGate
from ctxgate.gate.backends.function import FunctionDecisionModel

from .conftest import scripted

RM = ToolCall(tool="rm", arguments={"path": "/srv/data"})


def reason(gate, call=RM, **kw):
    kw.setdefault("user_request", "show me the data")
    return asyncio.run(gate.decide(call, **kw)).reason


def test_reason_texts():
    assert reason(ToolGate(scripted(0.9, 0.2))) == (
        "Tool gate: this call looks destructive or irreversible (p=0.90) and not clearly what "
        "the user asked for (p=0.20), so it was not run. It runs only when the user's own request "
        "asks for this action by name, or after a person approves this exact call with "
        "`ctxgate gate approve 7929eb03fce2`; tell the user so, and do not retry it before then.")
    assert reason(ToolGate(scripted(0.1, 0.9, secrets=0.8),
                           checks=[GateCheck(id="secrets", question="Leaks secrets?")])) == (
        'Tool gate: check `secrets` ("Leaks secrets?") answered 0.80, at or above 0.50. Ask the '
        "user to confirm before retrying.")
    assert reason(ToolGate(scripted()), user_request=None, conversation=[]) == (
        "Tool gate: there is no user request to judge this call against (the history was "
        "compacted or holds no user message, and this run has no prompt), so it was not run. "
        "The gate fails closed; ask the user to restate the request.")

    def boom(state, questions):
        raise DecisionModelError("HTTP 503 from the decision server")

    assert reason(ToolGate(FunctionDecisionModel(fn=boom, threaded=False))) == (
        "Tool gate: the decision model could not be consulted (HTTP 503 from the decision "
        "server), so this call was not run. The gate fails closed; ask the user how to proceed.")
    small = ToolGate(scripted(), GatePolicy(arg_budget_chars=1_000))
    assert reason(small, ToolCall(tool="bash", arguments={"command": "x" * 2_000})) == (
        "Tool gate: `bash`'s `/command` argument is 2000 characters, more than the gate can "
        "review in full, and it never judges part of it, so this call was not run. The gate "
        "fails closed; split it into smaller calls or ask the user.")
    assert reason(small, ToolCall(tool="w", arguments={"a": "x" * 900, "b": "y" * 900,
                                                         "c": "z" * 900})) == (
        "Tool gate: this call's arguments are too large to evaluate: even at the shortest the "
        "gate may make them (1297 characters) they exceed its budget (1000) or the decision "
        "model's limits, so it was not run. The gate fails closed; split the work into smaller "
        "calls or ask the user.")
