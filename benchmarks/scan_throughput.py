"""The firewall's streaming scanner alone (``OutputScanner``: keywords, windows, line shapes),
in MB/s, for this checkout and another one side by side, against ``hashlib.sha256`` of the same
bytes in the same process (a physical baseline: the archive hashes every byte too).

Each measurement is a fresh process (``PYTHONPATH`` set to the ``src`` being measured) that
reads a generated file into memory and feeds it in 1 MiB chunks; runs alternate between the
two sources so that the machine's load hits both alike. Shapes: ``short_lines`` and ``jsonl``
from ``benchmarks/_gen.py``, and ``interleaved`` (an access log and an application log, line by
line: no single dominant line shape, the case issue 11 added a check for).

Usage: python benchmarks/scan_throughput.py [--baseline SRC] [--size-mb 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _gen import write_file  # noqa: E402

_CHILD = r"""
import hashlib, json, resource, sys, time
from ctxgate.firewall.scan import OutputScanner
data = open(sys.argv[1], "rb").read()
t = time.perf_counter()
hashlib.sha256(data).digest()
sha = time.perf_counter() - t
t = time.perf_counter()
sc = OutputScanner()
for i in range(0, len(data), 1 << 20):
    sc.feed(data[i:i + (1 << 20)])
r = sc.close()
scan = time.perf_counter() - t
print(json.dumps({"scan": scan, "sha": sha, "mb": len(data) / 1e6,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "exact": r.shapes.exact if r.shapes else None}))
"""


def _interleaved(path: Path, size: int) -> Path:
    if path.exists() and path.stat().st_size >= size:
        return path
    with path.open("wb") as f:
        i = written = 0
        while written < size:
            i += 1
            if i % 2:
                line = (f'10.1.{i % 256}.{i * 7 % 250} - - [01/Dec/2026:10:{i // 60 % 60:02d}:'
                        f'{i % 60:02d} +0000] "GET /api/items/{i} HTTP/1.1" 200 '
                        f'{1000 + i * 37 % 90_000} "-" "curl/8.0"\n')
            else:
                line = (f"2026-12-01T10:00:{i % 60:02d}Z worker-{i % 7} processed batch {i} "
                        f"in {i % 97} ms\n")
            b = line.encode()
            f.write(b)
            written += len(b)
    return path


def _run(src: str, path: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", default=None, help="src directory of another checkout")
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "ctxgate-bench"))
    args = ap.parse_args(argv)
    here = str(Path(__file__).resolve().parents[1] / "src")
    sources = [("this checkout", here)] + ([("baseline", args.baseline)] if args.baseline
                                           else [])
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    size = args.size_mb * 1_000_000
    files = {s: write_file(d / f"{s}-{args.size_mb}M.txt", s, size)
             for s in ("short_lines", "jsonl")}
    files["interleaved"] = _interleaved(d / f"interleaved-{args.size_mb}M.txt", size)
    print(f"machine: {os.cpu_count()} cores, load "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; python "
          f"{sys.version.split()[0]}; {args.repeat} runs each, medians")
    print("| shape | source | scan MB/s | sha256 MB/s (same process) | scan / sha256 time "
          "| peak RSS | shapes exact |")
    print("|---|---|---|---|---|---|---|")
    for shape, path in files.items():
        runs: dict[str, list[dict]] = {name: [] for name, _ in sources}
        for _ in range(args.repeat):
            for name, src in sources:
                runs[name].append(_run(src, path))
        for name, _ in sources:
            rs = runs[name]
            scan = statistics.median(r["scan"] for r in rs)
            sha = statistics.median(r["sha"] for r in rs)
            mb = rs[0]["mb"]
            print(f"| {shape} | {name} | {mb / scan:,.0f} | {mb / sha:,.0f} | "
                  f"{scan / sha:.1f}x | {max(r['rss'] for r in rs) // 1024} MB | "
                  f"{rs[0]['exact']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
