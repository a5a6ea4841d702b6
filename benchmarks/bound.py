"""Benchmark: bound_record() against one json.dumps of the same record, in the same run.

Cases (the issue's): a 64 MiB record with 1,000 tool results bounded to 1 MiB, and a 4 MiB
record with one result bounded to 1 MiB. Tool output is realistic command output: lines of
ASCII with tabs, quotes and backslashes, some CJK and emoji, so escapes and multi-byte UTF-8
are exercised. The baseline is ``json.dumps(record, ensure_ascii=False,
separators=(",", ":"))``, the work any serializer must do at least once. Also shown: the
measuring walk alone, and bounding with full originals stored in an in-memory archive
(sha256 + redaction + zstd of every cut result, informational).

Run: ``python benchmarks/bound.py [--repeat N]``. Reports the best of N runs per row and the
load average, because the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from ctxgate.bound import bound_record, measure
from ctxgate.bound.measure import string_size

MIB = 1_048_576


def output(index: int, size: int) -> str:
    """Command-output-like text whose serialized (escaped) size is about ``size`` bytes."""
    lines = []
    total = 0
    n = 0
    while total < size:
        line = (f"{index:04d}:{n:06d}\tINFO worker \"w{n % 7}\" path=C:\\tmp\\f{n}.log "
                f"status=ok {'数据' if n % 5 == 0 else ''}{'✅' if n % 11 == 0 else ''} "
                f"{'-' * (n % 40)}\n")
        lines.append(line)
        total += string_size(line) - 2
        n += 1
    return "".join(lines)


def record_with(results: list[str]) -> dict:
    return {
        "executionId": "bench", "status": "success", "success": True, "response": "done",
        "usage": {"inputTokens": 123_456, "outputTokens": 789},
        "toolInvocations": [
            {"toolCallId": f"call-{i}", "toolName": "shell", "args": {"cmd": f"job {i}"},
             "result": r}
            for i, r in enumerate(results)
        ],
    }


def best_of(repeat: int, fn) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    cases = {
        "64 MiB, 1000 results": record_with([output(i, 64 * MIB // 1000) for i in range(1000)]),
        "4 MiB, 1 result": record_with([output(1, 4 * MIB)]),
    }
    rows = []
    for name, record in cases.items():
        dumps_s, text = best_of(args.repeat, lambda r=record: json.dumps(
            r, ensure_ascii=False, separators=(",", ":")))
        size = len(text.encode())
        measure_s, measured = best_of(args.repeat, lambda r=record: measure(r))
        assert measured == size
        bound_s, result = best_of(args.repeat, lambda r=record: bound_record(r, max_bytes=MIB))
        rows.append((name, size, dumps_s, "measure() only", measure_s, measured))
        rows.append((name, size, dumps_s, "bound_record()", bound_s, result.serialized_bytes))
        from ctxgate.archive import Archive, MemoryStore

        arch_s, arch_result = best_of(1, lambda r=record: bound_record(
            r, max_bytes=MIB, archive=Archive(store=MemoryStore())))
        rows.append((name, size, dumps_s, "bound_record() + archive", arch_s,
                     arch_result.serialized_bytes))

    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores;"
          f" best of {args.repeat} (archive row: 1 run)")
    print(f"| {'record':<22} | {'bytes':>10} | {'json.dumps s':>12} | {'operation':<26} "
          f"| {'seconds':>8} | {'x dumps':>7} | {'out bytes':>9} |")
    print(f"|{'-' * 24}|{'-' * 12}|{'-' * 14}|{'-' * 28}|{'-' * 10}|{'-' * 9}|{'-' * 11}|")
    for name, size, dumps_s, op, secs, out in rows:
        print(f"| {name:<22} | {size:>10} | {dumps_s:>12.3f} | {op:<26} | {secs:>8.3f} "
              f"| {secs / dumps_s:>7.2f} | {out:>9} |")


if __name__ == "__main__":
    main()
