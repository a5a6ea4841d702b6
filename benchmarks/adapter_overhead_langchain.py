"""What the LangChain adapter adds per tool call, beyond the gate's own decision.

    python benchmarks/adapter_overhead_langchain.py [--runs N] [--quick]

A real ``create_agent`` graph with a scripted chat model (no network) runs 1 or ``--rounds``
(5) tool calls in a row per invocation; the tool returns a short string. Measured, interleaved in the same run:

* **plain**: the agent without middleware (the framework's own cost, the baseline);
* **gated**: the same agent with ``CtxgateMiddleware`` whose gate asks a constant-time
  ``FunctionDecisionModel`` (unthreaded, cache off, no audit log), so every call really
  reaches the model;
* **decide**: ``ToolGate.decide``'s own time for each of those calls (``Verdict.latency_ms``).

The adapter's overhead per run is ``gated − plain − calls × decide`` (p50 and p95 of each
distribution, ms), through ``invoke`` and ``ainvoke``; its slope between 1 and 5 calls per run
is the cost per tool call, the rest is per run (the ``before_agent`` node that captures the
user request is one more graph step per run). A micro row times ``wrap_tool_call`` against calling its handler directly on the
same ``ToolCallRequest``, which leaves the graph's own jitter out. Physical baselines in the
same run: ``asyncio.run`` of an empty coroutine (the floor of a synchronous caller's hand-off
to the async gate) and the plain tool's own invocation. The target is ≤ 1 ms per call.
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
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from pydantic import ConfigDict

from ctxgate.archive import Archive
from ctxgate.gate import FunctionDecisionModel, GatePolicy, ToolGate
from ctxgate.integrations.langchain import CtxgateMiddleware


class RoundsModel(BaseChatModel):
    """Calls ``lookup`` once per round, ``rounds`` rounds in a row, then answers."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    counter: Any = None
    rounds: int = 1

    @property
    def _llm_type(self) -> str:
        return "one-call"

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


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def constant(state: Any, questions: Any) -> dict[str, float]:
    return {"destructive": 0.0, "requested": 1.0}


def build(archive: Archive, rounds: int, decided: list[float]) -> tuple[Any, Any, Any]:
    gate = ToolGate(FunctionDecisionModel(fn=constant, threaded=False),
                    GatePolicy(cache_ttl_seconds=0, audit=False))
    inner = gate.decide

    async def recording(call: Any, **kwargs: Any) -> Any:
        verdict = await inner(call, **kwargs)
        decided.append(verdict.latency_ms / 1000.0)
        return verdict

    gate.decide = recording  # type: ignore[method-assign]
    counter = [0]
    plain = create_agent(RoundsModel(counter=counter, rounds=rounds), [lookup])
    middleware = CtxgateMiddleware(gate, archive=archive)
    gated = create_agent(RoundsModel(counter=counter, rounds=rounds), [lookup],
                         middleware=[middleware])
    return plain, gated, middleware


