"""`ctxgate run -- cat FILE` against its physical baselines on the same bytes, in one run.

For each size and shape (``benchmarks/_gen.py``) it times, interleaved round by round so a
change in the machine's load hits every row alike:

* ``cat FILE > /dev/null`` (reading the bytes), and ``zstd -1 -c < FILE | sha256sum`` (the
  work ingest cannot avoid: compress what is stored, hash for the id);
* ``ctxgate run -- cat FILE`` once per source tree given with ``--src LABEL=PATH`` (default:
  this checkout's ``src``; add ``--src before=/work/main/src`` for the code before a change).
  Each runs as ``python -m ctxgate`` with ``PYTHONPATH`` set to that tree and byte code
  cached under ``--dir`` (as an installed package has it), in a fresh ``CTXGATE_HOME``.

Rows give p50 and p95 wall seconds, MB/s (size / p50), the ratio to ``zstd -1 | sha256sum``,
the CPU seconds of the process tree (user + system; less sensitive to load than wall time),
peak RSS, and the digest's size. Then the below-threshold overhead: ``run -- echo hi``
against ``sh -c 'echo hi'`` and against the interpreter floor ``python -c pass`` (which on a
machine with ``.pth`` start-up hooks already costs more than the whole 50 ms budget).

Usage: python benchmarks/run_cat.py [--sizes 100M] [--shapes short_lines,jsonl]
       [--repeat 7] [--src after=src --src before=/work/main/src] [--dir DIR]
Targets (issue 11): 100 MB p50 <= 0.5 s and <= 1.5x ``zstd -1 | sha256sum``; below-threshold
run adds <= 50 ms to ``sh -c``.
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

_SIZES = {"100K": 100_000, "1M": 1_000_000, "10M": 10_000_000, "100M": 100_000_000, "1G": 1 << 30}
_REPO_SRC = Path(__file__).resolve().parent.parent / "src"


def timed(cmd: list[str] | str, *, env: dict[str, str], shell: bool = False
          ) -> tuple[float, float, int, bytes]:
    """Wall seconds, CPU seconds (user+sys of the tree), peak RSS bytes, stdout of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                            shell=shell)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, out


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _env(src: Path, work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CTXGATE_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(src)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    env["CTXGATE_HOME"] = str(work / "home")
    return env


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100M")
    ap.add_argument("--shapes", default="short_lines,jsonl")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--src", action="append", default=[],
                    help="LABEL=PATH of a source tree to time (repeatable)")
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "ctxgate-bench"))
    ap.add_argument("--overhead-runs", type=int, default=15)
    ap.add_argument("--overhead-only", action="store_true",
                    help="only the below-threshold rows (no cat FILE sizes)")
    args = ap.parse_args(argv)
    work = Path(args.dir)
    trees = [tuple(s.split("=", 1)) for s in args.src] or [("this", str(_REPO_SRC))]
    py = sys.executable
    envs = {label: _env(Path(path), work) for label, path in trees}
    base_env = _env(_REPO_SRC, work)
    for env in envs.values():  # compile the byte code once, outside the timings
        subprocess.run([py, "-m", "ctxgate", "run", "--", "true"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"(start); python {sys.version.split()[0]}; {args.repeat} rounds, interleaved")
    print("| size | shape | what | p50 s | p95 s | MB/s | / zstd\\|sha | CPU s | peak RSS "
          "| digest |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label in ([] if args.overhead_only else args.sizes.split(",")):
        size = _SIZES[label]
        for shape in args.shapes.split(","):
            path = write_file(work / f"{shape}-{label}.out", shape, size)
            rows: dict[str, dict[str, list]] = {}
            cmds: list[tuple[str, list[str] | str, bool, dict[str, str]]] = [
                ("cat > /dev/null", f"cat {path} > /dev/null", True, base_env),
                ("zstd -1 | sha256sum", f"zstd -1 -c < {path} | sha256sum > /dev/null", True,
                 base_env),
            ] + [(f"ctxgate run ({lab})", [py, "-m", "ctxgate", "run", "--", "cat", str(path)],
                  False, env) for lab, env in envs.items()]
            subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL)  # page cache
            for _ in range(args.repeat):
                for name, cmd, shell, env in cmds:
                    shutil.rmtree(work / "home", ignore_errors=True)
                    wall, cpu, rss, out = timed(cmd, env=env, shell=shell)
                    r = rows.setdefault(name, {"wall": [], "cpu": [], "rss": [], "out": []})
                    r["wall"].append(wall)
                    r["cpu"].append(cpu)
                    r["rss"].append(rss)
                    r["out"] = [out]
            ref = statistics.median(rows["zstd -1 | sha256sum"]["wall"])
            for name, r in rows.items():
                p50, p95 = statistics.median(r["wall"]), _p(r["wall"], 0.95)
                out = r["out"][0]
                digest = f"{len(out):,} B" if name.startswith("ctxgate") else ""
                print(f"| {label} | {shape} | {name} | {p50:.3f} | {p95:.3f} | "
                      f"{size / 1e6 / p50:.0f} | {p50 / ref:.2f}x | "
                      f"{statistics.median(r['cpu']):.2f} | {max(r['rss']) / 1e6:.0f} MB | "
                      f"{digest} |", flush=True)
    overhead(py, envs, base_env, args.overhead_runs)
    load = os.getloadavg()
    print(f"\nload at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    shutil.rmtree(work / "home", ignore_errors=True)
    return 0


def overhead(py: str, envs: dict[str, dict[str, str]], base_env: dict[str, str],
             runs: int) -> None:
    """Medians of a below-threshold run, the bare command, and the interpreter floor."""
    samples: dict[str, list[float]] = {"sh -c 'echo hi'": [], "python -c pass": [],
                                       "python -S -c pass": []}
    for _ in range(runs):
        samples["sh -c 'echo hi'"].append(timed(["sh", "-c", "echo hi"], env=base_env)[0])
        samples["python -c pass"].append(timed([py, "-c", "pass"], env=base_env)[0])
        samples["python -S -c pass"].append(timed([py, "-S", "-c", "pass"], env=base_env)[0])
        for label, env in envs.items():
            samples.setdefault(f"ctxgate run ({label}) -- echo hi", []).append(
                timed([py, "-m", "ctxgate", "run", "--", "echo", "hi"], env=env)[0])
            # what the hooks write: python -S …/ctxgate/_launch.py run --tool bash -c CMD
            launcher = str(Path(env["PYTHONPATH"].split(os.pathsep)[0]) / "ctxgate" / "_launch.py")
            samples.setdefault(f"hook's wrapper ({label}): python -S _launch.py run -c 'echo hi'",
                               []).append(timed([py, "-S", launcher, "run", "--tool", "bash",
                                                 "-c", "echo hi"], env=env)[0])
    sh = statistics.median(samples["sh -c 'echo hi'"])
    floor = statistics.median(samples["python -c pass"])
    print(f"\nbelow-threshold overhead ({runs} runs each, interleaved; medians)")
    print("| what | median ms | p95 ms | - sh -c | - python -c pass |")
    print("|---|---|---|---|---|")
    for name, values in samples.items():
        m = statistics.median(values)
        print(f"| {name} | {m * 1000:.0f} | {_p(values, 0.95) * 1000:.0f} | "
              f"+{(m - sh) * 1000:.0f} | +{(m - floor) * 1000:.0f} |")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
