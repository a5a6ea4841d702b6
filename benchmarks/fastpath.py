"""Benchmark: decision latency and coverage of the read-only fast path (``is_read_only``).

For each corpus: the share allowed, and the latency of one ``is_read_only`` call in
microseconds (p50, p99, max), over all commands and split into commands whose decision runs
``git config`` (allowed-so-far ``git`` commands: one subprocess per directory the command may
run git in) and the rest (pure Python). Corpora: the adversarial sandbox corpus
(``tests/gate/data/fastpath_corpus.jsonl``), the mini-swe-agent commands
(``tests/gate/data/agent_commands``) and, when present, nl2bash (``/work/shared/data``).
The working directory for the decisions is a fresh clean git repository.

Run: ``python benchmarks/fastpath.py [--repeat N]`` (each command is decided N times; the
table reports every call). The load average is printed because the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import ctxgate.gate.fastpath.git as fastpath_git
from ctxgate.gate.fastpath import is_read_only

ROOT = Path(__file__).resolve().parent.parent
CORPORA = {
    "sandbox corpus": ROOT / "tests/gate/data/fastpath_corpus.jsonl",
    "mini-swe-agent": ROOT / "tests/gate/data/agent_commands/commands.jsonl",
    "nl2bash": Path("/work/shared/data/gate/nl2bash/all.cm"),
}


def load(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line)["cmd"] for line in text.splitlines()]
    return text.splitlines()


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (2 shared cores)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q", tmp], check=True)
        is_read_only("ls", cwd=tmp)  # import everything once, outside the timing
        print("\n| corpus | commands | allowed | µs p50 | µs p99 | µs max | decisions "
              "with git config | µs p50 (git) | µs p50 (rest) | µs p99 (rest) |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name, path in CORPORA.items():
            if not path.exists():
                continue
            commands = load(path)
            times, git_times, rest_times = [], [], []
            allowed = 0
            for cmd in commands:
                for r in range(args.repeat):
                    before = _CALLS[0]
                    t0 = time.perf_counter()
                    res = is_read_only(cmd, cwd=tmp)
                    dt = (time.perf_counter() - t0) * 1e6
                    times.append(dt)
                    (git_times if _CALLS[0] > before else rest_times).append(dt)
                    if r == 0:
                        allowed += res.read_only
            n = len(commands)
            print(f"| {name} | {n:,} | {allowed:,} ({allowed / n:.1%}) | {pct(times, .5):.0f} "
                  f"| {pct(times, .99):.0f} | {max(times):.0f} | {len(git_times):,} "
                  f"| {pct(git_times, .5):.0f} | {pct(rest_times, .5):.0f} "
                  f"| {pct(rest_times, .99):.0f} |")
        print(f"\n(mean of all calls: {statistics.fmean(times):.0f} µs on the last corpus)")


_CALLS = [0]
_run = fastpath_git.subprocess.run


class _CountingSubprocess:
    """``subprocess`` as the git module sees it, counting the ``git config`` runs."""

    def __getattr__(self, name):
        return getattr(fastpath_git.subprocess_module, name)

    @staticmethod
    def run(*a, **kw):
        _CALLS[0] += 1
        return _run(*a, **kw)


fastpath_git.subprocess_module = fastpath_git.subprocess
fastpath_git.subprocess = _CountingSubprocess()


if __name__ == "__main__":
    main()
