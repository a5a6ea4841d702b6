"""The failure-block form of a line digest: few labelled contiguous windows, not scattered lines.

Used by :mod:`ctxgate.firewall.digest` when the output has failure blocks
(:mod:`ctxgate.firewall.blocks`) or rare line shapes (:mod:`ctxgate.firewall.shapes`).
Layout: header; a short head; each chosen block as ``--- failure block: lines A–B (label) ---``
with its lines (a block larger than its share is shown from both ends with the elided range
and the exact ``expand`` that shows it); the omitted ranges between them with their counts of
lines that matter; the dominant and rare line shapes; the last lines; drill-down.

The budget is spent in the order of :func:`~ctxgate.firewall.blocks.pick_blocks` (the last
failing block first, then the first one, then by severity) until a soft size target is met.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ctxgate.firewall.blocks import Block, KnownLine, find_blocks, pick_blocks
from ctxgate.firewall.render import GREP_MATTERS, Digest

if TYPE_CHECKING:
    from ctxgate.firewall.render import Renderer

__all__ = ["SOFT_TARGET_BYTES", "rare_lines", "render_blocks", "tail_known"]

SOFT_TARGET_BYTES = 3_300
"""Digest size the block form aims at (UTF-8 bytes; about 1,000 o200k tokens of CI log)."""
_LAST_BLOCK_BYTES = 5_200
"""The last failing block may take the digest up to this size when it does not fit."""
_TAIL_KNOWN_LINES = 400
_ANALYSED_LINES = 1_600
"""Most lines (windows and tail) whose roles are read to find blocks."""
_HEAD_LINES = 4
_TAIL_LINES = 3
_WIDTH = 160
_MAX_BLOCKS = 6
"""Blocks shown at most (fewer with a smaller ``digest_error_lines``); the rest are counted."""
_STAMP = re.compile(rb"(?:[^\t\n]*\t){0,3}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ")


def tail_known(r: Renderer) -> list[KnownLine]:
    """The output's last lines (at most 400) from the scanner's kept tail bytes."""
    s = r.scan
    parts = s.suffix.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    whole = len(s.suffix) == s.total_bytes
    out: list[KnownLine] = []
    for j, raw in enumerate(reversed(parts)):
        if len(out) >= _TAIL_KNOWN_LINES or (j == len(parts) - 1 and not whole):
            break
        out.append(KnownLine(number=s.lines - j, raw=raw[:512].rstrip(b"\r"), length=len(raw)))
    out.reverse()
    return out


def render_blocks(r: Renderer, budget: int) -> Digest | None:
    """The block form, or None when the output has neither failure blocks nor rare shapes."""
    s = r.scan
    tail = tail_known(r)
    known = _bounded_windows(list(s.windows), _ANALYSED_LINES - len(tail)) + tail
    blocks = find_blocks(known)
    shapes = s.shapes
    rare = list(shapes.rare) if shapes is not None else []
    if not blocks and not rare:
        return None
    target = min(budget, SOFT_TARGET_BYTES)
    head_n = min(r.policy.digest_head_lines, _HEAD_LINES)
    head = [(n, txt, ln) for n, txt, ln in _head(r, head_n)]
    head_end = head[-1][0] if head else 0
    blocks = [b for b in blocks if b.last > head_end]
    chosen: list[tuple[Block, list[KnownLine] | None]] = []  # None: shown whole
    cache: dict[tuple[int, int], str] = {}  # rendered lines, each rendered once
    width = min(r.policy.digest_line_max_bytes, _WIDTH)

    def text(chosen_now, tail_lines, rare_n) -> str:
        return _assemble(r, head, chosen_now, tail_lines, rare[:rare_n], width, blocks, cache)

    tail_lines = [x for x in tail[-_TAIL_LINES:] if x.number > head_end]
    rare_n = min(len(rare), 6)
    max_blocks = max(1, min(r.policy.digest_error_lines, _MAX_BLOCKS))
    for i, b in enumerate(pick_blocks(blocks, s.lines)[:max_blocks]):
        trial = chosen + [(b, None)]
        if len(text(trial, tail_lines, rare_n).encode("utf-8")) <= target:
            chosen = trial
            continue
        if i == 0:  # the last failing block: show it from both ends within a larger target
            room = min(budget, _LAST_BLOCK_BYTES)
            keep = _fit_ends(lambda part, b=b: text([(b, part)], tail_lines, rare_n), b, room)
            chosen = [(b, keep)]
            break
        # another block that does not fit whole: its ends, when a few lines fit
        keep = _fit_ends(lambda part, b=b, c=chosen: text(c + [(b, part)], tail_lines, rare_n),
                         b, target)
        if len(keep) >= 4 and len(text(chosen + [(b, keep)], tail_lines,
                                       rare_n).encode("utf-8")) <= target:
            chosen = chosen + [(b, keep)]
        break
    out = text(chosen, tail_lines, rare_n)
    while len(out.encode("utf-8")) > budget and (rare_n or tail_lines or chosen):
        if rare_n:
            rare_n -= 1
        elif tail_lines:
            tail_lines = tail_lines[1:]
        else:
            chosen = chosen[:-1]
        out = text(chosen, tail_lines, rare_n)
    shown = [(b.first, b.last) for b, _ in chosen]
    return Digest(text=out, form="lines", archive_id=r.id,
                  omitted_lines=_gaps(head_end, sorted(shown), tail_lines, s.lines),
                  hits_shown=sum(len(part or b.lines) for b, part in chosen))


def _bounded_windows(windows: list, room: int) -> list[KnownLine]:
    """Lines of the kept windows, at most ``room``: the first window, then the latest ones
    (a flood of lines that matter would otherwise make the analysis slow)."""
    if sum(len(w) for w in windows) <= room:
        return [x for w in windows for x in w]
    picked = windows[:1]
    used = len(windows[0]) if windows else 0
    late: list = []
    for w in reversed(windows[1:]):
        if used + len(w) > room:
            break
        late.append(w)
        used += len(w)
    return [x for w in picked + late[::-1] for x in w]


def _fit_ends(render, b: Block, room: int) -> list[KnownLine]:
    """The most lines of ``b`` from both ends (two thirds from the top) that fit ``room``."""
    lines = list(b.lines)
    lo, hi = 2, len(lines)
    best = lines[:1] + lines[-1:]
    while lo <= hi:
        mid = (lo + hi) // 2
        top = (mid * 2 + 2) // 3
        part = lines[:top] + lines[len(lines) - (mid - top):] if mid - top else lines[:top]
        if len(render(part).encode("utf-8")) <= room:
            best, lo = part, mid + 1
        else:
            hi = mid - 1
    return best


def _head(r: Renderer, n: int):
    return r._head_lines(n) if n else []  # type: ignore[attr-defined]


def _gaps(head_end: int, shown: list[tuple[int, int]], tail: list[KnownLine], total: int):
    out = []
    pos = head_end + 1
    ends = shown + ([(tail[0].number, total)] if tail else [])
    for a, b in ends:
        if a > pos:
            out.append((pos, a - 1))
        pos = max(pos, b + 1)
    if pos <= total and not tail:
        out.append((pos, total))
    return tuple(out)


def _assemble(r: Renderer, head, chosen, tail: list[KnownLine], rare, width: int,
              all_blocks: list[Block], cache: dict) -> str:
    s = r.scan
    gutter = max(4, len(str(s.lines)))
    fmt = f"{{:>{gutter}}}| {{}}"

    def line_of(k: KnownLine) -> str:
        key = (k.number, width)
        done = cache.get(key)
        if done is None:
            done = cache[key] = render_line(k)
        return done

    def render_line(k: KnownLine) -> str:
        raw = k.raw
        stamp = _STAMP.match(raw)
        if stamp:  # CI timestamps cost ~10 tokens a line and say nothing about the failure
            raw = raw[stamp.end():]
        return fmt.format(k.number, r.cut(r.text_of(raw), width,
                                          k.length - (stamp.end() if stamp else 0)))

    body: list[str] = []
    if head:
        body.append(f"--- head: lines 1-{head[-1][0]:,} ---")
        body += [fmt.format(n, r.cut(t, width, ln)) for n, t, ln in head]
    pos = (head[-1][0] if head else 0) + 1
    hits = s.hits
    for b, part in sorted(chosen, key=lambda c: c[0].first):
        first = max(b.first, pos)
        body += _omitted(pos, first - 1, hits)
        stamped = " timestamps cut;" if any(_STAMP.match(x.raw) for x in b.lines[:3]) else ""
        body.append(f"--- failure block: lines {first:,}–{b.last:,} ({b.label};{stamped}"
                    f" {b.size:,} line{'' if b.size == 1 else 's'}) ---")
        lines = [x for x in (part or b.lines) if x.number >= first]
        prev = None
        for k in lines:
            if prev is not None and k.number > prev + 1:
                body.append(f"  … lines {prev + 1:,}–{k.number - 1:,} of this block not shown: "
                            f"ctxgate expand {r.id} --lines {prev + 1}:{k.number - 1}")
            body.append(line_of(k))
            prev = k.number
        pos = b.last + 1
    more = len(all_blocks) - len(chosen)
    tail = [k for k in tail if k.number >= pos]
    end = tail[0].number - 1 if tail else s.lines
    body += _omitted(pos, end, hits)
    if more > 0:
        body.append(f"{more} more failure block(s) not shown; find them with: "
                    f"ctxgate expand {r.id} --grep '{GREP_MATTERS}' -i -C 2")
    inside = {k.number for b, part in chosen for k in (part or b.lines)}
    body += _shape_lines(r, [x for x in rare if x.number not in inside], fmt, width)
    if tail:
        body.append(f"--- tail: lines {tail[0].number:,}-{s.lines:,} ---")
        body += [line_of(k) for k in tail]
    if s.hit_counts:
        kinds = ", ".join(f"{k} {v:,}" for k, v in s.hit_counts.items())
        exact = "" if s.hits_exact else f" (classified up to line {s.hits_counted_to:,})"
        body.append(f"lines that matter: {sum(s.hit_counts.values()):,} in the output "
                    f"({kinds}){exact}")
    sel = []
    first_block = min((b for b, _ in chosen), key=lambda b: b.first, default=None)
    if first_block is not None:
        lo = max(1, first_block.first - 20)
        sel.append((f"--lines {lo}:{first_block.first + 199}",
                    f'lines="{lo}:{first_block.first + 199}"'))
    last_block = max((b for b, _ in chosen), key=lambda b: b.first, default=None)
    if last_block is not None and last_block.first - 1 > (first_block.first + 199 if
                                                          first_block else 0):
        # what led up to the final failure (a stack trace above its summary)
        lo, hi = max(1, last_block.first - 200), last_block.first - 1
        sel.append((f"--lines {lo}:{hi}", f'lines="{lo}:{hi}"'))
    sel.append((f"--grep '{GREP_MATTERS}' -i -C 2",
                f'grep="{GREP_MATTERS}", ignore_case=true, context=2'))
    if s.longest_line >= r.policy.long_line_bytes:
        sel.append(("--bytes 0:4096", 'bytes="0:4096"'))
    return "\n".join(r.header() + body + r.warning() + r.drill(sel[:4], compact=False))


def _omitted(a: int, b: int, hits) -> list[str]:
    if b < a:
        return []
    n = sum(1 for h in hits if a <= h.number <= b)
    what = f"; {n} line(s) that matter kept by the scan" if n else ""
    return [f"--- omitted: lines {a:,}-{b:,} ({b - a + 1:,} lines{what}) ---"]


def rare_lines(r: Renderer, limit: int) -> list[str]:
    """The shapes section alone (for the JSON Lines form), or nothing without rare lines."""
    s = r.scan
    rare = list(s.shapes.rare[:limit]) if s.shapes is not None else []
    fmt = f"{{:>{max(4, len(str(s.lines)))}}}| {{}}"
    return _shape_lines(r, rare, fmt, min(r.policy.digest_line_max_bytes, _WIDTH))


def _shape_lines(r: Renderer, rare, fmt: str, width: int) -> list[str]:
    s = r.scan.shapes
    if s is None or not rare:
        return []
    how = ("every line" if s.exact else
           f"{s.mined + s.checked:,} of {s.lines:,} lines (the rest sampled)")
    out = [f"--- line shapes: {s.distinct:,} in {how} ---"]
    for count, first, sample in s.top[:2]:
        out.append(f"  {count:,} lines like line {first:,}: "
                   f"{r.cut(r.text_of(sample), width - 40)}")
    out.append(f"rare lines ({len(s.rare):,}; shown with why):")
    for x in rare:
        out.append(fmt.format(x.number, r.cut(r.text_of(x.text), width)) + f"   ← {x.why}")
    return out
