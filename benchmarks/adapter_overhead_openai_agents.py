"""What the OpenAI Agents SDK adapter adds per tool call, beyond the gate's own decision.

Target (issue 12): at most 1 ms per tool call. Two measurements, in one run, each against a
physical baseline measured interleaved with it:

1. **The tool invocation path, directly** (the number the target is about). One HTTP round
   trip to a model costs milliseconds and varies by more than the whole adapter, so the
   per-call path the SDK runs is called directly, as the SDK calls it: its own approval
   evaluation (``agents.util._approvals.evaluate_function_tool_approval``: for a plain tool
   ``needs_approval=False`` is read, for a wrapped one ctxgate's policy is called, which
   judges the call), each tool input guardrail (``guardrail.run``), then ``on_invoke_tool``.
   Plain and wrapped calls alternate; per pair, *overhead = wrapped − plain − decision*,
   where *decision* is the gate's own ``Verdict.latency_ms`` (the whole ``ToolGate.decide``,
   over a constant-time async ``FunctionDecisionModel``, cache and audit off). Rows: gate
   only, firewall only (no decision to subtract), both with an in-memory archive, both with
   the SQLite archive (``Archive.open``; a result smaller in bytes than ``min_tokens`` is
   shown whole without an archive write, so the two archive rows differ only by noise).
2. **End to end**: ``Runner.run`` of a plain and a wrapped agent against the local scripted
   Responses server (two HTTP requests per run, one tool call), alternated; the difference
   minus the decision. Reported for scale only: its noise is the HTTP stack's.

The tool returns a 60-byte string (the small result most calls have; a large one is the
firewall's digest cost, measured in docs/firewall.md).

    python benchmarks/adapter_overhead_openai_agents.py            # 2,000 calls, 100 runs
    python benchmarks/adapter_overhead_openai_agents.py --calls 500 --runs 30
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def make_gate() -> Any:
    from ctxgate.gate import GatePolicy, ToolGate
    from ctxgate.gate.backends.function import FunctionDecisionModel

    async def constant(state: Any, questions: Any) -> dict[str, float]:
        return {"destructive": 0.05, "requested": 0.9}

    return ToolGate(FunctionDecisionModel(fn=constant, model_id="constant"),
                    GatePolicy(cache_ttl_seconds=0), audit=None)


def make_tool() -> Any:
    from agents import function_tool

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"weather in {city}: sunny, 21 C, wind 3 m/s, humidity 40 %"

    return get_weather


async def one_call(tool: Any, agent: Any, n: int) -> tuple[float, float]:
    """One call through the SDK's per-call path; (seconds, the gate's decision seconds)."""
    from agents import ToolInputGuardrailData
    from agents.run_context import RunContextWrapper
    from agents.tool_context import ToolContext
    from agents.usage import Usage
    from agents.util._approvals import evaluate_function_tool_approval

    arguments = json.dumps({"city": f"city-{n}"})
    call_id = f"call_{n}"
    started = time.perf_counter()
    run = RunContextWrapper(context=None, usage=Usage(),
                            turn_input=[{"role": "user", "content": "what is the weather?"}])
    approval = await evaluate_function_tool_approval(tool, run, arguments, call_id)
    assert approval.outcome == "invoke"
    ctx = ToolContext.from_agent_context(run, call_id, tool_name=tool.name,
                                         tool_arguments=arguments, agent=agent)
    decision = 0.0
    for guardrail in tool.tool_input_guardrails or []:
        out = await guardrail.run(ToolInputGuardrailData(context=ctx, agent=agent))
        assert out.behavior["type"] == "allow"
        decision += out.output_info.latency_ms / 1000.0
    output = await tool.on_invoke_tool(ctx, arguments)
    assert isinstance(output, str)
    return time.perf_counter() - started, decision


async def direct(calls: int, home: Path) -> tuple[list[tuple[str, list[float], list[float]]], Any, Any]:
    from agents import Agent

    from ctxgate.archive import Archive
    from ctxgate.integrations.openai_agents import AgentGuard

    plain = make_tool()
    agent = Agent(name="bench")
    variants = {
        "gate only": AgentGuard(gate=make_gate(), archive=Archive(), firewall=False),
        "firewall only (memory archive)": AgentGuard(gate=False, archive=Archive()),
        "gate + firewall (memory archive)": AgentGuard(gate=make_gate(), archive=Archive()),
        "gate + firewall (SQLite archive)": AgentGuard(gate=make_gate(),
                                                       archive=Archive.open(home)),
    }
    rows = []
    for name, guard in variants.items():
        wrapped = guard.tool(plain)
        for n in range(50):  # warm up: imports, tokenizer tables, SQLite pages
            await one_call(plain, agent, n)
            await one_call(wrapped, agent, n)
        overhead, decisions = [], []
        for n in range(calls):
            base, _ = await one_call(plain, agent, n)
            total, decision = await one_call(wrapped, agent, n)
            overhead.append((total - base - decision) * 1e6)
            decisions.append(decision * 1e6)
        rows.append((name, overhead, decisions))
    return rows, plain, agent


async def end_to_end(runs: int) -> tuple[list[float], list[float], list[float]]:
    from agents import Agent, OpenAIResponsesModel, Runner
    from openai import AsyncOpenAI
    from tests.integrations.openai_agents.responses_server import ResponsesServer, call, text

    from ctxgate.archive import Archive
    from ctxgate.integrations.openai_agents import AgentGuard

    script = []
    for n in range(2 * (runs + 5)):
        script += [[call("get_weather", {"city": f"c{n}"}, f"call_{n}")], [text("sunny")]]
    guard = AgentGuard(gate=make_gate(), archive=Archive())
    with ResponsesServer(script) as server:
        client = AsyncOpenAI(base_url=server.url, api_key="bench", max_retries=0)
        model = OpenAIResponsesModel(model="scripted", openai_client=client)
        plain = Agent(name="bench", model=model, tools=[make_tool()])
        wrapped = guard.agent(plain)
        base, gated, decisions = [], [], []
        for n in range(runs + 5):
            t = time.perf_counter()
            await Runner.run(plain, "what is the weather?")
            b = time.perf_counter() - t
            t = time.perf_counter()
            result = await Runner.run(wrapped, "what is the weather?")
            g = time.perf_counter() - t
            if n >= 5:  # warm-up runs dropped
                base.append(b * 1e3)
                gated.append(g * 1e3)
                [gr] = result.tool_input_guardrail_results
                decisions.append(gr.output.output_info.latency_ms)
    return base, gated, decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="direct calls per row")
    parser.add_argument("--runs", type=int, default=100, help="end-to-end runs per agent")
    args = parser.parse_args()

    import agents

    load = os.getloadavg()
    print(f"openai-agents {agents.__version__}; load average {load[0]:.2f} / {load[1]:.2f} "
          f"(1 / 5 min) on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as home:
        rows, plain, agent = asyncio.run(direct(args.calls, Path(home)))
        base = [asyncio.run(one_call(plain, agent, n))[0] * 1e6 for n in range(200)]
    print(f"\n1. tool invocation path, {args.calls} alternated pairs per row "
          f"(plain call alone: p50 {pct(base, .5):.0f} µs, p95 {pct(base, .95):.0f} µs)")
    print(f"| {'adapter':<34} | decision p50 µs | overhead p50 µs | overhead p95 µs | "
          f"target ≤ 1,000 µs |")
    print(f"|{'-' * 36}|-----------------|-----------------|-----------------|"
          f"-------------------|")
    for name, overhead, decisions in rows:
        ok = "met" if pct(overhead, .5) <= 1000 else "NOT met"
        print(f"| {name:<34} | {pct(decisions, .5):15.0f} | {pct(overhead, .5):15.0f} | "
              f"{pct(overhead, .95):15.0f} | {ok:<17} |")
    if args.runs > 0:
        base_ms, gated_ms, decisions = asyncio.run(end_to_end(args.runs))
        diff = [g - b - d for g, b, d in zip(gated_ms, base_ms, decisions, strict=True)]
        print(f"\n2. end to end, Runner.run with one tool call against the local scripted "
              f"server (2 HTTP requests), {args.runs} alternated runs (ms)")
        print("| agent | p50 ms | p95 ms |")
        print("|---|---|---|")
        print(f"| plain | {pct(base_ms, .5):.2f} | {pct(base_ms, .95):.2f} |")
        print(f"| gate + firewall (memory archive) | {pct(gated_ms, .5):.2f} | "
              f"{pct(gated_ms, .95):.2f} |")
        print(f"| difference − decision (p50 of pairs; stdev {statistics.pstdev(diff):.2f}) | "
              f"{pct(diff, .5):.2f} | {pct(diff, .95):.2f} |")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
