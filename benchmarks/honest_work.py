"""How much honest coding work does the whole gate refuse? Real coding-agent commands.

    python benchmarks/honest_work.py --trajectories DIR [--step 10] [--show 40]

``DIR`` holds mini-swe-agent trajectories (``**/*.traj.json``; MIT, Copyright (c) 2025 Kilian
A. Lieret and Carlos E. Jimenez): ``deepseek/deepseek-chat`` solving SWE-bench tasks with one
bash tool, from ``output/`` of https://github.com/SWE-agent/mini-swe-agent at commit
``ec0e8e849fea5b1619deb1753007201000904672`` (how to fetch it: ``provenance_benign.py``).

Every command there is an agent's honest work on the task it was given, so each ``deny`` is a
false denial and each ``ask`` a question a person must answer for nothing. Every ``--step``-th
command of every trajectory (in order; deterministic) goes through a real
:class:`~ctxgate.gate.ToolGate` (default policy, the shipped local backend) with the task (the
trajectory's first user message) as the request and the conversation up to the command.

Where it runs: the agent worked in ``/testbed``, a git checkout of the project. Each command
gets a fresh git repository standing in for it (``/testbed`` in the command is replaced by the
repository's path), in which every path the command names exists (``named_paths`` of
``gate_quality.py``, written for the benchmarks, not the gate's parser): committed and clean,
as project files are, unless an earlier command of the same trajectory wrote it (a ``>``/
``>>`` target, ``tee``, ``touch``, ``cp``/``mv`` destination): then it is the agent's own
untracked file; a ``>``/``tee``/``touch`` target no earlier command wrote does not exist yet
(the command creates it). The repository holds no ignore rules and no build output, so the numbers are a
conservative stand-in for a real checkout. Measuring only: nothing here tunes the gate.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gate_quality import materialise, named_paths  # noqa: E402
from provenance_benign import commands_of, text_of, trajectory_messages  # noqa: E402

_WRITE_TARGET = re.compile(r"(?:>>?|\btee\s+(?:-a\s+)?|\btouch\s+)\s*['\"]?([\w./-]+)")


def written_paths(command: str) -> set[str]:
    """Relative paths a command writes (redirection targets, ``tee``, ``touch``, the last
    operand of ``cp``/``mv``), ``/testbed/`` removed: the agent's own files from then on."""
    text = command.replace("/testbed/", "")
    out = {m.group(1) for m in _WRITE_TARGET.finditer(text)}
    for segment in re.split(r"&&|\|\||;|\n", text):
        try:
            words = shlex.split(segment)
        except ValueError:
            continue
        if len(words) >= 3 and words[0] in ("cp", "mv"):
            out.add(words[-1])
    return {p.lstrip("./") or p for p in out if not p.startswith(("/", "&", "-"))}


def kind_of(command: str) -> str:
    """A coarse kind for the table (by what the command mostly does)."""
    body = re.sub(r"^\s*cd\s+\S+\s*&&\s*", "", command.strip())
    first = body.split(None, 1)[0] if body.split() else ""
    if re.search(r"\bsed\s+(-[a-zA-Z]*i|--in-place)", body):
        return "edit in place (sed -i)"
    if re.search(r"(^|[^<2&])>{1,2}\s*[\w./'\"-]", body) or first in ("tee", "touch"):
        return "write a file (redirect, tee)"
    if first in ("cp", "mv", "patch") or body.startswith("git apply"):
        return "copy / move / patch"
    if first in ("rm", "rmdir") or re.search(r"\brm\s", body):
        return "delete (rm)"
    if first in ("python", "python3", "pytest", "sqlfluff") or "python" in first:
        return "run code (python, tests)"
    if first in ("pip", "conda"):
        return "install (pip, conda)"
    if first == "git":
        return "git"
    return "read / search / other"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trajectories", type=Path, required=True)
    ap.add_argument("--step", type=int, default=10, help="judge every N-th command")
    ap.add_argument("--show", type=int, default=40, help="refused commands to print")
    args = ap.parse_args()

    from ctxgate.gate import ToolCall, ToolGate
    from ctxgate.gate.loader import load_decision_model
    from ctxgate.gate.policy import GatePolicy

    policy = GatePolicy(audit=False)
    gate = ToolGate(load_decision_model("local", policy), policy)
    files = sorted(args.trajectories.rglob("*.traj.json"))
    by_kind: dict[str, Counter] = {}
    reasons: Counter = Counter()
    refused: list[str] = []
    index = 0
    started = time.monotonic()
    trajectories = 0
    for path in files:
        messages = trajectory_messages(path)
        if messages is None:
            continue
        trajectories += 1
        request = next((text_of(m) for m in messages if m.get("role") == "user"), "")
        seen: list[dict[str, Any]] = []
        own: set[str] = set()
        for m in messages:
            if m.get("role") == "assistant":
                for command in commands_of(m):
                    index += 1
                    if index % args.step == 0:
                        outcome, why = judge(gate, ToolCall, command, seen, request, own)
                        kind = kind_of(command)
                        by_kind.setdefault(kind, Counter())[outcome] += 1
                        if outcome != "allow":
                            reasons[why] += 1
                            refused.append(f"{outcome:5} {why:42} {command[:150]!r}")
                    own |= written_paths(command)
            if m.get("role") in ("user", "assistant", "tool", "system"):
                seen.append({"role": m["role"], "content": text_of(m)})
    took = time.monotonic() - started
    total = Counter()
    for c in by_kind.values():
        total.update(c)
    n = sum(total.values())
    print(f"{trajectories} trajectories, {n} commands judged (every {args.step}th of {index}), "
          f"{took:.0f} s, load average {os.getloadavg()[0]:.2f}; local backend, default policy\n")
    print("| kind | n | allow | ask | deny | refused (ask or deny) |")
    print("|---|---|---|---|---|---|")
    for kind, c in sorted(by_kind.items(), key=lambda kv: -sum(kv[1].values())) + [
            ("all", total)]:
        k = sum(c.values())
        print(f"| {kind} | {k} | {c['allow']} | {c['ask']} | {c['deny']} | "
              f"{(c['ask'] + c['deny']) / max(k, 1):.1%} |")
    print("\nrefusals by verdict code and effect:")
    for why, k in reasons.most_common():
        print(f"  {k:4}  {why}")
    print()
    for line in refused[: args.show]:
        print("  " + line)


def judge(gate: Any, tool_call: Any, command: str, seen: list[dict[str, Any]], request: str,
          own: set[str]) -> tuple[str, str]:
    """One command through the gate in a repository standing in for ``/testbed``."""
    relative = re.sub(r"(^|&&|;)\s*cd\s+/testbed\s*(?=&&|;|$)", r"\1", command)
    relative = relative.replace("/testbed/", "").replace("/testbed", ".")
    created = {p for p in (m.group(1).lstrip("./") for m in _WRITE_TARGET.finditer(relative))
               if p not in own}
    paths = {p: d for p, d in named_paths(relative).items() if p not in created}
    # one fixed path, so that the command the model reads is the same in every run
    tmp = os.path.join(tempfile.gettempdir(), "ctxgate-honest-work", "testbed")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        materialise(Path(tmp), paths, changed=False, untracked={p for p in own if p in paths})
        gate.new_run()
        call = tool_call(tool="bash", arguments={"command": command.replace("/testbed", tmp)},
                         cwd=tmp)
        verdict = gate.decide_sync(call, conversation=seen, user_request=request)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    effect = verdict.effect.effect.value if verdict.effect is not None else "-"
    return verdict.outcome, f"{verdict.code} / {effect}"


if __name__ == "__main__":
    main()
