"""Streaming runs (run_stream, iter) and parallel tool calls go through the same gate and
firewall."""

from __future__ import annotations

import asyncio
import json
import time

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import DeltaToolCall, FunctionModel

from ctxgate.integrations.pydantic_ai import Ctxgate

from .conftest import archive_id, build_log, make_agent, scripted_gate, tool_returns


def _calls(*calls: tuple[str, dict]) -> dict[int, DeltaToolCall]:
    return {i: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=f"c{i}-{name}")
            for i, (name, args) in enumerate(calls)}


async def _stream(messages, info):
    """Turn 1: build + an unrequested delete; turn 2: expand the digest; turn 3: answer."""
    returns = tool_returns(messages)
    if not returns:
        yield _calls(("build", {}), ("delete_cache", {"path": "/var/cache"}))
    elif not any(r.tool_name == "expand" for r in returns):
        digest = next(r.content for r in returns if r.tool_name == "build")
        yield _calls(("expand", {"id": archive_id(digest), "grep": "error"}))
    else:
        view = next(r.content for r in returns if r.tool_name == "expand")
        denied = next(r for r in returns if r.tool_name == "delete_cache")
        for piece in (f"{denied.outcome}|", view.splitlines()[1]):
            yield piece


def _streaming_agent(ran: list[str]) -> Agent:
    gate = scripted_gate({"delete_cache": (0.9, 0.1)})
    agent = Agent(FunctionModel(stream_function=_stream), capabilities=[Ctxgate(gate=gate)])

    @agent.tool_plain
    def build() -> str:
        ran.append("build")
        return build_log()

    @agent.tool_plain
    def delete_cache(path: str) -> str:
        ran.append("delete_cache")
        return "deleted"

    return agent


def test_run_stream_gates_firewalls_and_expands():
    ran: list[str] = []

    async def main() -> str:
        async with _streaming_agent(ran).run_stream("build the project") as stream:
            return await stream.get_output()

    output = asyncio.run(main())
    assert ran == ["build"]
    assert output == "failed|1713: module_1712.c:88: error: undefined reference to link_table"


def test_iter_streams_each_model_request_node_through_the_same_toolset():
    ran: list[str] = []

    async def main():
        kinds, events = [], 0
        agent = _streaming_agent(ran)
        async with agent.iter("build the project") as run:
            async for node in run:
                kinds.append(type(node).__name__)
                if Agent.is_model_request_node(node):
                    async with node.stream(run.ctx) as request_stream:
                        async for _event in request_stream:
                            events += 1
        return run.result.output, kinds, events

    output, kinds, events = asyncio.run(main())
    assert ran == ["build"] and kinds.count("CallToolsNode") == 3 and events > 3
    assert output.startswith("failed|1713: module_1712.c:88: error")


def test_parallel_tool_calls_are_each_judged_and_run_concurrently():
    spans: dict[str, tuple[float, float]] = {}

    def turn(messages, info):
        returns = tool_returns(messages)
        if not returns:
            return ModelResponse(parts=[ToolCallPart("fetch", {"url": "a"}, tool_call_id="a"),
                                        ToolCallPart("fetch", {"url": "b"}, tool_call_id="b"),
                                        ToolCallPart("wipe", {"disk": "sda"}, tool_call_id="w")])
        return ModelResponse(parts=[TextPart(json.dumps(
            {r.tool_call_id: [r.outcome, r.content[:40]] for r in returns}, sort_keys=True))])

    agent = make_agent(turn, Ctxgate(gate=scripted_gate({"wipe": (0.99, 0.01)})))

    @agent.tool_plain
    async def fetch(url: str) -> str:
        start = time.monotonic()
        await asyncio.sleep(0.3)
        spans[url] = (start, time.monotonic())
        return f"page {url}"

    @agent.tool_plain
    def wipe(disk: str) -> str:
        spans["wipe"] = (0.0, 0.0)
        return "wiped"

    result = json.loads(agent.run_sync("fetch pages a and b").output)
    assert result == {"a": ["success", "page a"], "b": ["success", "page b"],
                      "w": ["failed", "Error: Tool gate: this call looks destru"]}
    assert set(spans) == {"a", "b"}  # the denied call never ran
    (a0, a1), (b0, b1) = spans["a"], spans["b"]
    assert max(a0, b0) < min(a1, b1)  # the two allowed calls overlapped


def test_run_stream_pauses_for_an_ask_and_resumes_approved():
    from pydantic_ai.tools import DeferredToolRequests

    ran: list[str] = []

    async def stream(messages, info):
        returns = tool_returns(messages)
        if not returns:
            yield _calls(("drop_table", {"name": "staging"}))
        else:
            yield f"{returns[0].outcome}: {returns[0].content}"

    gate = scripted_gate({"drop_table": (0.9, 0.5)})
    agent = Agent(FunctionModel(stream_function=stream), capabilities=[Ctxgate(gate=gate)],
                  output_type=[str, DeferredToolRequests])
    agent.tool_plain(name="drop_table")(lambda name: ran.append(name) or f"dropped {name}")

    async def main():
        async with agent.run_stream("tidy up staging") as first:
            paused = await first.get_output()
            history = first.all_messages()
        assert isinstance(paused, DeferredToolRequests) and ran == []
        async with agent.run_stream(message_history=history,
                                    deferred_tool_results=paused.build_results(
                                        approve_all=True)) as second:
            return await second.get_output()

    assert asyncio.run(main()) == "success: dropped staging" and ran == ["staging"]
