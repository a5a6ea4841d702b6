"""Time the pydantic-ai adapter adds to a tool call, beyond the gate's own decision.

    python benchmarks/adapter_overhead_pydantic_ai.py [--runs 400] [--history 40]

Real pydantic-ai runs with its scripted test model ``FunctionModel`` (it calls the one tool,
then answers; ``TestModel`` calls no tool once a history holds a tool return), no network. An outermost timing wrapper toolset measures each ``call_tool`` in the same run:

* **plain** — the agent's tool with no ctxgate (the physical baseline: what pydantic-ai's
  toolset call costs by itself);
* **gated** — the same tool under ``Ctxgate`` (gate → tool → firewall), whose gate decision is
  a constant-time ``FunctionDecisionModel``; the gate's own ``decide`` is timed around the
  call too, so **adapter overhead = gated − plain − decide**, per call;
* the same with a 40-turn message history in front of the run (the request extraction walks
  the history on every call).

Plain and gated runs are interleaved so load drifts hit both; p50/p95 in milliseconds, with
the load average before and after. The tool returns a short result (shown whole, redacted);
a digested result's firewall cost is the firewall's own (``benchmarks/run_cat.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["pydantic_ai_rows"]


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def _history(turns: int) -> list[Any]:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    out: list[Any] = []
    for i in range(turns):
        out += [ModelRequest(parts=[UserPromptPart(f"step {i}: look at file_{i}.py")]),
                ModelResponse(parts=[ToolCallPart("read", {"key": f"k{i}"},
                                                  tool_call_id=f"h{i}")]),
                ModelRequest(parts=[ToolReturnPart("read", f"value {i}", tool_call_id=f"h{i}")]),
                ModelResponse(parts=[TextPart(f"file_{i}.py holds value {i}.")])]
    return out


def pydantic_ai_rows(runs: int = 400, history_turns: int = 40) -> list[dict[str, Any]]:
    """Measure and return the table rows (milliseconds per tool call, p50/p95)."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.toolsets import WrapperToolset

    from ctxgate.archive import Archive
    from ctxgate.gate import FunctionDecisionModel, GatePolicy, ToolGate
    from ctxgate.integrations.pydantic_ai import Ctxgate

    samples: list[float] = []

    @dataclass
    class Timed(WrapperToolset[Any]):
        async def call_tool(self, name, tool_args, ctx, tool):
            start = time.perf_counter()
            try:
                return await self.wrapped.call_tool(name, tool_args, ctx, tool)
            finally:
                samples.append(time.perf_counter() - start)

    @dataclass
    class Timing(AbstractCapability[Any]):
        sink: list[float] = field(default_factory=list)

        @classmethod
        def get_serialization_name(cls) -> str | None:
            return None

        def get_wrapper_toolset(self, toolset):
            return Timed(toolset)

    gate = ToolGate(FunctionDecisionModel(fn=lambda s, q: {"destructive": 0.05, "requested": 0.95},
                                          threaded=False),
                    GatePolicy(cache_ttl_seconds=0, fast_path=False, effects=False))
    decisions: list[float] = []
    real_decide = gate.decide

    async def timed_decide(*args: Any, **kwargs: Any):
        start = time.perf_counter()
        try:
            return await real_decide(*args, **kwargs)
        finally:
            decisions.append(time.perf_counter() - start)

    gate.decide = timed_decide  # type: ignore[method-assign]

    def turn(messages, info):
        """Call ``lookup`` once, then answer (pydantic-ai's scripted test model)."""
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("lookup", {"key": "a"})])

    def agent(gated: bool) -> Agent[None, str]:
        caps: list[Any] = [Timing()]
        if gated:
            caps.append(Ctxgate(gate=gate, archive=Archive()))
        a = Agent(FunctionModel(turn), capabilities=caps)

        @a.tool_plain
        async def lookup(key: str) -> str:
            return f"value of {key}: 42"

        return a

    plain_agent, gated_agent = agent(False), agent(True)
    rows: list[dict[str, Any]] = []

    async def measure(history: list[Any]) -> tuple[list[float], list[float], list[float]]:
        plain, gated, decide = [], [], []
        for _ in range(20):  # warm both paths (imports, caches)
            await plain_agent.run("look up the key", message_history=history)
            await gated_agent.run("look up the key", message_history=history)
        samples.clear()
        decisions.clear()
        for _ in range(runs):
            await plain_agent.run("look up the key", message_history=history)
            plain.append(samples.pop())
            await gated_agent.run("look up the key", message_history=history)
            gated.append(samples.pop())
            decide.append(decisions.pop())
        return plain, gated, decide

    for label, history in (("empty history", []),
                           (f"{history_turns}-turn history", _history(history_turns))):
        plain, gated, decide = asyncio.run(measure(history))
        overhead = [g - p - d for p, g, d in zip(plain, gated, decide, strict=True)]
        for name, xs in ((f"plain tool call ({label})", plain),
                         (f"gated tool call ({label})", gated),
                         (f"gate decide, constant-time model ({label})", decide),
                         (f"adapter overhead = gated - plain - decide ({label})", overhead)):
            ms = [x * 1000 for x in xs]
            rows.append({"what": name, "n": len(ms), "p50_ms": _pct(ms, 0.5),
                         "p95_ms": _pct(ms, 0.95), "mean_ms": statistics.fmean(ms)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--history", type=int, default=40, help="turns of history, 2nd table")
    args = parser.parse_args()
    before = os.getloadavg()
    rows = pydantic_ai_rows(args.runs, args.history)
    after = os.getloadavg()
    print(f"pydantic-ai adapter overhead per tool call (FunctionModel, {args.runs} interleaved runs "
          f"each); load average {before[0]:.2f} before, {after[0]:.2f} after; "
          f"{os.cpu_count()} CPUs")
    print("| what | n | p50 ms | p95 ms | mean ms |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['what']} | {r['n']} | {r['p50_ms']:.3f} | {r['p95_ms']:.3f} | "
              f"{r['mean_ms']:.3f} |")
    worst = max(r["p50_ms"] for r in rows if r["what"].startswith("adapter overhead"))
    print(f"target: adapter overhead <= 1 ms per tool call (p50); worst p50 {worst:.3f} ms: "
          f"{'met' if worst <= 1.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
