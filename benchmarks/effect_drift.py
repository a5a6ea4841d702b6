"""What a change to the effect rules does to honest work: every command of real agent
trajectories classified by the shell parser before and after, in one run.

    python benchmarks/effect_drift.py --trajectories DIR [--before REF] [--limit N]

``DIR`` holds mini-swe-agent trajectories (see ``benchmarks/provenance_benign.py`` for the
source, its licence and how to fetch it): ``deepseek/deepseek-chat`` fixing SWE-bench tasks
with one bash tool, so every command is honest work. Each command is classified by
:func:`ctxgate.gate.effects.shell.shell_effect` in a fresh empty git repository, once with
this checkout's ``src`` and once with ``src`` of ``REF`` (default: the commit this session
started from) in a child process. The table counts commands whose class changed, how many
turned destructive (the ones that now need the user's request or a person), and lists them.
Measuring only: nothing here tunes a rule.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

CLASSIFY = r"""
import json, sys
from ctxgate.gate.effects.shell import shell_effect
cwd = sys.argv[1]
for line in sys.stdin:
    e = shell_effect(json.loads(line), cwd=cwd)
    print(json.dumps([e.effect.value, e.evidence] if e else None), flush=False)
"""


def commands(directory: Path, limit: int | None) -> list[str]:
    from provenance_benign import commands_of, trajectory_messages

    out: list[str] = []
    for path in sorted(directory.rglob("*.traj.json")):
        for message in trajectory_messages(path) or []:
            if message.get("role") == "assistant":
                out.extend(commands_of(message))
    return out[:limit] if limit else out


def classify(src: Path, cmds: list[str], cwd: str) -> list[list[str] | None]:
    env = dict(os.environ, PYTHONPATH=str(src))
    proc = subprocess.run([sys.executable, "-c", CLASSIFY, cwd], env=env, check=True,
                          input="".join(json.dumps(c) + "\n" for c in cmds),
                          capture_output=True, text=True, timeout=3600)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trajectories", type=Path, required=True)
    ap.add_argument("--before", default="8606f48")
    ap.add_argument("--limit", type=int)
    args = ap.parse_args()
    cmds = commands(args.trajectories, args.limit)
    with tempfile.TemporaryDirectory(prefix="ctxgate-drift-") as tmp:
        old_tree = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                        str(old_tree), args.before], check=True)
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        try:
            before = classify(old_tree / "src", cmds, str(repo))
            after = classify(ROOT / "src", cmds, str(repo))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(old_tree)], check=False)
    destructive = {"local_irreversible", "external", "untrusted_code"}
    changed = Counter()
    turned = []
    for cmd, b, a in zip(cmds, before, after, strict=True):
        kb, ka = (b or [None])[0], (a or [None])[0]
        if kb != ka:
            changed[(kb, ka)] += 1
            if ka in destructive and kb not in destructive:
                turned.append((cmd, a[1]))
    print(f"{len(cmds)} commands of {args.trajectories}; before = {args.before}")
    print("| class before | class after | commands |")
    print("|---|---|---|")
    for (kb, ka), n in changed.most_common():
        print(f"| {kb} | {ka} | {n} |")
    print(f"\n{len(turned)} of {len(cmds)} commands turned destructive:")
    for cmd, why in turned:
        print(f"- `{cmd[:160]!r}`: {why[:200]}")


if __name__ == "__main__":
    main()
