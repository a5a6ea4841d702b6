"""How much of the human-labelled failure of real CI logs does the digest show?

Data: the CI-log breakages of the cidiff project (Apache-2.0, see its NOTICE): 43 Java CI logs,
each a ``fail.log`` and a ``groundtruth`` file whose first section lists the failure's lines as
``E a-b`` (counted with universal newlines; mapped here to ``\\n`` lines). Every log is digested
(``min_tokens=0``) through :func:`ctxgate.firewall.firewall`. Per log:

* line recall: labelled lines the digest shows with their line number (``N| text``);
* all visible: every labelled line shown;
* tokens: o200k_base tokens of the digest (p50 and p95 over the logs);
* reachable: the first labelled line is in the view of one ``ctxgate expand`` the digest names
  (each named command line is run against the archive and its output searched for the line).

Three digests side by side: this checkout's, a previous one (``--baseline SRC``: a ``src``
directory of another checkout, run in a subprocess; e.g. ``git worktree add /tmp/base d72e402``
then ``--baseline /tmp/base/src``), and lean-ctx's head/tail shape (first 20 and last 8 lines).

Splits: the logs were also the development data of the block digest, so results are reported
for the development split and a held-out split separately. cidiff held out: every log of
``other_cases`` and the ``breakages`` whose name's SHA-256 starts with 0, 1 or 2 (fixed before
tuning: 13 logs). LogChunks (``--logchunks``, see ``logchunks.py``) held out by repository: the
repositories whose name's SHA-256 starts with 0-4 (213 logs of 23 repositories); the misses of
the other 505 logs (57 repositories) were read while tuning, the held-out ones never.

Own data: ``DATA_DIR`` may be any corpus in the same layout (``<group>/<case>/fail.log`` and
``groundtruth``), such as the own Maven corpus of ``scripts/digest_dev/maven_logs.py``
(real offline Maven builds, failure lines labelled from what was injected; where digest
choices are made now): its rows are named after the directory, with no dev/held-out split.

Usage: python benchmarks/digest_recall.py [DATA_DIR] [--baseline SRC] [--per-case]
       [--logchunks DIR [--logchunks-limit N]]
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared/data/digest/cidiff"
_GUTTER = re.compile(r"^\s*(\d+)\| ", re.M)
_VIEW_NUMBER = re.compile(r"^\s*(\d+)[|:-]", re.M)


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


def held_out(case: Path) -> bool:
    """The held-out split (fixed before tuning; see the module docstring)."""
    return case.parent.name == "other_cases" or \
        hashlib.sha256(case.name.encode()).hexdigest()[0] in "012"


def _named_views(archive, text: str) -> set[int]:
    """Line numbers shown by the ``ctxgate expand`` command lines named in ``text`` (each
    command line run against the archive, its view's numbered lines collected)."""
    import argparse

    try:
        from ctxgate.app.options import EXPAND, argparse_parser
    except ImportError:
        return set()
    parser = argparse_parser(EXPAND, "ctxgate expand", add_help=False, exit_on_error=False)
    seen: set[int] = set()
    for raw in text.splitlines():
        at = raw.find("ctxgate expand ")
        if at == -1:
            continue
        try:
            ns, _ = parser.parse_known_args(shlex.split(raw[at + len("ctxgate expand "):]))
        except (ValueError, SystemExit, argparse.ArgumentError):
            continue
        kwargs = {k: v for k, v in vars(ns).items()
                  if k not in ("entry_id", "json_output") and v not in (None, False)}
        try:
            view = archive.expand(ns.entry_id, **kwargs)
        except Exception:  # noqa: BLE001 - a hint that fails reaches nothing
            continue
        seen |= {int(m) for m in _VIEW_NUMBER.findall(view.text)}
    return seen


def _reachable(archive, text: str, first: int) -> bool:
    """Whether one ``ctxgate expand`` line named in ``text`` shows line ``first``."""
    return first in _named_views(archive, text)


def cidiff_logs(data: Path) -> list[tuple[str, bytes, set[int], bool]]:
    """(name, log, labelled lines, held out) of every cidiff case with a label."""
    out = []
    for case in cases(data):
        log = (case / "fail.log").read_bytes()
        ranges = [to_newline_numbers(log, r) for r in ground_truth_ranges(case / "groundtruth")]
        gt = set().union(*ranges) if ranges else set()
        if gt:
            out.append((f"{case.parent.name}/{case.name}", log, gt, held_out(case)))
    return out


def logchunks_logs(root: Path, limit: int | None) -> list[tuple[str, bytes, set[int], bool]]:
    """LogChunks logs whose labelled chunk was found (measure only: never tuned on)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from logchunks import examples, label_lines

    out = []
    for path, chunk in examples(root):
        log = path.read_bytes()
        gt = label_lines(log, chunk)
        if gt:
            rel = path.relative_to(root / "tool/samples")
            out.append((str(rel), log, gt, logchunks_held_out(rel.parts[1])))
    if limit is not None:  # a fixed, spread sample: every k-th log
        return out[::max(1, len(out) // limit)][:limit]
    return out


def logchunks_held_out(repo: str) -> bool:
    """LogChunks' held-out split, by repository (``owner@name``), so that no project's logs
    are on both sides: the repositories whose name's SHA-256 starts with 0-4 (fixed before
    the dev split's misses were read: 23 of 80 repositories, 213 of 718 logs)."""
    return hashlib.sha256(repo.encode()).hexdigest()[0] in "01234"


def measure(logs: list[tuple[str, bytes, set[int], bool]]) -> list[dict]:
    """One row per labelled log, measured with the ctxgate on ``sys.path``."""
    from ctxgate.archive import Archive
    from ctxgate.firewall import FirewallPolicy, firewall
    from ctxgate.tokens import count_tokens

    archive = Archive()
    forced = FirewallPolicy(min_tokens=0)
    rows = []
    for name, log, gt, held in logs:
        n_lines = log.count(b"\n") + (0 if log.endswith(b"\n") else 1)
        res = firewall("shell", log, archive=archive, policy=forced)
        got = shown_lines(res.text) & gt
        ht_lines = sorted(baseline_lines(n_lines))
        text_lines = log.split(b"\n")
        ht_text = "\n".join(text_lines[i - 1].decode("utf-8", "replace")
                            for i in ht_lines if i - 1 < len(text_lines))
        views = _named_views(archive, res.text) if res.digested else set(gt)
        rows.append({
            "case": name, "held_out": held,
            "lines": n_lines, "gt": len(gt), "shown": len(got),
            "tokens": count_tokens(res.text).count, "bytes": len(res.text.encode()),
            "reachable": min(gt) in views,
            "reach_all": len(gt & (views | got)),
            "ht_shown": len(baseline_lines(n_lines) & gt),
            "ht_tokens": count_tokens(ht_text).count,
        })
    return rows


def summary(rows: list[dict], shown: str, tokens: str, reach: bool) -> str:
    if not rows:
        return "| - | - | - | - | - | - | - |"
    recall = statistics.mean(r[shown] / r["gt"] for r in rows)
    allv = sum(r[shown] == r["gt"] for r in rows) / len(rows)
    toks = sorted(r[tokens] for r in rows)
    p50 = statistics.median(toks)
    p95 = toks[min(len(toks) - 1, round(0.95 * (len(toks) - 1)))]
    pooled = sum(r[shown] for r in rows) / sum(r["gt"] for r in rows)
    first = all_reach = "-"
    if reach:
        first = f"{100 * sum(r['reachable'] for r in rows) / len(rows):.0f} %"
        if all("reach_all" in r for r in rows):
            all_reach = (f"{100 * statistics.mean(r['reach_all'] / r['gt'] for r in rows):.1f} %"
                         f" ({sum(r['reach_all'] == r['gt'] for r in rows)}/{len(rows)} logs)")
    return (f"| {100 * recall:.1f} % | {100 * allv:.1f} % | {p50:,.0f} | {p95:,} | {first} "
            f"| {all_reach} | {100 * pooled:.1f} % |")


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def main(argv: list[str]) -> int:
    per_case = "--per-case" in argv
    rows_only = "--rows-json" in argv
    baseline_src = _option(argv, "--baseline")
    chunks_dir = _option(argv, "--logchunks")
    chunks_limit = _option(argv, "--logchunks-limit")
    valued = {"--baseline", "--logchunks", "--logchunks-limit"}
    args = [a for i, a in enumerate(argv) if not a.startswith("--")
            and (i == 0 or argv[i - 1] not in valued)]
    data = Path(args[0]) if args else DEFAULT_DATA
    if not cases(data):
        print(f"no cases under {data}", file=sys.stderr)
        return 2
    logs = [(*x, "cidiff") for x in cidiff_logs(data)]
    if chunks_dir:
        if not (Path(chunks_dir) / "tool/samples").is_dir():
            print(f"no LogChunks data under {chunks_dir} (see benchmarks/logchunks.py)",
                  file=sys.stderr)
            return 2
        logs += [(*x, "logchunks") for x in logchunks_logs(
            Path(chunks_dir), int(chunks_limit) if chunks_limit else None)]
    started = time.perf_counter()
    rows = measure([x[:4] for x in logs])
    for row, x in zip(rows, logs, strict=True):
        row["source"] = x[4]
    if rows_only:
        print(json.dumps(rows))
        return 0
    base_rows: dict[str, dict] = {}
    if baseline_src:
        env = dict(os.environ, PYTHONPATH=baseline_src)
        skip = {i for i, a in enumerate(argv) if a == "--baseline"}
        extra = [a for i, a in enumerate(argv)
                 if a != "--per-case" and i not in skip and i - 1 not in skip]
        out = subprocess.run([sys.executable, __file__, *extra, "--rows-json"], env=env,
                             capture_output=True, text=True, check=True).stdout
        base_rows = {r["case"]: r for r in json.loads(out)}
    elapsed = time.perf_counter() - started
    if per_case:
        print(f"{'case':40} {'lines':>6} {'gt':>5} {'new':>5} {'tok':>5} {'reach':>5} "
              f"{'prev':>5} {'ptok':>5} {'h/t':>5}")
        for r in rows:
            b = base_rows.get(r["case"], {})
            print(f"{r['case'][:40]:40} {r['lines']:>6} {r['gt']:>5} {r['shown']:>5} "
                  f"{r['tokens']:>5} {r['reachable']!s:>5} {b.get('shown', '-'):>5} "
                  f"{b.get('tokens', '-'):>5} {r['ht_shown']:>5}")
        print()
    print(f"{len(rows)} labelled CI logs, {sum(r['gt'] for r in rows):,} labelled lines;"
          f" {elapsed:.1f} s; load average {os.getloadavg()[0]:.1f}. Recall and all-visible"
          " are per-log means; tokens o200k_base.")
    print("| digest | split | logs | line recall | all visible | tokens p50 | tokens p95 "
          "| first line reachable by one named expand | labelled lines visible or reachable "
          "by a named expand | pooled line recall |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    if data.resolve() == DEFAULT_DATA.resolve():
        splits = [("cidiff all", lambda r: r["source"] == "cidiff"),
                  ("cidiff dev", lambda r: r["source"] == "cidiff" and not r["held_out"]),
                  ("cidiff held-out", lambda r: r["source"] == "cidiff" and r["held_out"])]
    else:  # another corpus in the same layout (the own Maven corpus): no cidiff split
        splits = [(f"{data.name} (all)", lambda r: r["source"] == "cidiff")]
    if chunks_dir:
        splits += [("LogChunks all", lambda r: r["source"] == "logchunks"),
                   ("LogChunks dev", lambda r: r["source"] == "logchunks" and not r["held_out"]),
                   ("LogChunks held-out",
                    lambda r: r["source"] == "logchunks" and r["held_out"])]
    for split, pick in splits:
        part = [r for r in rows if pick(r)]
        print(f"| ctxgate (this checkout) | {split} | {len(part)} "
              + summary(part, "shown", "tokens", True))
        if base_rows:
            bpart = [base_rows[r["case"]] for r in part if r["case"] in base_rows]
            print(f"| ctxgate (baseline {baseline_src}) | {split} | {len(bpart)} "
                  + summary(bpart, "shown", "tokens", True))
        print(f"| head 20 + tail 8 (lean-ctx shape) | {split} | {len(part)} "
              + summary(part, "ht_shown", "ht_tokens", False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
