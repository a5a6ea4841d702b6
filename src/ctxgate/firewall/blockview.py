"""The failure-block form of a line digest: few labelled contiguous windows, not scattered lines.

Used by :mod:`ctxgate.firewall.digest` when the output has failure blocks
(:mod:`ctxgate.firewall.blocks`) or rare line shapes (:mod:`ctxgate.firewall.shapes`).
Layout: header; a short head; each chosen block as ``--- failure block: lines A–B (label) ---``
with its lines (a block larger than its share is shown from both ends with the elided range
and the exact ``expand`` that shows it; a long line start shared with the line above is
written ``〃``); the omitted ranges between them with their counts of lines that matter; the
blocks not shown, the strongest each with the ``expand`` that shows it; the dominant and rare
line shapes; the last lines unless they are boilerplate; drill-down.

The budget is spent in the order of :func:`~ctxgate.firewall.blocks.pick_blocks` (the last
failing block first, then the first one, then by severity) until a soft size target is met.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ctxgate.firewall.blocks import (
    WINDOW_MAX_LINES,
    Block,
    KnownLine,
    find_blocks,
    in_passing_tests,
    is_boilerplate,
    last_lines,
    opens_report,
    pick_blocks,
    strong_line,
    visible,
)
from ctxgate.firewall.render import GREP_MATTERS, Digest

if TYPE_CHECKING:
    from ctxgate.firewall.render import Renderer

__all__ = ["SOFT_TARGET_BYTES", "rare_lines", "render_blocks", "tail_known"]

SOFT_TARGET_BYTES = 2_800
"""Digest size the block form aims at (UTF-8 bytes; about 1,000 o200k tokens of CI log)."""
_LAST_BLOCK_BYTES = 5_000
"""The last failing block may take the digest up to this size when it does not fit."""
_SECOND_BLOCK_BYTES = 4_600
"""A second error block that does not fit whole may take the digest up to this size."""
_STEP_SHARE = 0.45
"""Share of the soft target's room (beside header, lists and drill-down) the failed step's end may take when the output has tests'
failure reports (which then get the rest: they say which test failed and why)."""
_TAIL_KNOWN_LINES = 400
_ANALYSED_LINES = 1_600
"""Most lines (windows and tail) whose roles are read to find blocks."""
_HEAD_LINES = 2
_TAIL_LINES = 2
_WIDTH = 160
_EDGE_WIDTH = 120
"""Head and tail lines are cut shorter than block lines: they rarely explain a failure."""
_MAX_BLOCKS = 6
"""Blocks shown at most (fewer with a smaller ``digest_error_lines``); the rest are counted."""
_STAMP = re.compile(rb"(?:[^\t\n]*\t){0,3}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ")


def tail_known(r: Renderer) -> list[KnownLine]:
    """The output's last lines (at most 400) from the scanner's kept tail bytes."""
    s = r.scan
    return [KnownLine(number=k.number, raw=k.raw.rstrip(b"\r"), length=k.length, end=k.end)
            for k in last_lines(s.suffix, s.total_bytes, s.lines, n=_TAIL_KNOWN_LINES,
                                keep=512)]


def render_blocks(r: Renderer, budget: int) -> Digest | None:
    """The block form, or None when the output has neither failure blocks nor rare shapes."""
    s = r.scan
    tail = tail_known(r)
    known = _bounded_windows(list(s.windows), _ANALYSED_LINES - len(tail)) + tail
    blocks = in_passing_tests(find_blocks(known), known, s.passing_ranges, s.passing_classes)
    shapes = s.shapes
    rare = list(shapes.rare) if shapes is not None else []
    if not blocks and not rare:
        return None
    target = min(budget, SOFT_TARGET_BYTES)
    head_n = min(r.policy.digest_head_lines, _HEAD_LINES)
    head = [(n, txt, ln) for n, txt, ln in _head(r, head_n)]
    while head and not head[-1][1].strip():
        head.pop()
    head_end = head[-1][0] if head else 0
    blocks = [b for b in blocks if b.last > head_end]
    chosen: list[tuple[Block, list[KnownLine] | None]] = []  # None: shown whole
    cache: dict[tuple[int, int], str] = {}  # rendered lines, each rendered once
    width = min(r.policy.digest_line_max_bytes, _WIDTH)

    # a line shown in the head is not repeated; CI boilerplate (cleanup) is not worth a slot
    rare = [x for x in rare if x.number > head_end and not is_boilerplate(
        KnownLine(number=x.number, raw=x.text, length=len(x.text)))]

    def text(chosen_now, tail_lines, rare_n) -> str:
        return _assemble(r, head, chosen_now, tail_lines, rare, rare_n, width, blocks, cache)

    # the last lines, unless they are boilerplate (cleanup, uploads): the omitted range says so
    tail_lines = [x for x in tail[-_TAIL_LINES:] if x.number > head_end]
    if all(is_boilerplate(x) for x in tail_lines):
        tail_lines = []
    rare_n = min(len(rare), 6)
    max_blocks = max(1, min(r.policy.digest_error_lines, _MAX_BLOCKS))
    order = pick_blocks(blocks, s.lines)[:max_blocks]
    reports = any(b.owner for b in order[1:])
    shown_from_ends = False  # the first block did not fit and took the larger room
    for i, b in enumerate(order):
        if not b.strong and any(part is not None for _b, part in chosen):
            break  # application log lines alone, while a failure is shown only in part
        trial = chosen + [(b, None)]
        if len(text(trial, tail_lines, rare_n).encode("utf-8")) <= target:
            chosen = trial
            continue
        if i == 0 and reports:  # the step's end shares the digest with the tests' reports
            base = len(text([], tail_lines, rare_n).encode("utf-8"))
            keep = _fit_ends(lambda part, b=b: text([(b, part)], tail_lines, rare_n), b,
                             min(budget, base + int(max(0, target - base) * _STEP_SHARE)))
            chosen = [(b, keep)]
            continue
        if b.owner and i > 0:  # a test's failure report: its ends within the larger room
            room = min(budget, _LAST_BLOCK_BYTES if len(chosen) < 2 else _SECOND_BLOCK_BYTES)
            keep = _fit_ends(lambda part, b=b, c=chosen: text(c + [(b, part)], tail_lines,
                                                              rare_n), b, room)
            if len(keep) >= 3 and len(text(chosen + [(b, keep)], tail_lines,
                                           rare_n).encode("utf-8")) <= room:
                chosen = chosen + [(b, keep)]
            continue
        if i == 0:  # the last failing block: show it from both ends within a larger target
            room = min(budget, _LAST_BLOCK_BYTES)
            keep = _fit_ends(lambda part, b=b: text([(b, part)], tail_lines, rare_n), b, room)
            chosen = [(b, keep)]
            shown_from_ends = True
            continue  # what it left of the soft target may still show another block's ends
        # another block that does not fit whole: its ends, when a few lines fit (an error
        # or exception block may take the digest to _SECOND_BLOCK_BYTES: the cause is often
        # a stack trace above the summary that failed the run)
        # (not the first failed step's end: the last one, shown, says what failed)
        room = min(budget, _SECOND_BLOCK_BYTES) if b.severity >= 3 and not b.ends_step \
            and not shown_from_ends else target
        keep = _fit_ends(lambda part, b=b, c=chosen: text(c + [(b, part)], tail_lines, rare_n),
                         b, room)
        if len(keep) >= 4 and len(text(chosen + [(b, keep)], tail_lines,
                                       rare_n).encode("utf-8")) <= room:
            chosen = chosen + [(b, keep)]
        break
    chosen = _grow(chosen, known, lambda c: len(text(c, tail_lines, rare_n).encode("utf-8")),
                   int(target * _GROW_TO))
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
                  hits_shown=sum(len(part) if part else (b.core[1] - b.core[0] + 1 if b.core
                                                         else len(b.lines))
                                 for b, part in chosen))


_GROW_TO = 0.92
"""Share of the soft target up to which blocks shown whole grow by the lines around them."""
_GROW_STEP = 3
_GROW_MAX = 15
"""Lines a block shown whole may grow by, each way (in steps of :data:`_GROW_STEP`)."""


def _grow(chosen, known: list[KnownLine], size, room: int):
    """Blocks shown whole, grown by the known lines below and above them while the digest
    stays within ``room`` bytes (a failure's message often sits a few ordinary lines from the
    line that says "error"; a digest far below its target has room for them)."""
    if not chosen or size(chosen) >= room:
        return chosen
    by_no = {k.number: k for k in known}
    out = list(chosen)
    for i in range(len(out)):
        for below in (True, False):
            for _ in range(_GROW_MAX // _GROW_STEP):
                b, part = out[i]
                if part is not None:
                    break
                taken = {n for j, (c, _p) in enumerate(out) if j != i
                         for n in range(c.first, c.last + 1)}
                ns = range(b.last + 1, b.last + 1 + _GROW_STEP) if below else \
                    range(b.first - _GROW_STEP, b.first)
                if any(n not in by_no or n in taken for n in ns):
                    break
                more = tuple(by_no[n] for n in ns)
                lines = b.lines + more if below else more + b.lines
                g = Block(first=lines[0].number, last=lines[-1].number, label=b.label,
                          severity=b.severity, lines=lines, ends_step=b.ends_step,
                          owner=b.owner, core=b.core or (b.first, b.last), strong=b.strong,
                          headers=b.headers)
                trial = out[:i] + [(g, None)] + out[i + 1:]
                if size(trial) > room:
                    break
                out = trial
    return out


def _bounded_windows(windows: list, room: int) -> list[KnownLine]:
    """Lines of the kept windows, at most ``room``: the first window, the windows that hold a
    test's failure report (in a long log of passing tests that log errors, the report sits in
    the middle), then the latest ones (a flood of lines that matter would otherwise make the
    analysis slow)."""
    if sum(len(w) for w in windows) <= room:
        return [x for w in windows for x in w]
    picked = {0} if windows else set()
    used = len(windows[0]) if windows else 0
    for i, w in enumerate(windows[1:], start=1):
        if opens_report(w) and used + len(w) <= room - 2 * WINDOW_MAX_LINES:
            picked.add(i)
            used += len(w)
    for i in range(len(windows) - 1, 0, -1):
        if i in picked:
            continue
        if used + len(windows[i]) > room:
            break
        picked.add(i)
        used += len(windows[i])
    return [x for i in sorted(picked) for x in windows[i]]


def _fit_ends(render, b: Block, room: int) -> list[KnownLine]:
    """The most lines of ``b`` from both ends (two thirds from the top) that fit ``room``.

    A block that opens with other lines (a passing test's ``ERROR … retrying`` or the stack
    trace of an exception it handled, merged with the failure below it) is shown from the line
    above its first test report header, or without one its first strong line (a summary, a
    signal that is not an application log line): its top third would otherwise go to the
    noise and the report would fall in the omitted middle."""
    lines = list(b.lines)
    first = next((i for i, x in enumerate(lines) if x.number in b.headers), None)
    if first is None:
        first = next((i for i, x in enumerate(lines) if strong_line(x)), 0)
    if first > _NOISE_LEAD:
        lines = lines[first - 1:]
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


_NOISE_LEAD = 3
"""Lines a block may open with before its first strong line and still be shown from its top."""


def _head(r: Renderer, n: int):
    """The first ``n`` lines as a terminal shows them (a CI runner's fold markers before a
    carriage return left out)."""
    if not n:
        return []
    raws = r.scan.prefix.split(b"\n", n)[:n]
    out = []
    for (number, text, full), raw in zip(r._head_lines(n), raws, strict=False):  # type: ignore[attr-defined]
        shown = visible(raw[:4096])
        if len(shown) != len(raw[:4096].rstrip(b"\r")):
            text = r.text_of(shown)
            full = None if full is None else full - (len(raw.rstrip(b"\r")) - len(shown))
        out.append((number, text, full))
    return out


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


def _assemble(r: Renderer, head, chosen, tail: list[KnownLine], rare, rare_n: int, width: int,
              all_blocks: list[Block], cache: dict) -> str:
    s = r.scan
    gutter = max(4, len(str(s.lines)))
    fmt = f"{{:>{gutter}}}| {{}}"

    def line_of(k: KnownLine, above: KnownLine | None = None) -> str:
        key = (k.number, width, above is not None)
        done = cache.get(key)
        if done is None:
            done = cache[key] = render_line(k, width, above)
        return done

    def render_line(k: KnownLine, cut_at: int, above: KnownLine | None = None) -> str:
        raw, full = _unstamped_raw(k)
        text = r.text_of(raw)
        if above is not None:  # a long start shared with the line above is written 〃
            same = _shared_start(r.text_of(_unstamped_raw(above)[0]), text)
            if same:
                rest = text[same:]
                return fmt.format(k.number, _DITTO + r.cut(
                    rest, cut_at, full - len(text[:same].encode("utf-8"))))
        return fmt.format(k.number, r.cut(text, cut_at, full))

    body: list[str] = []
    if head:
        body.append(f"--- head: lines 1-{head[-1][0]:,} ---")
        body += [fmt.format(n, r.cut(_unstamped(t), min(width, _EDGE_WIDTH), ln))
                 for n, t, ln in head]
    pos = (head[-1][0] if head else 0) + 1
    hits = s.hits
    dittoed = False
    legend_at = len(body)
    for b, part in sorted(chosen, key=lambda c: c[0].first):
        first = max(b.first, pos)
        body += _omitted(pos, first - 1, hits)
        stamped = " timestamps cut;" if any(_STAMP.match(x.raw) for x in b.lines[:3]) else ""
        lo, hi = b.core or (first, b.last)
        lo = max(lo, first)
        size = hi - lo + 1
        around = f"; shown with lines {first:,}–{b.last:,}" if (lo, hi) != (first, b.last) \
            else ""
        body.append(f"--- failure block: lines {lo:,}–{hi:,} ({b.label};{stamped}"
                    f" {size:,} line{'' if size == 1 else 's'}{around}) ---")
        lines = [x for x in (part or b.lines) if x.number >= first]
        prev = None
        runs = _boiler_runs(lines)
        repeats = _repeat_runs(lines)
        for i, k in enumerate(lines):
            same = repeats.get(i)
            if same is not None and (prev is None or k.number > prev.number):
                # a recursion's frames: the line above, again and again
                body.append(f"  … lines {k.number:,}–{same.number:,}: "
                            f"{same.number - k.number + 1} more the same as line "
                            f"{k.number - 1:,}")
                prev = same
                continue
            run = runs.get(i)
            if run is not None:  # a run of boilerplate: counted, not shown
                body.append(f"  … lines {k.number:,}–{run.number:,}: {run.number - k.number + 1} "
                            f"blank or boilerplate lines: ctxgate expand {r.id} --lines "
                            f"{k.number}:{run.number}")
                prev = run
                continue
            if prev is not None and k.number <= prev.number:
                continue
            if prev is None and k.number > first:
                body.append(f"  … lines {first:,}–{k.number - 1:,} of this block not "
                            f"shown: ctxgate expand {r.id} --lines {first}:{k.number - 1}")
            if prev is not None and k.number > prev.number + 1:
                body.append(f"  … lines {prev.number + 1:,}–{k.number - 1:,} of this block not "
                            f"shown: ctxgate expand {r.id} --lines {prev.number + 1}:"
                            f"{k.number - 1}")
            above = prev if prev is not None and prev.number == k.number - 1 else None
            line = line_of(k, above)
            if _DITTO in line[:gutter + 3] and not dittoed:
                dittoed = True
                body.insert(legend_at, f"({_DITTO} at a line's start: the same first "
                                       "characters as the line above)")
            body.append(line)
            prev = k
        pos = b.last + 1
    more = sum(1 for b in all_blocks if not _covered(b, chosen))
    tail = [k for k in tail if k.number >= pos]
    end = tail[0].number - 1 if tail else s.lines
    body += _omitted(pos, end, hits)
    if more > 0:
        body += _unshown(r, chosen, all_blocks, more)
    # rare_n rare lines that no block and not the tail shows (never one twice): lines that
    # matter first (a lone FAILED among PASSED), then the earliest; shown in line order
    inside = {k.number for b, part in chosen for k in (part or b.lines)}
    inside.update(k.number for k in tail)
    matter = {h.number for h in hits}
    pick = sorted((x for x in rare if x.number not in inside),
                  key=lambda x: (x.number not in matter, x.number))[:rare_n]
    body += _shape_lines(r, sorted(pick, key=lambda x: x.number), fmt, width)
    if tail:
        body.append(f"--- tail: lines {tail[0].number:,}-{s.lines:,} ---")
        body += [render_line(k, min(width, _EDGE_WIDTH)) for k in tail]
    if s.hit_counts:
        kinds = ", ".join(f"{k} {v:,}" for k, v in s.hit_counts.items())
        exact = "" if s.hits_exact else f" ({s.unclassified_note})"
        body.append(f"lines that matter: {sum(s.hit_counts.values()):,} ({kinds}){exact}")
    sel = []
    first_block = min((b for b, _ in chosen), key=lambda b: b.first, default=None)
    if first_block is not None:
        at = (first_block.core or (first_block.first, 0))[0]
        lo = max(1, at - 20)
        sel.append((f"--lines {lo}:{at + 199}", f'lines="{lo}:{at + 199}"'))
    last_block = max((b for b, _ in chosen), key=lambda b: b.first, default=None)
    if last_block is not None and last_block.first - 1 > (at + 199 if
                                                          first_block else 0):
        # what led up to the final failure (a stack trace above its summary)
        lo, hi = max(1, last_block.first - 200), last_block.first - 1
        sel.append((f"--lines {lo}:{hi}", f'lines="{lo}:{hi}"'))
    sel.append((f"--grep '{GREP_MATTERS}' -i -C 2",
                f'grep="{GREP_MATTERS}", ignore_case=true, context=2'))
    if s.longest_line >= r.policy.long_line_bytes:
        sel.append(("--bytes 0:4096", 'bytes="0:4096"'))
    return "\n".join(r.header() + body + r.warning() + r.drill(sel[:4], compact=False))


_BOILER_RUN = 4
"""Consecutive boilerplate lines (blank, ``[INFO] ----``, Maven's passing modules, cleanup)
inside a block shown as one line that counts them, from this many on."""


def _runs(lines: list[KnownLine], joins, least: int) -> dict[int, KnownLine]:
    """Index of the first line of each run of at least ``least`` lines for which
    ``joins(k, start)`` holds (line ``k`` continues the run begun at ``start``) → the run's
    last line."""
    out: dict[int, KnownLine] = {}
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and joins(j, i):
            j += 1
        if j - i >= least:
            out[i] = lines[j - 1]
            i = j
        else:
            i = max(j, i + 1)
    return out


def _repeat_runs(lines: list[KnownLine]) -> dict[int, KnownLine]:
    """Index of the second line of each run of at least :data:`_REPEAT_RUN` consecutive
    identical lines in ``lines`` → the run's last line (the first of them is shown)."""

    def same_as_above_start(k: int, start: int) -> bool:
        if start == 0:  # the first line has no line above it to repeat
            return False
        x, ref = lines[k], lines[start - 1]
        return x.number == lines[k - 1].number + 1 and bool(x.raw.strip()) \
            and (x.raw, x.length, x.end) == (ref.raw, ref.length, ref.end)

    return _runs(lines, same_as_above_start, _REPEAT_RUN - 1)


_REPEAT_RUN = 3
"""Identical consecutive lines from which all but the first are counted, not shown."""


def _boiler_runs(lines: list[KnownLine]) -> dict[int, KnownLine]:
    """Index of the first line of each run of at least :data:`_BOILER_RUN` consecutive
    boilerplate lines in ``lines`` → the run's last line."""
    return _runs(lines, lambda k, start: is_boilerplate(lines[k]) and (
        k == start or lines[k].number == lines[k - 1].number + 1), _BOILER_RUN)


def _unshown(r: Renderer, chosen, all_blocks: list[Block], more: int) -> list[str]:
    """The failure blocks not shown, each within the exact ``expand`` that shows it: blocks
    less than :data:`_UNSHOWN_SPAN` lines apart share one ``--lines`` range; the ranges of
    the strongest blocks first, at most :data:`_UNSHOWN_LISTED`; a count of the rest."""
    rest = [b for b in pick_blocks(all_blocks, r.scan.lines) if not _covered(b, chosen)]
    groups: list[list[Block]] = []
    for b in sorted(rest, key=lambda b: b.first):
        if groups and b.last - groups[-1][0].first < _UNSHOWN_SPAN:
            groups[-1].append(b)
        else:
            groups.append([b])
    rank = {id(b): i for i, b in enumerate(rest)}
    groups.sort(key=lambda g: min(rank[id(b)] for b in g))
    listed = sorted(groups[:_UNSHOWN_LISTED], key=lambda g: g[0].first)
    n_listed = sum(len(g) for g in listed)
    head = f"--- {more} more failure block(s) not shown"
    if n_listed < more:
        head += f"; the {n_listed} strongest with their expand"
    out = [head + ": ---"]
    for g in listed:
        lo, hi = g[0].first, min(max(b.last for b in g), g[0].first + _UNSHOWN_SPAN - 1)
        labels = sorted({b.label for b in g}, key=lambda x: [b.label for b in g].index(x))
        where = f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"
        what = ", ".join(labels[:2]) + (f"; {len(g)} blocks" if len(g) > 1 else "")
        out.append(f"  {where} ({what}): ctxgate expand {r.id} --lines {lo}:{hi}")
    others = sorted(groups[_UNSHOWN_LISTED:], key=lambda g: g[0].first)
    if others:  # every other block too, by the exact range that shows it
        ranges = [f"{g[0].first}:{min(max(b.last for b in g), g[0].first + _UNSHOWN_SPAN - 1)}"
                  for g in others]
        out.append(f"  the other {sum(len(g) for g in others)}: --lines " + ", ".join(ranges))
    return out


def _covered(b: Block, chosen) -> bool:
    """Whether ``b`` is one of the ``chosen`` blocks, or inside one grown by :func:`_grow`."""
    return any(c.first <= b.first and b.last <= c.last and (part is None or c is b)
               for c, part in chosen)


_UNSHOWN_LISTED = 4
_UNSHOWN_SPAN = 120
"""Unshown blocks whose lines fit in this many lines are named by one ``--lines`` range."""
_DITTO = "〃"
_DITTO_MIN = 28
"""A line's start shared with the line above is written 〃 when at least this many characters
(cut at a separator, so the rest starts a word): repeated paths and package names cost about
one o200k token per four characters."""
_SEPARATORS = " /\\.:(["


def _shared_start(above: str, text: str) -> int:
    """Characters of ``text`` to write as 〃: the start it shares with ``above``, cut just after
    a separator; 0 when that is shorter than :data:`_DITTO_MIN` or leaves nothing."""
    n = 0
    for a, b in zip(above, text, strict=False):
        if a != b:
            break
        n += 1
    if n < _DITTO_MIN or n >= len(text):
        return 0
    while n > 0 and text[n - 1] not in _SEPARATORS:
        n -= 1
    return n if n >= _DITTO_MIN else 0


def _unstamped_raw(k: KnownLine) -> tuple[bytes, int]:
    """A line's bytes as a terminal shows them (:func:`~ctxgate.firewall.blocks.visible`: a
    CI runner's ``travis_time:end:…`` before a carriage return costs some 35 tokens) and
    without a CI timestamp (``2022-05-30T09:10:31.1584995Z``; about ten tokens that say
    nothing about the failure), and its full length without them."""
    raw = visible(k.raw)
    full = k.length - (len(k.raw.rstrip(b"\r")) - len(raw))
    stamp = _STAMP.match(raw)
    if stamp is None:
        return raw, full
    return raw[stamp.end():], full - stamp.end()


def _unstamped(text: str) -> str:
    stamp = _STAMP.match(text.encode("utf-8"))
    return text[len(stamp.group().decode("utf-8", "replace")):] if stamp else text


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
        out.append(fmt.format(x.number, r.cut(r.text_of(visible(x.text)), width)) + f"   ← {x.why}")
    return out
