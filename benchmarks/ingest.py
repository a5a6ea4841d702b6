"""Ingest throughput and peak RSS of the archive vs `cat FILE > /dev/null`, per output shape.

Each ingest runs in a fresh child process (so its peak RSS is its own) that streams the file
through ``Archive.put_stream`` into a SQLite archive, then re-reads the whole entry from its
chunks and checks that it hashes to the id, which is the sha256 of the file (identical bytes).

    python benchmarks/ingest.py                 # 10 MB and 100 MB, every shape
    python benchmarks/ingest.py --sizes 256 --shapes short_lines,one_line
    python benchmarks/ingest.py --big           # plus 1 GiB for short_lines and one_line
    python benchmarks/ingest.py --big --shapes short_lines,one_line,jsonl,long_lines,binary
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _gen import SHAPES, write_file  # noqa: E402

MB = 1_000_000
GIB = 1 << 30

_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from ctxgate.archive import Archive, ArchivePolicy, EntryMeta
path, home, redact = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
archive = Archive.open(Path(home), ArchivePolicy(redact=redact))
t0 = time.perf_counter()
with open(path, "rb", buffering=0) as f:
    entry = archive.put_stream(f, EntryMeta(tool="bench", source=path))
t1 = time.perf_counter()
archive.verify(entry.id)
t2 = time.perf_counter()
print(json.dumps({"id": entry.id, "ingest_s": t1 - t0, "verify_s": t2 - t1,
                  "stored": entry.stored_bytes, "raw": entry.raw_bytes,
                  "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _cat_seconds(path: Path) -> float:
    t = time.perf_counter()
    subprocess.run(f"cat '{path}' > /dev/null", shell=True, check=True)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", action="store_true", help="add 1 GiB runs")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--big-shapes", default="short_lines,one_line")
    parser.add_argument("--sizes", default="10,100",
                        help="comma-separated sizes in MB (10^6 bytes) for every shape")
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "ctxgate-bench"))
    parser.add_argument("--no-redact", action="store_true",
                        help="store without the secret scan (archive.redact = false)")
    args = parser.parse_args()
    data_dir = Path(args.data)
    sizes = [int(float(x) * MB) for x in args.sizes.split(",") if x.strip()]
    runs = [(s, size) for size in sizes for s in args.shapes.split(",")]
    if args.big:
        runs += [(s, GIB) for s in args.big_shapes.split(",")]
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"redaction {'off' if args.no_redact else 'on'}")
    print(f"{'shape':<12} {'size':>9} {'cat MB/s':>9} {'ingest MB/s':>12} {'verify MB/s':>12} "
          f"{'peak RSS MB':>12} {'ratio':>6} {'identical':>9}")
    for shape, size in runs:
        path = write_file(data_dir / f"{shape}-{size}.out", shape, size)
        want = _sha256(path)
        cat_s = _cat_seconds(path)
        with tempfile.TemporaryDirectory() as home:
            env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
            out = subprocess.run([sys.executable, "-c", _CHILD, str(path), home,
                                  "0" if args.no_redact else "1"], env=env,
                                 capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        label = f"{size / GIB:.0f} GiB" if size >= GIB else f"{size / MB:.0f} MB"
        print(f"{shape:<12} {label:>9} {size / MB / cat_s:>9.0f} "
              f"{size / MB / r['ingest_s']:>12.0f} {size / MB / r['verify_s']:>12.0f} "
              f"{r['rss_kb'] / 1024:>12.1f} {r['stored'] / r['raw']:>6.3f} "
              f"{'yes' if r['id'] == want else 'NO':>9}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
