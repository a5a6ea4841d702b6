"""Cold start of `ctxgate expand` on a small entry: median wall time of fresh processes.

Compared in the same run with `python -c pass` (the interpreter's own start) and
`python -c "import ctxgate.cli"` (the CLI's imports without doing anything). Two columns: the
environment as given (this workplace sets PYTHONDONTWRITEBYTECODE=1, so every process compiles
every module from source) and with bytecode caching allowed (PYTHONPYCACHEPREFIX in a temp
dir, warmed first), which is what an installed ctxgate sees. `expand (argparse twin)` is
`ctxgate.cli.expand.fast_main`, the same command without typer's per-process pydantic setup.

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
    args = parser.parse_args()
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
    ]
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"{args.runs} runs each")
    cached = dict(env, PYTHONPYCACHEPREFIX=os.path.join(home, "pycache"))
    cached.pop("PYTHONDONTWRITEBYTECODE", None)
    print(f"{'command':<40} {'median ms (as is)':>18} {'median ms (.pyc)':>17}")
    for label, cmd in rows:
        _median_ms(cmd, env, 2)  # warm the page cache
        _median_ms(cmd, cached, 2)  # write the bytecode cache
        as_is = _median_ms(cmd, env, args.runs)
        with_pyc = _median_ms(cmd, cached, args.runs)
        print(f"{label:<40} {as_is:>18.1f} {with_pyc:>17.1f}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
