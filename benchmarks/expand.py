"""Slice latency and grep throughput on large entries, vs reading the raw file in the same run.

For each size, a short_lines output is generated, stored in a SQLite archive, then:

* 200-line slices at random places (``expand(id, lines="A:A+199")``, fresh reader each time,
  so every slice decompresses its chunks; default 4,000-token o200k_base budget, tables loaded
  once before timing): p50 / p95 in ms, against seeking and reading the same byte range of the
  raw file;
* grep for a rare pattern over the whole entry (bounded output: 20 matches shown, all counted):
  MB/s, against ``grep -c`` on the raw file; and a pattern matching every line.

    python benchmarks/expand.py            # 100 MB
    python benchmarks/expand.py --big      # plus 1 GiB
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _gen import write_file  # noqa: E402

MB = 1_000_000
GIB = 1 << 30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", action="store_true", help="add a 1 GiB entry")
    parser.add_argument("--slices", type=int, default=50)
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "ctxgate-bench"))
    args = parser.parse_args()

    from ctxgate.archive import Archive, ArchivePolicy

    sizes = [100 * MB] + ([GIB] if args.big else [])
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'entry':>9} {'slice p50 ms':>13} {'slice p95 ms':>13} {'raw seek p50 ms':>16} "
          f"{'grep MB/s':>10} {'grep -c MB/s':>13} {'matches':>9} {'view bytes':>11}")
    for size in sizes:
        path = write_file(Path(args.data) / f"short_lines-{size}.out", "short_lines", size)
        with tempfile.TemporaryDirectory() as home:
            archive = Archive.open(Path(home), ArchivePolicy())  # default: o200k_base budget
            archive.expand(archive.put(b"warm up\n" * 3000).id)  # tokenizer tables: once per process
            with open(path, "rb") as f:
                entry = archive.put_stream(f)
            rng = random.Random(7)
            times, raw_times = [], []
            for _ in range(args.slices):
                a = rng.randint(1, entry.lines - 200)
                t = time.perf_counter()
                view = archive.expand(entry.id, lines=f"{a}:{a + 199}")
                times.append(time.perf_counter() - t)
                s, e = view.byte_range
                t = time.perf_counter()
                with open(path, "rb") as f:
                    f.seek(s)
                    f.read(e - s)
                raw_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            view = archive.expand(entry.id, grep="ERROR.*id=\\d*7\\b", max_matches=20)
            grep_s = time.perf_counter() - t
            t = time.perf_counter()
            subprocess.run(["grep", "-c", "-E", "ERROR.*id=[0-9]*7\\b", str(path)],
                           capture_output=True)
            base_s = time.perf_counter() - t
            t = time.perf_counter()
            dense = archive.expand(entry.id, grep="worker-", max_matches=20)
            dense_s = time.perf_counter() - t
            label = f"{size / GIB:.0f} GiB" if size >= GIB else f"{size / MB:.0f} MB"
            q = statistics.quantiles(times, n=20)
            print(f"{label:>9} {statistics.median(times) * 1e3:>13.2f} {q[18] * 1e3:>13.2f} "
                  f"{statistics.median(raw_times) * 1e3:>16.3f} {size / MB / grep_s:>10.0f} "
                  f"{size / MB / base_s:>13.0f} {view.matches:>9} "
                  f"{len(view.text.encode()):>11}", flush=True)
            est = Archive(archive.store, ArchivePolicy(tokenizer="estimate"))
            t = time.perf_counter()
            est.expand(entry.id, lines=f"{entry.lines // 2}:{entry.lines // 2 + 199}")
            print(f"{'':>9} grep matching every line ('worker-', {dense.matches} lines): "
                  f"{size / MB / dense_s:.0f} MB/s")
            print(f"{'':>9} one slice with tokenizer='estimate' (bytes/4 budget): "
                  f"{(time.perf_counter() - t) * 1e3:.1f} ms")
            archive.close()
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