def timed(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def measure(plain: Any, gated: Any, runs: int, decided: list[float]) -> dict[str, list[float]]:
    """Interleaved sync and async runs of both agents, and the gate's decisions in them."""
    request = {"messages": [HumanMessage("look up the keys")]}
    for _ in range(10):  # warm both graphs
        plain.invoke(request)
        gated.invoke(request)
    decided.clear()
    rows: dict[str, list[float]] = {"plain": [], "gated": [], "aplain": [], "agated": []}
    for _ in range(runs):  # interleaved, so load changes hit both alike
        rows["plain"].append(timed(lambda: plain.invoke(request)))
        rows["gated"].append(timed(lambda: gated.invoke(request)))
    rows["decide"] = list(decided)
    decided.clear()

    async def arun() -> None:
        for _ in range(runs):
            t = time.perf_counter()
            await plain.ainvoke(request)
            rows["aplain"].append(time.perf_counter() - t)
            t = time.perf_counter()
            await gated.ainvoke(request)
            rows["agated"].append(time.perf_counter() - t)

    asyncio.run(arun())
    rows["adecide"] = list(decided)
    decided.clear()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="80 runs")
    parser.add_argument("--rounds", type=int, default=5,
                        help="tool calls per run in the many-calls rows")
    args = parser.parse_args()
    runs = 80 if args.quick else args.runs
    load = os.getloadavg()
    decided: list[float] = []
    ms = 1000.0
    with tempfile.TemporaryDirectory() as home, Archive.open(Path(home)) as archive:
        results = {}
        for rounds in (1, args.rounds):
            plain, gated, middleware = build(archive, rounds, decided)
            results[rounds] = measure(plain, gated, runs, decided)

        # micro: wrap_tool_call around the same request against its handler alone
        call = {"name": "lookup", "args": {"key": "k"}, "id": "c", "type": "tool_call"}
        state = {"messages": [HumanMessage("look up the keys")], "ctxgate_request": "look up"}
        req = ToolCallRequest(tool_call=call, tool=lookup, state=state, runtime=None)

        def handler(r: ToolCallRequest) -> Any:
            return lookup.invoke(r.tool_call)

        wrapped, bare = [], []
        for _ in range(runs * 10):
            bare.append(timed(lambda: handler(req)))
            wrapped.append(timed(lambda: middleware.wrap_tool_call(req, handler)))
        micro_decide = list(decided)

        async def nothing() -> None:
            return None

        hand_off = [timed(lambda: asyncio.run(nothing())) for _ in range(runs)]
    end_load = os.getloadavg()

    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start, "
          f"{end_load[0]:.2f} at the end; {os.cpu_count()} CPUs; {runs} runs per row "
          f"(micro: {runs * 10}); milliseconds")
    print("| path | tool calls per run | plain p50 | plain p95 | gated p50 | gated p95 "
          "| decide p50 (per call) | overhead per run p50 | overhead per run p95 |")
    print("|---|---|---|---|---|---|---|---|---|")
    over: dict[tuple[str, int], float] = {}
    for rounds, rows in results.items():
        for name, p, g, d in (("invoke (sync)", rows["plain"], rows["gated"], rows["decide"]),
                              ("ainvoke (async)", rows["aplain"], rows["agated"],
                               rows["adecide"])):
            o50 = pct(g, .5) - pct(p, .5) - rounds * pct(d, .5)
            o95 = pct(g, .95) - pct(p, .95) - rounds * pct(d, .95)
            over[(name, rounds)] = o50
            print(f"| {name} | {rounds} | {pct(p, .5) * ms:.3f} | {pct(p, .95) * ms:.3f} | "
                  f"{pct(g, .5) * ms:.3f} | {pct(g, .95) * ms:.3f} | {pct(d, .5) * ms:.3f} | "
                  f"{o50 * ms:.3f} | {o95 * ms:.3f} |")
    o50 = pct(wrapped, .5) - pct(bare, .5) - pct(micro_decide, .5)
    o95 = pct(wrapped, .95) - pct(bare, .95) - pct(micro_decide, .95)
    print(f"| micro: wrap_tool_call vs its handler | 1 | {pct(bare, .5) * ms:.3f} | "
          f"{pct(bare, .95) * ms:.3f} | {pct(wrapped, .5) * ms:.3f} | "
          f"{pct(wrapped, .95) * ms:.3f} | {pct(micro_decide, .5) * ms:.3f} | "
          f"**{o50 * ms:.3f}** | {o95 * ms:.3f} |")
    print(f"| baseline: asyncio.run(empty coroutine) | | | | | | | "
          f"{pct(hand_off, .5) * ms:.3f} | {pct(hand_off, .95) * ms:.3f} |")
    print(f"| baseline: the tool alone (lookup.invoke) | | | | | | | "
          f"{pct(bare, .5) * ms:.3f} | {pct(bare, .95) * ms:.3f} |")
    k = args.rounds
    for name in ("invoke (sync)", "ainvoke (async)"):
        per_call = (over[(name, k)] - over[(name, 1)]) / (k - 1)
        fixed = over[(name, 1)] - per_call
        print(f"{name}: per tool call {per_call * ms:.3f} ms, per run {fixed * ms:.3f} ms "
              f"(slope of the overhead between 1 and {k} calls per run)")
    print("target: per tool call <= 1 ms beyond the gate's own decision")


if __name__ == "__main__":
    main()
