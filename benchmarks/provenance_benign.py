"""How often the provenance check would stop honest work: real coding-agent trajectories.

    python benchmarks/provenance_benign.py --trajectories DIR [--limit N]

``DIR`` holds mini-swe-agent trajectories (``**/*.traj.json``; MIT, Copyright (c) 2025 Kilian
A. Lieret and Carlos E. Jimenez): ``deepseek/deepseek-chat`` solving SWE-bench tasks with one
bash tool, from ``output/`` of https://github.com/SWE-agent/mini-swe-agent at commit
``ec0e8e849fea5b1619deb1753007201000904672`` (the source of
``tests/gate/data/agent_commands``). Fetch it outside the repository, e.g.::

    git clone https://github.com/SWE-agent/mini-swe-agent /tmp/msa
    git -C /tmp/msa checkout ec0e8e849fea5b1619deb1753007201000904672

Every command of every trajectory is an agent's honest work on the task it was given (the
task, a pull-request description, is the request). For each command, with the conversation up
to it (its ``tool`` messages are what the commands printed), the script counts the commands
holding a target that only tool output named (:func:`ctxgate.gate.provenance.foreign_targets`)
and runs those through the whole gate (default policy, local backend, an empty git
repository as ``cwd``): each ``tool_output_target`` verdict there is a false ask. Measuring
only: nothing here tunes the check.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any


def commands_of(message: dict[str, Any]) -> list[str]:
    """The shell commands an assistant message ran (mini-swe-agent's ``extra.actions``)."""
    extra = message.get("extra") or {}
    out = [a.get("command") for a in extra.get("actions") or [] if isinstance(a, dict)]
    return [c for c in out if isinstance(c, str) and c.strip()]


def trajectory_messages(path: Path) -> list[dict[str, Any]] | None:
    """The messages of one mini-swe-agent trajectory file, or ``None`` when it is unreadable
    or in another format (an empty file in the snapshot, a list at the top)."""
    try:
        traj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(traj, dict):
        return None
    return [m for m in traj.get("messages", []) if isinstance(m, dict)]


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trajectories", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=0, help="at most this many trajectories")
    args = ap.parse_args()

    from ctxgate.gate import ToolCall, ToolGate
    from ctxgate.gate.loader import load_decision_model
    from ctxgate.gate.policy import GatePolicy
    from ctxgate.gate.provenance import foreign_targets

    files = sorted(args.trajectories.rglob("*.traj.json"))[: args.limit or None]
    policy = GatePolicy(audit=False)
    gate = ToolGate(load_decision_model("local", policy), policy)
    started = time.monotonic()
    counts: Counter = Counter()
    examples: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ctxgate-provenance-") as cwd:
        env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
        subprocess.run(["git", "init", "-q"], cwd=cwd, env=env, check=True)
        for path in files:
            messages = trajectory_messages(path)
            if messages is None:
                counts["unreadable trajectories"] += 1
                continue
            counts["trajectories"] += 1
            request = next((text_of(m) for m in messages if m.get("role") == "user"), "")
            seen: list[dict[str, Any]] = []
            for m in messages:
                role = m.get("role")
                if role == "assistant":
                    for command in commands_of(m):
                        counts["commands"] += 1
                        call_args = {"command": command}
                        if not foreign_targets(call_args, seen, request):
                            continue
                        counts["commands with a target only tool output named"] += 1
                        gate.new_run()
                        verdict = gate.decide_sync(
                            ToolCall(tool="bash", arguments=call_args, cwd=cwd),
                            conversation=seen, user_request=request)
                        counts[f"  of which: {verdict.outcome} ({verdict.code})"] += 1
                        if verdict.code == "tool_output_target":
                            examples.append(command[:160].replace("\n", " "))
                if role in ("user", "assistant", "tool", "system"):
                    seen.append({"role": role, "content": text_of(m)})
    took = time.monotonic() - started
    print(f"{counts['trajectories']} trajectories, {counts['commands']} commands, "
          f"{took:.0f} s; load average {os.getloadavg()[0]:.2f}\n")
    print("| what | n | share of commands |")
    print("|---|---|---|")
    total = max(counts["commands"], 1)
    for key, n in sorted(counts.items(), key=lambda kv: (not kv[0].startswith("commands"),
                                                          kv[0])):
        if key in ("trajectories", "unreadable trajectories"):
            continue
        print(f"| {key} | {n} | {n / total:.2%} |")
    asked = sum(n for k, n in counts.items() if "tool_output_target" in k)
    print(f"\nfalse asks by the provenance check: {asked} of {counts['commands']} honest "
          f"commands ({asked / total:.3%})")
    for e in examples[:20]:
        print(f"  asked: {e}")
    check_cost()


def check_cost(chars: int = 2_000_000, rounds: int = 5) -> None:
    """The check on the largest tool output it reads (``MAX_SCANNED_CHARS`` code points of
    log-like text holding addresses, URLs and numbers), beside one ``str.lower`` of the same
    text (a pass the check must make anyway)."""
    import random
    import statistics

    from ctxgate.gate.provenance import foreign_targets

    rng = random.Random(7)
    words = ["error", "at", "line", "12345678", "https://example.org/x", "ops@example.com",
             "GB33BUKB20201555555555", "2026-12-05", "lorem", "ipsum", "dolor", "sit"]
    text = " ".join(rng.choice(words) for _ in range(chars // 5))[:chars]
    convo = [{"role": "tool", "content": text}]
    call = {"to": "ops@example.com", "iban": "GB33 BUKB 2020 1555 5555 55",
            "url": "https://collect.example.net/k", "phone": "+44 20 7946 0958"}
    check, lower = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        foreign_targets(call, convo, "send the report")
        check.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        text.lower()
        lower.append((time.perf_counter() - t) * 1000)
    print(f"\ncheck on a {chars:,}-code-point tool output, 4 targets in the call: p50 "
          f"{statistics.median(check):.1f} ms (one str.lower of the same text: "
          f"{statistics.median(lower):.1f} ms)")


if __name__ == "__main__":
    sys.exit(main())
