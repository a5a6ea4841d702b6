"""The gate before every tool call in real pydantic-ai runs: deny keeps the run going, a
requested call runs, and every failure of the decision denies (fail closed)."""

from __future__ import annotations

import asyncio
import datetime as dt
import time

import pytest
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from ctxgate.errors import ToolDenied
from ctxgate.gate import AuditLog, FunctionDecisionModel, GatePolicy, ToolGate
from ctxgate.integrations.pydantic_ai import Ctxgate

from .conftest import make_agent, scripted_gate, tool_returns

DESTRUCTIVE_UNREQUESTED = {"delete_records": (0.95, 0.05)}


def _delete_then_report(messages, info):
    """Turn 1: call delete_records; turn 2: report what came back."""
    returns = tool_returns(messages)
    if not returns:
        return ModelResponse(parts=[ToolCallPart("delete_records", {"table": "customers"})])
    return ModelResponse(parts=[TextPart(f"{returns[0].outcome}: {returns[0].content}")])


def _agent(gate, ran, **cap):
    agent = make_agent(_delete_then_report, Ctxgate(gate=gate, **cap))

    @agent.tool_plain
    def delete_records(table: str) -> str:
        ran.append(table)
        return f"deleted every row of {table}"

    return agent


def test_an_unrequested_destructive_call_is_refused_and_the_run_continues(tmp_path):
    ran: list[str] = []
    audit = AuditLog.in_home(tmp_path / "home")
    gate = scripted_gate(DESTRUCTIVE_UNREQUESTED, audit=audit)
    result = _agent(gate, ran).run_sync("show me how many customers we have")
    assert ran == []  # never executed
    assert result.output.startswith("failed: Error: Tool gate: this call looks destructive")
    assert "(p=0.95)" in result.output and "(p=0.05)" in result.output
    part = tool_returns(result.all_messages())[0]
    assert part.tool_name == "delete_records" and part.outcome == "failed"
    [row] = audit.query()
    assert row.verdict == "deny" and row.code == "destructive_unrequested"
    assert row.tool == "delete_records"


def test_a_requested_destructive_call_runs():
    ran: list[str] = []
    gate = scripted_gate({"delete_records": (0.95, 0.92)})
    result = _agent(gate, ran).run_sync("delete every row of the customers table")
    assert ran == ["customers"]
    assert result.output == "success: deleted every row of customers"


def test_the_gate_judges_the_validated_arguments_and_the_run_s_own_request():
    states = []

    def answer(state, questions):
        states.append(state)
        return {"destructive": 0.9, "requested": 0.95}

    gate = ToolGate(FunctionDecisionModel(fn=answer, threaded=False),
                    GatePolicy(cache_ttl_seconds=0))
    _agent(gate, []).run_sync("wipe the customers table")
    [state] = states
    assert state["user_request"] == "wipe the customers table"
    assert state["tool_call"] == {"tool": "delete_records", "arguments": {"table": "customers"}}


def test_on_deny_retry_sends_a_retry_prompt_and_raise_ends_the_run():
    ran: list[str] = []
    gate = scripted_gate(DESTRUCTIVE_UNREQUESTED)
    with pytest.raises(ToolDenied, match="Tool gate: this call looks destructive") as info:
        _agent(gate, ran, on_deny="raise").run_sync("count the customers")
    assert info.value.verdict.code == "destructive_unrequested"
    result = _agent(gate, ran, on_deny="retry").run_sync("count the customers")
    assert result.output.startswith("retried: Error: Tool gate: this call looks destructive")
    assert ran == []
    with pytest.raises(ValueError, match="on_deny='sometimes'"):
        Ctxgate(gate=gate, on_deny="sometimes")  # type: ignore[arg-type]


def test_a_denial_never_costs_the_tool_s_retries():
    """Three denials in a row with the default max_retries=1: ToolFailed never exhausts it."""
    ran: list[str] = []

    def turn(messages, info):
        returns = tool_returns(messages)
        if len(returns) < 3:
            return ModelResponse(parts=[ToolCallPart("delete_records", {"table": f"t{len(returns)}"})])
        return ModelResponse(parts=[TextPart(returns[-1].content)])

    agent = make_agent(turn, Ctxgate(gate=scripted_gate(DESTRUCTIVE_UNREQUESTED)))
    agent.tool_plain(name="delete_records")(lambda table: ran.append(table))
    result = agent.run_sync("what tables are there?")
    assert ran == []
    assert "This is the gate's denial number 3 in this run (3 in a row)" in result.output


def test_retry_mode_does_exhaust_them():
    def turn(messages, info):
        return ModelResponse(parts=[ToolCallPart("delete_records", {"table": "t"})])

    agent = make_agent(turn, Ctxgate(gate=scripted_gate(DESTRUCTIVE_UNREQUESTED),
                                     on_deny="retry"))
    agent.tool_plain(name="delete_records")(lambda table: None)
    with pytest.raises(UnexpectedModelBehavior):
        agent.run_sync("what tables are there?")


