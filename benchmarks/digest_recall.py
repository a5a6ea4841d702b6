"""How many ground-truth error lines of real CI logs does the digest surface?

Data: the CI-log breakages of the cidiff project (Apache-2.0, see its NOTICE), each a
``fail.log`` and a ``groundtruth`` file whose first section lists error lines as ``E a-b``.
Every log goes through :func:`ctxgate.firewall.firewall` twice: with the default policy (small
logs stay verbatim, which surfaces every line) and with ``min_tokens=0`` so every log is
digested. A ground-truth line counts as surfaced when the digest shows it with its line
number (head, tail, or the lines-that-matter map). The baseline is lean-ctx's digest shape
(first 20 and last 8 lines, nothing from the middle), computed on the same logs.

Usage: python benchmarks/digest_recall.py [DATA_DIR] [--per-case]
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared/data/digest/cidiff"
_GUTTER = re.compile(r"^\s*(\d+)\| ", re.M)


def ground_truth(path: Path) -> set[int]:
    """Error line numbers of the first section of a groundtruth file."""
    return set().union(*ground_truth_ranges(path)) if ground_truth_ranges(path) else set()


def ground_truth_ranges(path: Path) -> list[set[int]]:
    """Each ``E a-b`` range of the first section of a groundtruth file, as a set of lines."""
    ranges: list[set[int]] = []
    seen_header = False
    for raw in path.read_text().splitlines():
        parts = raw.split()
        if not parts:
            continue
        if parts[0] not in ("E", "C"):
            if seen_header:
                break
            seen_header = True
            continue
        if parts[0] == "E":
            a, _, b = parts[1].partition("-")
            ranges.append(set(range(int(a), int(b or a) + 1)))
    return ranges


def to_newline_numbers(log: bytes, universal: set[int]) -> set[int]:
    """Map line numbers counted with universal newlines (``\\r``, ``\\n``, ``\\r\\n``; how
    the ground truth was made) to ``\\n``-counted lines (how ctxgate and ``wc -l`` count)."""
    out: set[int] = set()
    newline_line = 1
    for k, m in enumerate(re.finditer(rb"\r\n|\r|\n", log), start=1):
        if k in universal:
            out.add(newline_line)
        if m.group() != b"\r":
            newline_line += 1
    last = len(re.findall(rb"\r\n|\r|\n", log)) + 1
    if last in universal:
        out.add(newline_line)
    return out


def shown_lines(digest_text: str) -> set[int]:
    return {int(m) for m in _GUTTER.findall(digest_text)}


def baseline_lines(n_lines: int) -> set[int]:
    """lean-ctx's head/tail shape: lines 1-20 and the last 8 (all lines when <= 29)."""
    if n_lines <= 29:
        return set(range(1, n_lines + 1))
    return set(range(1, 21)) | set(range(n_lines - 7, n_lines + 1))


def cases(data: Path) -> list[Path]:
    return sorted(p.parent for p in data.glob("*/*/groundtruth"))


def main(argv: list[str]) -> int:
    from ctxgate.archive import Archive
    from ctxgate.firewall import FirewallPolicy, firewall
    from ctxgate.tokens import count_tokens

    per_case = "--per-case" in argv
    args = [a for a in argv if not a.startswith("--")]
    data = Path(args[0]) if args else DEFAULT_DATA
    found = cases(data)
    if not found:
        print(f"no cases under {data}", file=sys.stderr)
        return 2
    archive = Archive()
    forced = FirewallPolicy(min_tokens=0)
    totals = {"gt": 0, "digest": 0, "default": 0, "base": 0, "cases_hit": 0, "base_hit": 0,
              "verbatim": 0, "digest_bytes": 0, "digest_tokens": 0, "log_bytes": 0,
              "ranges": 0, "ranges_hit": 0, "base_ranges_hit": 0}
    rows = []
    started = time.perf_counter()
    for case in found:
        log = (case / "fail.log").read_bytes()
        ranges = [to_newline_numbers(log, r) for r in ground_truth_ranges(case / "groundtruth")]
        gt = set().union(*ranges) if ranges else set()
        if not gt:
            continue
        n_lines = log.count(b"\n") + (0 if log.endswith(b"\n") else 1)
        forced_res = firewall("shell", log, archive=archive, policy=forced)
        default_res = firewall("shell", log, archive=archive)
        got = shown_lines(forced_res.text) & gt
        got_default = (gt if not default_res.digested
                       else shown_lines(default_res.text) & gt)
        base = baseline_lines(n_lines) & gt
        totals["gt"] += len(gt)
        totals["digest"] += len(got)
        totals["default"] += len(got_default)
        totals["base"] += len(base)
        totals["cases_hit"] += bool(got)
        totals["ranges"] += len(ranges)
        totals["ranges_hit"] += sum(bool(r & got) for r in ranges)
        totals["base_ranges_hit"] += sum(bool(r & base) for r in ranges)
        totals["base_hit"] += bool(base)
        totals["verbatim"] += not default_res.digested
        totals["digest_bytes"] += forced_res.digest.size_bytes
        totals["digest_tokens"] += count_tokens(forced_res.text).count
        totals["log_bytes"] += len(log)
        rows.append((f"{case.parent.name}/{case.name}", n_lines, len(gt), len(got), len(base),
                     forced_res.digest.size_bytes))
    n = len(rows)
    elapsed = time.perf_counter() - started
    if per_case:
        print(f"{'case':42} {'lines':>7} {'gt':>5} {'digest':>6} {'base':>5} {'bytes':>6}")
        for r in rows:
            print(f"{r[0]:42} {r[1]:>7} {r[2]:>5} {r[3]:>6} {r[4]:>5} {r[5]:>6}")
        print()
    pct = lambda a, b: f"{100 * a / b:.1f}%"  # noqa: E731
    print(f"cases: {n} CI logs ({totals['log_bytes'] / 1e6:.1f} MB), "
          f"{totals['gt']:,} ground-truth error lines; {elapsed:.1f} s")
    print("| digest | GT error lines surfaced | GT error ranges touched | cases with >= 1 "
          "| mean digest size |")
    print("|---|---|---|---|---|")
    print(f"| ctxgate, every log digested (min_tokens=0) | {totals['digest']:,} "
          f"({pct(totals['digest'], totals['gt'])}) | {totals['ranges_hit']}/{totals['ranges']} "
          f"| {totals['cases_hit']}/{n} | "
          f"{totals['digest_bytes'] // n:,} bytes, {totals['digest_tokens'] // n:,} tokens |")
    print(f"| ctxgate, default policy ({totals['verbatim']} logs below 2,000 tokens stay "
          f"verbatim) | {totals['default']:,} ({pct(totals['default'], totals['gt'])}) | - | - "
          "| - |")
    print(f"| head 20 + tail 8 (lean-ctx shape) | {totals['base']:,} "
          f"({pct(totals['base'], totals['gt'])}) | {totals['base_ranges_hit']}/"
          f"{totals['ranges']} | {totals['base_hit']}/{n} | - |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
