"""Cold start of `ctxgate expand` on a small entry: median wall time of fresh processes.

Compared in the same run with `python -c pass` (the interpreter's own start) and
`python -c "import ctxgate.cli"` (the CLI's imports without doing anything). Two columns: the
environment as given (this workplace sets PYTHONDONTWRITEBYTECODE=1, so every process compiles
every module from source) and with bytecode caching allowed (PYTHONPYCACHEPREFIX in a temp
dir, warmed first), which is what an installed ctxgate sees. `expand (argparse twin)` is
`ctxgate.cli.expand.fast_main`, the same command without typer's per-process pydantic setup.

The local decision model's cold start (a fresh process that loads it and decides one call) is
measured for the new model and, in the same run, for the old one (all-MiniLM-L6-v2 in numpy,
commit ``gate_quality.BASELINE_COMMIT``, its ``src`` on ``PYTHONPATH``); ``--baseline none``
skips the old one. ``ctxgate gate check`` rows run the whole CLI with the model deciding.

    python benchmarks/cold_start.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DECIDE = ("from ctxgate.gate.backends.local import LocalDecisionModel; "
          "LocalDecisionModel().decide({'user_request': 'email Dana the report', 'tool_call': "
          "{'tool': 'send_email', 'arguments': {'to': 'dana@example.com'}}}, "
          "['destructive', 'requested'])")
GATE_CHECK = ["gate", "check", "--tool", "bash", "--args", '{"command": "rm -rf build"}',
              "--request", "delete the build directory"]


def _median_ms(cmd: list[str], env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--model-rows", action="store_true",
                        help="only python -c pass and the local model's rows")
    parser.add_argument("--baseline", default=None,
                        help="commit of the old local model ('none' to skip)")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from gate_quality import BASELINE_COMMIT, baseline_tree

    baseline = args.baseline or BASELINE_COMMIT
    home = tempfile.mkdtemp(prefix="ctxgate-cold-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env["CTXGATE_HOME"] = home
    env["CTXGATE_CONFIG"] = str(Path(home) / "none.toml")
    from ctxgate.archive import Archive

    with Archive.open(Path(home)) as a:
        small = a.put(b"".join(b"line %d of a small tool output\n" % i for i in range(40)))
    exe = shutil.which("ctxgate") or "ctxgate"
    fast = ("from ctxgate.cli.fast import expand_main; "
            f"expand_main(['{small.short_id}', '--lines', '1:20'])")
    rows = [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("python -c 'import ctxgate.cli'", [sys.executable, "-c", "import ctxgate.cli"]),
        ("expand --lines 1:20 (argparse twin)", [sys.executable, "-c", fast]),
        ("ctxgate expand ID --lines 1:20", [exe, "expand", small.short_id, "--lines", "1:20"]),
        ("ctxgate expand ID --grep 'of a' -m 5", [exe, "expand", small.short_id, "--grep",
                                                  "of a", "-m", "5"]),
        ("ctxgate archive stat ID (typer)", [exe, "archive", "stat", small.short_id]),
        ("ctxgate run -- true", [exe, "run", "--", "true"]),
        ("ctxgate version (typer)", [exe, "version"]),
        ("local model: load + 1 decision (new)", [sys.executable, "-c", DECIDE]),
        ("gate check, model decides (new)", [sys.executable, "-m", "ctxgate", *GATE_CHECK]),
    ]
    if baseline != "none":
        old = str(baseline_tree(baseline))
        rows += [("local model: load + 1 decision (old)", [sys.executable, "-c", DECIDE], old),
                 ("gate check, model decides (old)",
                  [sys.executable, "-m", "ctxgate", *GATE_CHECK], old)]
    if args.model_rows:
        rows = [r for r in rows if r[0] == "python -c pass" or "model" in r[0]]
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"{args.runs} runs each")
    cached = dict(env, PYTHONPYCACHEPREFIX=os.path.join(home, "pycache"))
    cached.pop("PYTHONDONTWRITEBYTECODE", None)
    print(f"{'command':<40} {'median ms (as is)':>18} {'median ms (.pyc)':>17}")
    for label, cmd, *path in rows:
        if path:  # the old model's tree first on the path
            env_row = dict(env, PYTHONPATH=path[0])
            cached_row = dict(cached, PYTHONPATH=path[0])
        else:
            env_row, cached_row = env, cached
        _run_rows(label, cmd, env_row, cached_row, args.runs)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    shutil.rmtree(home, ignore_errors=True)


def _run_rows(label: str, cmd: list[str], env: dict[str, str], cached: dict[str, str],
              runs: int) -> None:
    _median_ms(cmd, env, 2)  # warm the page cache
    _median_ms(cmd, cached, 2)  # write the bytecode cache
    as_is = _median_ms(cmd, env, runs)
    with_pyc = _median_ms(cmd, cached, runs)
    print(f"{label:<40} {as_is:>18.1f} {with_pyc:>17.1f}", flush=True)


if __name__ == "__main__":
    main()