def _failing_gate(fn, **policy) -> ToolGate:
    return ToolGate(FunctionDecisionModel(fn=fn), GatePolicy(cache_ttl_seconds=0, **policy))


def test_a_backend_that_raises_denies():
    def broken(state, questions):
        raise ConnectionError("decision service unreachable")

    ran: list[str] = []
    result = _agent(_failing_gate(broken), ran).run_sync("delete every row of customers")
    assert ran == []
    assert result.output.startswith("failed: Error: Tool gate: the decision model could not be consulted")
    assert "decision service unreachable" in result.output and "fails closed" in result.output


def test_a_backend_that_hangs_past_the_deadline_denies():
    def hangs(state, questions):
        time.sleep(30)

    ran: list[str] = []
    started = time.monotonic()
    result = _agent(_failing_gate(hangs, timeout_seconds=0.3), ran).run_sync(
        "delete every row of customers")
    assert time.monotonic() - started < 10
    assert ran == []
    assert "timed out after 0.3 s" in result.output and "fails closed" in result.output


def test_the_adapter_deadline_bounds_the_whole_decision():
    async def hangs(state, questions):
        await asyncio.sleep(30)

    ran: list[str] = []
    gate = _failing_gate(hangs, timeout_seconds=60)
    started = time.monotonic()
    result = _agent(gate, ran, deadline=0.3).run_sync("delete every row of customers")
    assert time.monotonic() - started < 10 and ran == []
    assert "could not be consulted (timed out after 0.3 s)" in result.output


def test_a_backend_that_cannot_be_built_denies_and_says_why():
    from ctxgate.errors import GateError

    def cannot_load():
        raise GateError("the decision backend 'local' is not available (no numpy)")

    ran: list[str] = []
    gate = ToolGate(cannot_load, GatePolicy())
    result = _agent(gate, ran).run_sync("delete every row of customers")
    assert ran == []
    assert "no numpy" in result.output and result.output.startswith("failed: Error: Tool gate:")


def test_an_answer_out_of_range_denies():
    ran: list[str] = []
    gate = _failing_gate(lambda s, q: {"destructive": 0.1, "requested": 7.0})
    result = _agent(gate, ran).run_sync("delete every row of customers")
    assert ran == [] and "answer was unusable" in result.output


def test_arguments_are_judged_as_json_and_non_json_values_deny():
    states = []

    def answer(state, questions):
        states.append(state["tool_call"]["arguments"])
        return {"destructive": 0.1, "requested": 0.9}

    def turn(messages, info):
        returns = tool_returns(messages)
        if not returns:
            return ModelResponse(parts=[
                ToolCallPart("schedule", {"when": "2026-12-01T10:00:00", "factor": 2.5}),
                ToolCallPart("schedule", {"when": "2026-12-01T11:00:00",
                                          "factor": float("nan")})])
        return ModelResponse(parts=[TextPart(" / ".join(f"{r.outcome}: {r.content}"
                                                        for r in returns))])

    ran = []
    gate = ToolGate(FunctionDecisionModel(fn=answer, threaded=False),
                    GatePolicy(cache_ttl_seconds=0))
    agent = make_agent(turn, Ctxgate(gate=gate))

    @agent.tool_plain
    def schedule(when: dt.datetime, factor: float) -> str:
        ran.append(when)
        return f"scheduled at {when:%H:%M}"

    output = agent.run_sync("schedule the two jobs").output
    assert states == [{"when": "2026-12-01T10:00:00", "factor": 2.5}]
    assert ran == [dt.datetime(2026, 12, 1, 10, 0)]
    assert "success: scheduled at 10:00" in output
    assert "failed: Error: Tool gate: this call's arguments are not valid JSON" in output


def test_tools_of_every_toolset_are_gated_and_gated_toolset_works_without_the_capability():
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.toolsets import FunctionToolset

    ran: list[str] = []

    def delete_records(table: str) -> str:
        ran.append(table)
        return "deleted"

    gate = scripted_gate(DESTRUCTIVE_UNREQUESTED)
    extra = FunctionToolset([delete_records])
    via_capability = Agent(FunctionModel(_delete_then_report), toolsets=[extra],
                           capabilities=[Ctxgate(gate=gate)])
    assert via_capability.run_sync("count the customers").output.startswith("failed: Error: Tool gate:")
    from ctxgate.integrations.pydantic_ai import GatedToolset

    direct = Agent(FunctionModel(_delete_then_report), toolsets=[GatedToolset(extra, gate=gate)])
    assert direct.run_sync("count the customers").output.startswith("failed: Error: Tool gate:")
    assert ran == []
    with pytest.raises(TypeError, match="needs gate=ToolGate"):
        GatedToolset(extra, gate=None)  # type: ignore[arg-type]
