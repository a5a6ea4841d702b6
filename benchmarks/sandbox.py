"""What the read-only sandbox costs: each available mechanism against no sandbox.

For every mechanism this machine has (``ctxgate.sandbox.detect(probe_all=True)``) it runs, as
real processes, ``true`` and ``cat FILE`` of a 10 MB file (output read through a pipe, as
``ctxgate run`` reads it), ``--runs`` times each, interleaved with the unsandboxed baseline,
and prints p50/p95 wall milliseconds and the overhead over the baseline. It also times
``detect()`` in a fresh process (what ``ctxgate run --sandbox`` pays once per call) and the
whole ``ctxgate run --sandbox read-only -- true`` against ``ctxgate run -- true``.

Usage: python benchmarks/sandbox.py [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ctxgate.sandbox import MECHANISMS_ENV, detect, sandbox_argv

_MB = 1_000_000


def wall_ms(argv: list[str], *, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    while proc.stdout.read(1 << 20):
        pass
    code = proc.wait()
    elapsed = (time.perf_counter() - start) * 1000
    if code != 0:
        raise SystemExit(f"{argv} exited {code}")
    return elapsed


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args(argv)
    info = detect(probe_all=True)
    mechanisms = [s.name for s in info.checked if s.available]
    print(f"load average {os.getloadavg()[0]:.2f}; cpus {os.cpu_count()}; "
          f"python {sys.version.split()[0]}; runs {args.runs}")
    for status in info.checked:
        print(f"  {status.name}: {'available' if status.available else 'unavailable'} "
              f"({status.why})")
    if not mechanisms:
        print("no sandbox available: nothing to measure")
        return 1
    with tempfile.TemporaryDirectory(prefix="ctxgate-sandbox-bench-") as tmp:
        data = Path(tmp) / "ten-mb.txt"
        line = b"0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456\n"
        data.write_bytes(line * (10 * _MB // len(line)))
        commands = {"true": ["true"], "cat 10 MB": ["cat", str(data)]}
        rows = []
        for label, command in commands.items():
            samples: dict[str, list[float]] = {"none": [], **{m: [] for m in mechanisms}}
            for _ in range(args.runs):  # interleaved, so load drifts hit every column alike
                samples["none"].append(wall_ms(command))
                for m in mechanisms:
                    samples[m].append(wall_ms(sandbox_argv(m, command)))
            base50 = statistics.median(samples["none"])
            for name, values in samples.items():
                p50, p95 = statistics.median(values), pct(values, 0.95)
                rows.append((label, name, p50, p95, p50 - base50))
        detect_ms = []
        env = {k: v for k, v in os.environ.items() if k != MECHANISMS_ENV}
        probe = [sys.executable, "-c", "from ctxgate.sandbox import detect; detect()"]
        bare = [sys.executable, "-c", "import ctxgate.sandbox"]
        for _ in range(max(5, args.runs // 3)):
            detect_ms.append(wall_ms(probe, env=env) - wall_ms(bare, env=env))
        home = Path(tmp) / "home"
        run_env = {**env, "CTXGATE_HOME": str(home)}
        cli = [sys.executable, "-m", "ctxgate", "run"]
        plain, boxed = [], []
        for _ in range(max(5, args.runs // 3)):
            plain.append(wall_ms([*cli, "--", "true"], env=run_env))
            boxed.append(wall_ms([*cli, "--sandbox", "read-only", "--", "true"], env=run_env))
    print()
    print(f"{'command':<10} {'sandbox':<10} {'p50 ms':>8} {'p95 ms':>8} {'+p50 ms':>8}")
    for label, name, p50, p95, extra in rows:
        print(f"{label:<10} {name:<10} {p50:8.1f} {p95:8.1f} {extra:+8.1f}")
    print()
    print(f"detect() in a fresh process (chooses {info.mechanism}): "
          f"p50 {statistics.median(detect_ms):+.1f} ms over importing ctxgate.sandbox")
    print(f"ctxgate run -- true: p50 {statistics.median(plain):.1f} ms; with --sandbox "
          f"read-only: p50 {statistics.median(boxed):.1f} ms "
          f"({statistics.median(boxed) - statistics.median(plain):+.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
