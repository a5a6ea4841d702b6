"""Streaming runs (``stream``/``astream``) and parallel tool calls, sync and async."""

from __future__ import annotations

import asyncio
import threading
import time

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from ctxgate.integrations.langchain import CtxgateMiddleware

from .conftest import ScriptedChatModel, call, scripted_gate, steps, tool_messages

BIG = "\n".join(f"row {i}: value {i * 7}" for i in range(1, 4001))
RAN: list[str] = []
LOCK = threading.Lock()


@tool
def fetch_rows() -> str:
    """Fetch many rows."""
    with LOCK:
        RAN.append("fetch_rows")
    return BIG


@tool
def drop_table(table: str) -> str:
    """Drop a database table."""
    with LOCK:
        RAN.append("drop_table")
    return f"dropped {table}"


@tool
def ping(host: str) -> str:
    """Ping a host."""
    with LOCK:
        RAN.append("ping")
    return f"{host} is up"


@tool
async def slow_ping(host: str) -> str:
    """Ping a host, slowly."""
    await asyncio.sleep(0.3)
    with LOCK:
        RAN.append("slow_ping")
    return f"{host} is up"


def by_tool(state):
    destructive = 0.95 if state["tool_call"]["tool"] == "drop_table" else 0.02
    return {"destructive": destructive, "requested": 0.05}


def _agent(archive, *calls, tools=(fetch_rows, drop_table, ping)):
    gate, fn = scripted_gate(by_tool)
    model = ScriptedChatModel(script=steps(AIMessage(content="", tool_calls=list(calls)),
                                           AIMessage(content="done")))
    return create_agent(model, list(tools), middleware=[
        CtxgateMiddleware(gate, archive=archive)]), fn


def _parallel_calls():
    return [call("fetch_rows"), call("drop_table", table="users"), call("ping", host="db1")]


def _check_parallel(messages):
    by_name = {m.name: m for m in tool_messages(messages)}
    assert set(by_name) == {"fetch_rows", "drop_table", "ping"}
    assert by_name["fetch_rows"].content.startswith("[ctxgate digest: fetch_rows output")
    assert by_name["drop_table"].status == "error" and "Tool gate:" in by_name["drop_table"].content
    assert by_name["ping"].content == "db1 is up"
    assert sorted(RAN) == ["fetch_rows", "ping"]


def test_stream_updates_carry_the_digest_and_the_refusal(archive):
    RAN.clear()
    agent, fn = _agent(archive, *_parallel_calls())
    streamed: list[ToolMessage] = []
    for update in agent.stream({"messages": [HumanMessage("check the database")]},
                               stream_mode="updates"):
        for node, value in update.items():
            if node == "tools":
                streamed += [m for m in value["messages"] if isinstance(m, ToolMessage)]
    assert len(streamed) == 3 and len(fn.calls) == 3  # each parallel call judged once
    _check_parallel(streamed)


def test_stream_messages_mode_streams_tool_messages_already_firewalled(archive):
    RAN.clear()
    agent, _ = _agent(archive, *_parallel_calls())
    seen = [chunk for chunk, _meta in agent.stream(
        {"messages": [HumanMessage("check the database")]}, stream_mode="messages")
        if isinstance(chunk, ToolMessage)]
    _check_parallel(seen)
    assert all(BIG not in str(m.content) for m in seen)


def test_astream_parallel_calls(archive):
    RAN.clear()
    agent, _ = _agent(archive, *_parallel_calls())

    async def run():
        last = None
        async for state in agent.astream({"messages": [HumanMessage("check the database")]},
                                         stream_mode="values"):
            last = state
        return last

    final = asyncio.run(run())
    _check_parallel(final["messages"])
    assert final["messages"][-1].content == "done"


def test_async_parallel_calls_run_concurrently_through_the_gate(archive):
    RAN.clear()
    agent, _ = _agent(archive, call("slow_ping", host="a"), call("slow_ping", host="b"),
                      call("slow_ping", host="c"), tools=(slow_ping,))
    started = time.monotonic()
    result = asyncio.run(agent.ainvoke({"messages": [HumanMessage("ping a, b and c")]}))
    elapsed = time.monotonic() - started
    assert RAN == ["slow_ping"] * 3
    assert [m.content for m in tool_messages(result["messages"])] == [
        "a is up", "b is up", "c is up"]
    assert elapsed < 0.85, elapsed  # three 0.3 s calls overlapped, not 0.9 s in a row
