"""`ctxgate run -- cat FILE` against `cat FILE > /dev/null`, side by side in one run.

For each size (1 MB, 100 MB, 1 GiB) and shape (from ``benchmarks/_gen.py``) it runs both as
real processes and reports wall time, the ratio, the peak RSS of the ctxgate process tree,
the digest's size in bytes and o200k_base tokens, and the decision. Physical baselines in
the same run show the work ingest cannot avoid: ``cat | sha256sum`` (the content id) and
``cat | zstd -1`` (the stored chunks) when those programs exist. The below-threshold overhead
is the median of ``ctxgate run -- echo hi`` minus ``sh -c 'echo hi'``.

Usage: python benchmarks/run_cat.py [--sizes 1M,100M,1G] [--shapes short_lines,one_line]
       [--repeat 1] [--dir /tmp/ctxgate-bench]
Targets (issue 3): at 1 GiB wall <= 3x cat and peak RSS < 150 MB; below-threshold overhead
<= 150 ms median.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _gen import write_file  # noqa: E402

_SIZES = {"1M": 1_000_000, "100M": 100_000_000, "1G": 1 << 30}
_DEFAULT_SHAPES = {"1M": ["short_lines", "long_lines", "one_line", "jsonl", "binary"],
                   "100M": ["short_lines", "one_line", "jsonl", "binary"],
                   "1G": ["short_lines", "one_line"]}


def timed(cmd: list[str] | str, *, env: dict[str, str], shell: bool = False,
          stdout=subprocess.PIPE) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS in bytes (process tree), and stdout of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.DEVNULL, env=env,
                            shell=shell)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss * 1024, out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1M,100M,1G")
    ap.add_argument("--shapes", default="")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "ctxgate-bench"))
    ap.add_argument("--overhead-only", action="store_true")
    args = ap.parse_args(argv)
    from ctxgate.tokens import count_tokens

    work = Path(args.dir)
    home = work / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env["CTXGATE_HOME"] = str(home)
    ctxgate = shutil.which("ctxgate") or "ctxgate"
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"python {sys.version.split()[0]}")
    print("| size | shape | cat > /dev/null | ctxgate run -- cat | ratio | peak RSS | "
          "digest | decision | cat\\|sha256sum | cat\\|zstd -1 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label in ([] if args.overhead_only else args.sizes.split(",")):
        size = _SIZES[label]
        shapes = args.shapes.split(",") if args.shapes else _DEFAULT_SHAPES[label]
        for shape in shapes:
            path = write_file(work / f"{shape}-{label}.out", shape, size)
            cat_t, ct_t, rss = [], [], 0
            out = b""
            for _ in range(args.repeat):
                shutil.rmtree(home, ignore_errors=True)
                subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL)  # warm cache
                t, _, _ = timed(f"cat {path} > /dev/null", env=env, shell=True)
                cat_t.append(t)
                t, r, out = timed([ctxgate, "run", "--", "cat", str(path)], env=env)
                ct_t.append(t)
                rss = max(rss, r)
            sha = _physical(f"cat {path} | sha256sum > /dev/null", "sha256sum", env)
            zst = _physical(f"cat {path} | zstd -1 -c > /dev/null", "zstd", env)
            digest = out.decode("utf-8", "replace")
            head = next((ln for ln in digest.splitlines()[:3] if ln.startswith("[archive id")),
                        "")
            decision = head.split("; ", 1)[-1].split(":")[0] if head else "verbatim"
            tokens = count_tokens(digest).count if len(out) < 1_000_000 else None
            dsize = (f"{len(out):,} B / {tokens:,} tok" if tokens is not None
                     else f"{len(out):,} B (verbatim)")
            c, g = statistics.median(cat_t), statistics.median(ct_t)
            print(f"| {label} | {shape} | {c:.3f} s | {g:.2f} s | {g / c:.1f}x | "
                  f"{rss / 1e6:.0f} MB | {dsize} | {decision} | {sha} | {zst} |", flush=True)
    overhead(ctxgate, env)
    shutil.rmtree(home, ignore_errors=True)
    return 0


def _physical(cmd: str, prog: str, env: dict[str, str]) -> str:
    if shutil.which(prog) is None:
        return "n/a"
    t, _, _ = timed(cmd, env=env, shell=True, stdout=subprocess.DEVNULL)
    return f"{t:.2f} s"


def overhead(ctxgate: str, env: dict[str, str], runs: int = 15) -> None:
    """Median wall time of a below-threshold run, of the bare command, and of the CLI floor
    (`ctxgate version`: interpreter, typer and every command module, no firewall)."""
    base, floor, ours = [], [], []
    for _ in range(runs):
        base.append(timed(["sh", "-c", "echo hi"], env=env)[0])
        floor.append(timed([ctxgate, "version"], env=env)[0])
        ours.append(timed([ctxgate, "run", "--", "echo", "hi"], env=env)[0])
    b, f, o = (statistics.median(x) for x in (base, floor, ours))
    print(f"\nbelow-threshold overhead ({runs} runs, medians): `ctxgate run -- echo hi` "
          f"{o * 1000:.0f} ms vs `sh -c 'echo hi'` {b * 1000:.0f} ms: +{(o - b) * 1000:.0f} ms "
          f"(target <= 150 ms); CLI floor `ctxgate version` {f * 1000:.0f} ms, so the run "
          f"itself adds {(o - f) * 1000:.0f} ms")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
