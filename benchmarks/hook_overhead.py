"""Added time per tool call of ctxgate's hooks, in the real Claude Code CLI and process by process.

Part 1 (Claude Code): the same scripted `claude -p` session (``--calls`` Bash calls, then a
final text, from the local Messages server of ``tests/integrations/messages_server.py``) runs
unhooked and hooked (conditions below), interleaved, ``--reps`` times each; the daemon is
warmed by one session first. The
added time per call of one repetition is (hooked session - unhooked session) / calls. Two
sessions: **fast path** (read-only commands the fast path proves: ``ls``, ``cat``, ``git
status`` …) and **model** (``echo N > out_N.txt``: the fast path refuses a redirection to a
file, so the local decision model decides; every command differs, so no verdict comes from the
cache). Hooked conditions: the installed hooks with the daemon; the same with every hook
deciding in-process (``CTXGATE_NO_DAEMON=1``); and the daemon with ``hook pre --no-rewrite``,
where no ``ctxgate run`` wrapper runs and ``hook post`` digests the output instead.

Part 2 (processes): wall time of one ``hook pre`` process (the command ``hook install``
writes, ``python -S …/_launch.py hook pre``, and ``python -m ctxgate hook pre``) fed each
payload, with the daemon warm and in-process; one ``hook post`` (a Grep output, and a Bash call
the pre-hook wrapped, which ends at start-up); the ``ctxgate run`` wrapper the hook puts around a
command (``python -S …/_launch.py run``, with and without the fast path's ``--sandbox
read-only``) against ``sh -c`` of it; and ``python -c pass`` (the
physical baseline) and ``python -S -c pass``.

Bytecode: this workplace sets PYTHONDONTWRITEBYTECODE=1, so every process would compile
ctxgate from source; an installed ctxgate has its .pyc files, so this script gives every
process a warmed PYTHONPYCACHEPREFIX (``--as-given`` keeps the environment as it is).

    python benchmarks/hook_overhead.py [--reps 5] [--calls 6] [--runs 20] [--skip-claude]

Needs the Claude Code CLI from ``scripts/install-test-deps`` (tests/integrations/node) and the
local decision model (``pip install 'ctxgate[local]'`` plus its weights).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.integrations.messages_server import MessagesServer, Turn  # noqa: E402

CLAUDE = REPO / "tests" / "integrations" / "node" / "node_modules" / ".bin" / "claude"
CONDITIONS = [("daemon", True, True), ("in-process", False, True),
              ("daemon, --no-rewrite (digest in hook post)", True, False)]
"""Hooked conditions: (name, daemon on, pre-hook rewrites shell calls into `ctxgate run`)."""
FAST_COMMANDS = ["ls", "cat README.md", "git status --short", "ls -la src", "wc -l README.md",
                 "head -n 2 README.md", "grep -n demo README.md", "git log --oneline -n 1"]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f} (1/5/15 min, {os.cpu_count()} CPUs)"


class Bench:
    def __init__(self, as_given: bool) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="ctxgate-hooklat-"))
        self.run_dir = Path(tempfile.mkdtemp(prefix="cgb", dir="/tmp"))
        os.chmod(self.run_dir, 0o700)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "CLAUDE_", "CTXGATE_"))}
        env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
        if not as_given:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(self.tmp / "pyc")
        home = self.tmp / "home"
        home.mkdir()
        env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"),
                   CTXGATE_HOME=str(self.tmp / "ctxgate-home"), ANTHROPIC_API_KEY="test",
                   DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                   DISABLE_AUTOUPDATER="1", XDG_RUNTIME_DIR=str(self.run_dir))
        self.env = env
        self.project = self.tmp / "project"
        (self.project / "src").mkdir(parents=True)
        (self.project / "README.md").write_text("# demo\nA demo project.\n", encoding="utf-8")
        (self.project / "src" / "main.py").write_text("print('hi')\n", encoding="utf-8")
        subprocess.run(["git", "init", "-q", str(self.project)], check=True, env=env)
        subprocess.run(["git", "-C", str(self.project), "add", "."], check=True, env=env)
        subprocess.run(["git", "-C", str(self.project), "-c", "user.email=b@x", "-c",
                        "user.name=b", "commit", "-qm", "init"], check=True, env=env)
        installed = json.loads(subprocess.run(
            [sys.executable, "-m", "ctxgate", "hook", "install"], env=env, capture_output=True,
            text=True, check=True, timeout=120).stdout)
        self.pre_command = shlex.split(installed["hooks"]["PreToolUse"][0]["hooks"][0]["command"])
        self.post_command = shlex.split(
            installed["hooks"]["PostToolUse"][0]["hooks"][0]["command"])
        self.hooked = self.tmp / "hooked.json"
        self.hooked.write_text(json.dumps({"permissions": {"allow": ["Bash"]}, **installed}))
        installed["hooks"]["PreToolUse"][0]["hooks"][0]["command"] += " --no-rewrite"
        self.no_rewrite = self.tmp / "no-rewrite.json"  # digested by `hook post` instead
        self.no_rewrite.write_text(json.dumps({"permissions": {"allow": ["Bash"]},
                                               **installed}))
        self.bare = self.tmp / "bare.json"
        self.bare.write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
        self.session_no = 0

    def stop_daemons(self) -> None:
        for lock in (self.run_dir / "ctxgate").glob("g-*.lock"):
            pid = lock.read_text().strip()
            if pid.isdigit():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass

    def close(self) -> None:
        self.stop_daemons()
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(self.run_dir, ignore_errors=True)

    # -- part 1 -----------------------------------------------------------------------------

    def session(self, kind: str, calls: int, *, hooked: bool, daemon: bool = True,
                rewrite: bool = True) -> float:
        """Wall seconds of one `claude -p` session of ``calls`` Bash calls."""
        self.session_no += 1
        n = self.session_no
        if kind == "fast":
            commands = [FAST_COMMANDS[i % len(FAST_COMMANDS)] for i in range(calls)]
            prompt = "Look around the project: list it, read the README, check git."
        else:
            commands = [f"echo {n}{i} > out_{n}_{i}.txt" for i in range(calls)]
            prompt = "Write the numbers into the out_*.txt files, one file per number."
        script = [Turn(tool="Bash", tool_input={"command": c, "description": "step"})
                  for c in commands] + [Turn(text="Done.")]
        env = dict(self.env)
        if not daemon:
            env["CTXGATE_NO_DAEMON"] = "1"
        with MessagesServer(script) as server:
            env["ANTHROPIC_BASE_URL"] = server.url
            started = time.perf_counter()
            proc = subprocess.run(
                [str(CLAUDE), "-p", prompt, "--output-format", "json", "--settings",
                 str(self.bare if not hooked else self.hooked if rewrite else self.no_rewrite),
                 "--allowedTools", "Bash"],
                cwd=self.project, env=env, capture_output=True, text=True, timeout=600)
            elapsed = time.perf_counter() - started
            turns = len(server.main_requests())
        if proc.returncode != 0 or turns != calls + 1:
            raise SystemExit(f"claude session failed (exit {proc.returncode}, {turns} turns of "
                             f"{calls + 1}): {proc.stderr[-1500:]}")
        return elapsed

    # -- part 2 -----------------------------------------------------------------------------

    def process_ms(self, argv: list[str], data: bytes, runs: int,
                   env: dict[str, str] | None = None) -> list[float]:
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(argv, input=data, capture_output=True, env=env or self.env,
                           cwd=self.project, timeout=300)
            times.append((time.perf_counter() - started) * 1000)
        return times

    def rewrite(self, command: str, *, read_only: bool) -> str:
        """What the pre-hook rewrites ``command`` into (this checkout's handlers)."""
        code = ("import sys; from ctxgate.integrations.hooks.handlers import wrap_shell_command"
                f" as w; print(w({command!r}, read_only={read_only!r}))")
        return subprocess.run([sys.executable, "-c", code], env=self.env, capture_output=True,
                              text=True, check=True, timeout=120).stdout.strip()

    def payload(self, command: str, event: str = "PreToolUse") -> bytes:
        transcript = self.tmp / "transcript.jsonl"
        transcript.write_text(json.dumps({"type": "user", "message": {
            "role": "user", "content": "Write the numbers into the out files."}}) + "\n")
        data = {"hook_event_name": event, "tool_name": "Bash", "session_id": "b",
                "tool_input": {"command": command}, "cwd": str(self.project),
                "tool_use_id": "t", "transcript_path": str(transcript)}
        if event == "PostToolUse" and command:  # a Bash call, as it ran
            data["tool_response"] = {"stdout": "README.md\nsrc\n", "stderr": "",
                                     "interrupted": False, "isImage": False}
        elif event == "PostToolUse":
            data["tool_input"] = {"pattern": "demo"}
            data["tool_name"] = "Grep"
            data["tool_response"] = {"content": "README.md:2:A demo project."}
        return json.dumps(data).encode()


def row(name: str, values: list[float], baseline: float | None = None, unit: str = "ms") -> str:
    p50, p95 = pct(values, 0.5), pct(values, 0.95)
    extra = f"{p50 - baseline:+8.0f}" if baseline is not None else " " * 8
    return f"| {name:<58} | {p50:8.0f} | {p95:8.0f} | {extra} | {len(values):3d} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5, help="sessions per condition and kind")
    parser.add_argument("--calls", type=int, default=6, help="Bash calls per session")
    parser.add_argument("--runs", type=int, default=20, help="processes per timing in part 2")
    parser.add_argument("--skip-claude", action="store_true", help="part 2 only")
    parser.add_argument("--as-given", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE (every process compiles ctxgate)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the daemons on the way out
    bench = Bench(args.as_given)
    print(f"load average at start: {load()}")
    print(f"python {sys.version.split()[0]}, bytecode "
          f"{'as given' if args.as_given else 'cached (PYTHONPYCACHEPREFIX)'}")
    try:
        py = [sys.executable]
        hook_pre = bench.pre_command  # as installed: python -S …/_launch.py hook pre
        # warm the bytecode cache and the daemon
        for _ in range(2):
            bench.process_ms(hook_pre, bench.payload("ls"), 1)
            bench.process_ms(hook_pre, bench.payload("echo warm > warm.txt"), 1)
        lines = ["", "## Processes (wall time of one process, ms)", "",
                 "| process | p50 | p95 | p50 - baseline | n |", "|---|---|---|---|---|"]
        base = bench.process_ms(py + ["-c", "pass"], b"", args.runs)
        b50 = pct(base, 0.5)
        lines.append(row("python -c pass (physical baseline)", base))
        base_s = bench.process_ms(py + ["-S", "-c", "pass"], b"", args.runs)
        lines.append(row("python -S -c pass (baseline without site)", base_s))
        no_daemon = {**bench.env, "CTXGATE_NO_DAEMON": "1"}
        lines.append(row("python -m ctxgate hook pre, fast path: ls, daemon warm",
                         bench.process_ms(py + ["-m", "ctxgate", "hook", "pre"],
                                          bench.payload("ls"), args.runs), b50))
        for label, command in (("fast path: ls", "ls"),
                               ("model: echo N > out_N.txt", None)):
            for where, env in (("daemon warm", None), ("in-process", no_daemon)):
                times = []
                for i in range(args.runs):
                    cmd = command or f"echo {time.monotonic_ns()}{i} > out_{i}.txt"
                    times += bench.process_ms(hook_pre, bench.payload(cmd), 1, env)
                lines.append(row(f"hook pre (installed), {label}, {where}", times, b50))
        post = bench.payload("", "PostToolUse")
        hook_post = bench.post_command
        lines.append(row("hook post (installed), small Grep output, daemon warm",
                         bench.process_ms(hook_post, post, args.runs), b50))
        lines.append(row("hook post (installed), small Grep output, in-process",
                         bench.process_ms(hook_post, post, args.runs, no_daemon), b50))
        wrapped_post = bench.payload(bench.rewrite("ls", read_only=True), "PostToolUse")
        lines.append(row("hook post (installed), Bash call the pre-hook wrapped",
                         bench.process_ms(hook_post, wrapped_post, args.runs), b50))
        sh = bench.process_ms(["sh", "-c", "ls"], b"", args.runs)
        lines.append(row("sh -c ls (what the agent's call costs unhooked)", sh))
        for read_only in (True, False):
            wrapper = shlex.split(bench.rewrite("ls", read_only=read_only))
            label = " ".join(["python -S …/_launch.py", *wrapper[3:]])
            lines.append(row(f"{label} (the hook's rewrite)",
                             bench.process_ms(wrapper, b"", args.runs), pct(sh, 0.5)))
        if not args.skip_claude:
            if not CLAUDE.exists():
                raise SystemExit(f"{CLAUDE} is missing: run scripts/install-test-deps")
            bench.session("fast", 1, hooked=True)  # warms the daemon and claude's caches
            bench.session("model", 1, hooked=True)
            bench.session("fast", 1, hooked=False)
            per_call: dict[tuple[str, str], list[float]] = {}
            sessions: dict[tuple[str, str], list[float]] = {}
            for _ in range(args.reps):
                for kind in ("fast", "model"):
                    bare = bench.session(kind, args.calls, hooked=False)
                    for cond, daemon, rewrite in CONDITIONS:
                        hooked = bench.session(kind, args.calls, hooked=True, daemon=daemon,
                                               rewrite=rewrite)
                        per_call.setdefault((kind, cond), []).append(
                            (hooked - bare) / args.calls * 1000)
                        sessions.setdefault((kind, cond), []).append(hooked)
                    sessions.setdefault((kind, "unhooked"), []).append(bare)
            head = ["", f"## Claude Code CLI: added time per Bash call, ms ({args.reps} "
                    f"session pairs of {args.calls} calls each)", "",
                    "| session | p50 | p95 | session p50 (s) | n |", "|---|---|---|---|---|"]
            for kind in ("fast", "model"):
                for cond, _daemon, _rewrite in CONDITIONS:
                    v = per_call[(kind, cond)]
                    label = f"{'fast path' if kind == 'fast' else 'model'} decides, hooks {cond}"
                    head.append(f"| {label:<58} | {pct(v, .5):8.0f} | {pct(v, .95):8.0f} | "
                                f"{pct(sessions[(kind, cond)], .5):8.2f} | {len(v):3d} |")
                bare = sessions[(kind, "unhooked")]
                head.append(f"| {'(the same session unhooked)':<58} | {'':>8} | {'':>8} | "
                            f"{pct(bare, .5):8.2f} | {len(bare):3d} |")
            lines[:0] = head
        print("\n".join(lines))
        print(f"\nload average at end: {load()}")
    finally:
        bench.close()


if __name__ == "__main__":
    main()
