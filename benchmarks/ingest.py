"""Ingest throughput and peak RSS of the archive vs `cat FILE > /dev/null`, per output shape.

Each ingest runs in a fresh child process (so its peak RSS is its own) that streams the file
through ``Archive.put_stream`` into a SQLite archive, then re-reads the whole entry from its
chunks and checks that it hashes to the id, which is the sha256 of the file (identical bytes).

    python benchmarks/ingest.py                 # 10 MB and 100 MB, every shape
    python benchmarks/ingest.py --sizes 256 --shapes short_lines,one_line
    python benchmarks/ingest.py --big           # plus 1 GiB for short_lines and one_line
    python benchmarks/ingest.py --big --shapes short_lines,one_line,jsonl,long_lines,binary
    python benchmarks/ingest.py --search        # the full-text index: ingest cost, build, query

``--search`` stores the same entries into a fresh SQLite archive and into one whose FTS5 index
already holds other entries (the index is built lazily at search time, so ingest should not
move), then times the first search (which indexes everything), later searches through the
index, and the same searches as a plain scan of every chunk.
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


def search_section(data_dir: Path, entries: int, entry_mb: float, rounds: int) -> None:
    """Ingest with and without a populated index; index build; indexed query vs scan."""
    import statistics

    from _gen import generate

    from ctxgate.archive import Archive, ArchivePolicy, EntryMeta
    from ctxgate.archive.search import search

    size = int(entry_mb * MB)
    blobs = [b"".join(generate(("short_lines", "jsonl", "long_lines")[i % 3], size, seed=i))
             + b"needle-%d Connection refused by db-%d\n" % (i, i) for i in range(entries)]
    total = sum(len(b) for b in blobs)
    policy = ArchivePolicy(tokenizer="estimate")

    def ingest(archive: Archive) -> float:
        t = time.perf_counter()
        for i, blob in enumerate(blobs):
            archive.put(blob, EntryMeta(tool="bench", command=f"gen {i}"))
        return time.perf_counter() - t

    print(f"\nsearch index: {entries} entries of {entry_mb:g} MB ({total / MB:.0f} MB), "
          f"{rounds} rounds; load {os.getloadavg()[0]:.2f}")
    plain_s, indexed_s = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
            a = Archive.open(Path(d1), policy)
            plain_s.append(ingest(a))
            a.close()
            b = Archive.open(Path(d2), policy)  # an index that already holds entries
            b.put(b"".join(generate("short_lines", 4 * MB, seed=999)))
            search(b, "warmup index")
            indexed_s.append(ingest(b))
            b.close()
    p, q = statistics.median(plain_s), statistics.median(indexed_s)
    print(f"ingest, no index: {total / MB / p:.0f} MB/s; with a populated index: "
          f"{total / MB / q:.0f} MB/s (ingest time {(q - p) / p * 100:+.1f} %; medians)")
    with tempfile.TemporaryDirectory() as d:
        a = Archive.open(Path(d), policy)
        ingest(a)
        t = time.perf_counter()
        first = search(a, "connection refused db-3")
        build = time.perf_counter() - t
        print(f"first search (indexes {total / MB:.0f} MB): {build:.2f} s "
              f"({total / MB / build:.0f} MB/s), {len(first.hits)} hit(s)")
        queries = ["connection refused db-7", "needle-1 ", "timeout parse", "no-such-words"]
        fts, scan = [], []
        store = a.store
        for _ in range(5):
            for query in queries:
                t = time.perf_counter()
                search(a, query)
                fts.append(time.perf_counter() - t)
                store.text_index, saved = (lambda: None), store.text_index
                t = time.perf_counter()
                search(a, query)
                scan.append(time.perf_counter() - t)
                store.text_index = saved
        print(f"search p50 through the index: {statistics.median(fts) * 1000:.0f} ms; "
              f"as a scan of every chunk: {statistics.median(scan) * 1000:.0f} ms "
              f"({len(queries)} queries x 5)")
        a.close()


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
    parser.add_argument("--search", action="store_true",
                        help="only the full-text index section (see the module docstring)")
    parser.add_argument("--search-entries", type=int, default=30)
    parser.add_argument("--search-entry-mb", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data_dir = Path(args.data)
    if args.search:
        search_section(data_dir, args.search_entries, args.search_entry_mb, args.rounds)
        return
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
