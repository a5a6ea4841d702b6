"""One table: what each of the three framework adapters adds per tool call beyond the gate's
own decision, each on its framework's own per-call path, against the plain call in the same run.

    python benchmarks/adapter_overhead.py [--calls 300]

Per adapter the row reuses that adapter's benchmark (see each script's docstring for how its
path is timed), with a constant-time ``FunctionDecisionModel`` and interleaved plain/wrapped
calls; *overhead = wrapped − plain − decision* per pair (pydantic-ai: a real ``FunctionModel``
run with an empty history; LangChain: ``CtxgateMiddleware.wrap_tool_call`` against its handler
alone; Agents SDK: approval evaluation, input guardrails and ``on_invoke_tool``, gate +
memory-archive firewall). The physical baseline is the plain call's own time, measured in the
same run. Wall times in milliseconds, p50 (p95); the machine's load average is printed. The
full per-adapter tables (histories, graph runs, end to end) come from
``adapter_overhead_<framework>.py``. Target: ≤ 1 ms per tool call.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

import adapter_overhead_langchain as lc
import adapter_overhead_pydantic_ai as pa

from ctxgate.archive import Archive


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def _cells(xs: list[float]) -> str:
    return f"{_pct(xs, 0.5):.3f} ({_pct(xs, 0.95):.3f})"


def rows(calls: int) -> list[tuple[str, str, str, str, float]]:
    """``(adapter, plain, decision, overhead, overhead p50)``, milliseconds."""
    out = []
    by_name = {r["what"]: r for r in pa.pydantic_ai_rows(runs=calls, history_turns=0)}

    def cell(name: str) -> str:
        r = by_name[f"{name} (empty history)"]
        return f"{r['p50_ms']:.3f} ({r['p95_ms']:.3f})"

    over = by_name["adapter overhead = gated - plain - decide (empty history)"]
    out.append(("pydantic-ai (`Ctxgate`, FunctionModel run)", cell("plain tool call"),
                cell("gate decide, constant-time model"),
                cell("adapter overhead = gated - plain - decide"), over["p50_ms"]))
    with tempfile.TemporaryDirectory() as home, Archive.open(Path(home)) as archive:
        bare, wrapped, decided = lc.micro(archive, calls)
    over_lc = [(w - b - d) * 1000 for b, w, d in zip(bare, wrapped, decided, strict=True)]
    out.append(("LangChain (`CtxgateMiddleware.wrap_tool_call`)",
                _cells([b * 1000 for b in bare]), _cells([d * 1000 for d in decided]),
                _cells(over_lc), _pct(over_lc, 0.5)))
    # imported last: it puts tests/integrations on sys.path (for its scripted server), where
    # folders named like the frameworks would shadow them
    import adapter_overhead_openai_agents as oa

    with tempfile.TemporaryDirectory() as home:
        found, plain, agent = asyncio.run(oa.direct(calls, Path(home)))
        base = [asyncio.run(oa.one_call(plain, agent, n))[0] * 1000 for n in range(calls)]
    _, overhead, decisions = next(r for r in found if r[0] == "gate + firewall (memory archive)")
    over_oa = [x / 1000 for x in overhead]
    out.append(("OpenAI Agents SDK (`AgentGuard`, tool path)", _cells(base),
                _cells([d / 1000 for d in decisions]), _cells(over_oa), _pct(over_oa, 0.5)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="interleaved pairs per adapter")
    args = parser.parse_args()
    before = os.getloadavg()[0]
    table = rows(args.calls)
    print(f"adapter overhead per tool call, {args.calls} pairs each; load average "
          f"{before:.2f} before, {os.getloadavg()[0]:.2f} after; {os.cpu_count()} CPUs; "
          "ms, p50 (p95)")
    print("| adapter | plain call (baseline) | gate decision | adapter overhead | ≤ 1 ms (p50) |")
    print("|---|---|---|---|---|")
    for adapter, plain, decision, overhead, p50 in table:
        print(f"| {adapter} | {plain} | {decision} | {overhead} | "
              f"{'met' if p50 <= 1.0 else 'NOT met'} |")


if __name__ == "__main__":
    main()
