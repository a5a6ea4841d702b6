"""What the LangChain adapter adds per tool call, beyond the gate's own decision.

    python benchmarks/adapter_overhead_langchain.py [--runs N] [--quick] [--rounds K]

A real ``create_agent`` graph with a scripted chat model (no network) makes 1 or K (5) tool
calls in a row per invocation; the tool returns a short string. The gate asks a constant-time
``FunctionDecisionModel`` (unthreaded, cache off, no audit log), so every call reaches the
model. Three agents, interleaved run by run so load changes hit all alike:

* **plain**: no middleware (the framework's own cost);
* **decide only**: a bare middleware whose ``wrap_tool_call`` calls the gate's public API on
  the call (``gate.decide_sync`` for ``invoke``, ``await gate.decide`` for ``ainvoke``) and
  then the tool: the gate's own decision as a LangGraph tool call must make it;
* **ctxgate**: ``CtxgateMiddleware`` (gate, firewall, bound, the ``expand`` tool, the
  ``before_agent`` request capture).

Overhead per run = ctxgate − decide only (p50 of each, ms), in wall time and in CPU time of
the whole process (``time.process_time``: every thread, without the time spent waiting for a
core, which on a shared machine inflates wall time); its slope between 1 and K calls per run
is the cost per tool call, the intercept the cost per run (the ``before_agent`` node is one
more graph step). ``Verdict.latency_ms`` shows the decision itself. A micro row times
``wrap_tool_call`` against calling its handler directly, outside the graph. Physical baseline
in the same run: ``asyncio.run`` of an empty coroutine and the tool's own ``invoke``. Target:
≤ 1 ms per tool call.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from pydantic import ConfigDict

from ctxgate.archive import Archive
from ctxgate.gate import FunctionDecisionModel, GatePolicy, ToolCall, ToolGate
from ctxgate.integrations.langchain import CtxgateMiddleware

REQUEST = {"messages": [HumanMessage("look up the keys")]}


class RoundsModel(BaseChatModel):
    """Calls ``lookup`` once per round, ``rounds`` rounds in a row, then answers."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    counter: Any = None
    rounds: int = 1

    @property
    def _llm_type(self) -> str:
        return "rounds"

    def bind_tools(self, tools: Any, **kwargs: Any) -> RoundsModel:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        if sum(m.type == "tool" for m in messages) >= self.rounds:
            reply = AIMessage(content="done")
        else:
            self.counter[0] += 1
            reply = AIMessage(content="", tool_calls=[{
                "name": "lookup", "args": {"key": f"k{self.counter[0]}"},
                "id": f"c{self.counter[0]}", "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def constant(state: Any, questions: Any) -> dict[str, float]:
    return {"destructive": 0.0, "requested": 1.0}


class DecideOnly(AgentMiddleware):
    """The gate's public API on each call, then the tool: nothing of the adapter."""

    def __init__(self, gate: ToolGate) -> None:
        super().__init__()
        self.gate = gate

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.gate.decide_sync(ToolCall(tool="lookup", arguments=request.tool_call["args"]),
                              user_request="look up the keys")
        return handler(request)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        await self.gate.decide(ToolCall(tool="lookup", arguments=request.tool_call["args"]),
                               user_request="look up the keys")
        return await handler(request)


def new_gate(decided: list[float]) -> ToolGate:
    gate = ToolGate(FunctionDecisionModel(fn=constant, threaded=False),
                    GatePolicy(cache_ttl_seconds=0, audit=False))
    inner = gate.decide

    async def recording(call: Any, **kwargs: Any) -> Any:
        verdict = await inner(call, **kwargs)
        decided.append(verdict.latency_ms / 1000.0)
        return verdict

    gate.decide = recording  # type: ignore[method-assign]
    return gate


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def timed(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def cpu_timed(fn: Any) -> tuple[float, float]:
    """Wall time and CPU time of the whole process (every thread), seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def measure(agents: dict[str, Any], runs: int, decided: list[float]) -> dict[str, list[float]]:
    """Interleaved sync, then async, runs of every agent; ``decide`` is ctxgate's decisions."""
    for agent in agents.values():
        for _ in range(10):
            agent.invoke(REQUEST)
    rows: dict[str, list[float]] = {f"{m}{k}{c}": [] for m in ("", "a") for k in agents
                                    for c in ("", " cpu")}
    decided.clear()
    for _ in range(runs):
        for name, agent in agents.items():
            wall, cpu = cpu_timed(lambda agent=agent: agent.invoke(REQUEST))
            rows[name].append(wall)
            rows[name + " cpu"].append(cpu)
    rows["decide"] = list(decided)
    decided.clear()

    async def arun() -> None:
        for _ in range(runs):
            for name, agent in agents.items():
                wall, cpu = time.perf_counter(), time.process_time()
                await agent.ainvoke(REQUEST)
                rows["a" + name].append(time.perf_counter() - wall)
                rows["a" + name + " cpu"].append(time.process_time() - cpu)

    asyncio.run(arun())
    rows["adecide"] = list(decided)
    decided.clear()
    return rows


def micro(archive: Archive, runs: int) -> tuple[list[float], list[float], list[float]]:
    """``wrap_tool_call`` against its handler alone, on one request, outside the graph."""
    decided: list[float] = []
    middleware = CtxgateMiddleware(new_gate(decided), archive=archive)
    call = {"name": "lookup", "args": {"key": "k"}, "id": "c", "type": "tool_call"}
    state = {"messages": [HumanMessage("look up the keys")], "ctxgate_request": "look up"}
    req = ToolCallRequest(tool_call=call, tool=lookup, state=state, runtime=None)

    def handler(r: ToolCallRequest) -> Any:
        return lookup.invoke(r.tool_call)

    wrapped, bare = [], []
    for _ in range(runs):
        bare.append(timed(lambda: handler(req)))
        wrapped.append(timed(lambda: middleware.wrap_tool_call(req, handler)))
    return bare, wrapped, decided


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="60 runs")
    parser.add_argument("--rounds", type=int, default=5, help="tool calls per run (the K rows)")
    args = parser.parse_args()
    runs = 60 if args.quick else args.runs
    load = os.getloadavg()
    ms = 1000.0
    with tempfile.TemporaryDirectory() as home, Archive.open(Path(home)) as archive:
        results = {}
        for rounds in (1, args.rounds):
            decided: list[float] = []
            counter = [0]

            def agent(middleware: list[Any], rounds: int = rounds, counter: list[int] = counter):
                return create_agent(RoundsModel(counter=counter, rounds=rounds), [lookup],
                                    middleware=middleware)

            agents = {"plain": agent([]),
                      "decide only": agent([DecideOnly(new_gate([]))]),
                      "ctxgate": agent([CtxgateMiddleware(new_gate(decided), archive=archive)])}
            results[rounds] = measure(agents, runs, decided)
        bare, wrapped, micro_decide = micro(archive, runs * 10)

        async def nothing() -> None:
            return None

        hand_off = [timed(lambda: asyncio.run(nothing())) for _ in range(runs)]
    end_load = os.getloadavg()

    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start, {end_load[0]:.2f} "
          f"at the end; {os.cpu_count()} CPUs; {runs} runs per cell; p50 (p95) milliseconds")
    print("| path | tool calls per run | plain wall (cpu) | decide only wall (cpu) | "
          "ctxgate wall (cpu) | decision latency_ms | ctxgate − decide only, wall (cpu) |")
    print("|---|---|---|---|---|---|---|")
    over: dict[tuple[str, int], tuple[float, float]] = {}
    for rounds, rows in results.items():
        for label, pre in (("invoke (sync)", ""), ("ainvoke (async)", "a")):
            cells = []
            for name in ("plain", "decide only", "ctxgate"):
                cells.append(f"{pct(rows[pre + name], .5) * ms:.2f} "
                             f"({pct(rows[pre + name + ' cpu'], .5) * ms:.2f})")
            lat = rows[pre + "decide"]
            wall = pct(rows[pre + "ctxgate"], .5) - pct(rows[pre + "decide only"], .5)
            cpu = pct(rows[pre + "ctxgate cpu"], .5) - pct(rows[pre + "decide only cpu"], .5)
            over[(label, rounds)] = (wall, cpu)
            print(f"| {label} | {rounds} | {' | '.join(cells)} | {pct(lat, .5) * ms:.3f} | "
                  f"**{wall * ms:.2f}** ({cpu * ms:.2f}) |")
    o50 = pct(wrapped, .5) - pct(bare, .5) - pct(micro_decide, .5)
    print(f"| micro: wrap_tool_call − handler − decision (wall) | 1 | {pct(bare, .5) * ms:.3f} | "
          f"| {pct(wrapped, .5) * ms:.3f} | {pct(micro_decide, .5) * ms:.3f} | "
          f"**{o50 * ms:.3f}** |")
    print(f"| baseline: asyncio.run(empty coroutine) (wall) | | | | | "
          f"{pct(hand_off, .5) * ms:.3f} | |")
    k = args.rounds
    for label in ("invoke (sync)", "ainvoke (async)"):
        for i, what in ((0, "wall"), (1, "CPU")):
            per_call = (over[(label, k)][i] - over[(label, 1)][i]) / (k - 1)
            per_run = over[(label, 1)][i] - per_call
            print(f"{label}, {what}: per tool call {per_call * ms:.2f} ms, per run "
                  f"{per_run * ms:.2f} ms (slope and intercept between 1 and {k} calls)")
    print("target: per tool call <= 1 ms beyond the gate's own decision")


if __name__ == "__main__":
    main()
