"""grep over an entry: a streaming scan that counts every matching line and keeps the first few.

The scan decompresses one chunk at a time and searches the buffer, not line by line, so a
literal pattern runs near memory speed. Lines are the unit (like grep): a match counts its line
once and the search resumes at the next line. A match that crosses a newline (``\\s``, ``[^x]``)
is re-checked line by line, so results equal a per-line grep. Lines longer than
:data:`SEGMENT_BYTES` are searched in segments (a match across a segment cut can be missed; the
view says so). The whole scan has a wall-time limit, enforced inside the regex engine when the
``regex`` package is installed and between chunks otherwise.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxgate.archive.entry import Entry, View
from ctxgate.archive.pages import assemble, next_line_end
from ctxgate.archive.selectors import compile_line_counter, compile_regex, resolve_lines
from ctxgate.archive.views import (
    Budget,
    DecodeStats,
    clip_utf8,
    decode_row,
    fit_rows,
    inside_char,
)
from ctxgate.errors import UsageError

if TYPE_CHECKING:
    from ctxgate.archive.chunks import ChunkReader
    from ctxgate.archive.policy import ArchivePolicy
    from ctxgate.archive.selectors import Selection

__all__ = ["SEGMENT_BYTES", "Hit", "ScanResult", "render_grep", "scan"]

SEGMENT_BYTES = 4 << 20
"""Longest piece of a single line searched at once, bytes."""

LINE_SHOW_BYTES = 600
"""Bytes of one matching line shown around the match, bytes."""


@dataclass(frozen=True, kw_only=True)
class Hit:
    """One matching line."""

    line: int
    """1-based line number."""
    start: int
    """Offset of the line start (or segment start for giant lines), bytes."""
    end: int
    """Offset past the line's newline (or the segment end), bytes."""
    match: int
    """Offset of the first match in the line, bytes."""


@dataclass(frozen=True, kw_only=True)
class ScanResult:
    hits: list[Hit]
    """The first matching lines, at most ``keep``."""
    total: int
    """All matching lines in the range."""
    segmented: bool
    """True when some line was longer than SEGMENT_BYTES and searched in pieces."""


def scan(reader: ChunkReader, pattern, start: int, end: int, first_line: int, keep: int,
         deadline: float, counter=None) -> ScanResult:
    """Find matching lines in bytes ``[start, end)`` where ``start`` begins line ``first_line``.

    Once ``keep`` hits are collected, the rest is only counted; with a ``counter`` (see
    :func:`~ctxgate.archive.selectors.compile_line_counter`) that count runs in the regex
    engine rather than line by line in Python.
    """
    uses_timeout = type(pattern).__module__.startswith("regex")
    hits: list[Hit] = []
    total = 0
    segmented = False
    carry = b""
    carry_at = start
    line = first_line  # line number at carry_at
    for off, piece in reader.iter_range(start, end):
        buf = carry + piece if carry else piece
        base = carry_at
        final = off + len(piece) >= min(end, reader.size)
        if final:
            limit = len(buf)
        else:
            nl = buf.rfind(b"\n")
            if nl < 0:
                if len(buf) < SEGMENT_BYTES:
                    carry, carry_at = buf, base
                    continue
                limit = len(buf)
                segmented = True
            else:
                limit = nl + 1
        pos = 0
        counted = 0
        while pos < limit:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                _timeout(pattern)
            if counter is not None and len(hits) >= keep:
                try:
                    if uses_timeout:
                        total += len(counter.findall(buf, pos, limit, timeout=remaining))
                    else:
                        total += len(counter.findall(buf, pos, limit))
                except TimeoutError:
                    _timeout(pattern)
                break
            try:
                if uses_timeout:
                    m = pattern.search(buf, pos, limit, timeout=remaining)
                else:
                    m = pattern.search(buf, pos, limit)
            except TimeoutError:
                _timeout(pattern)
            if m is None:
                break
            ms = m.start()
            ls = buf.rfind(b"\n", 0, ms) + 1 if ms > 0 else 0
            ls = max(ls, pos)
            le = buf.find(b"\n", ms, limit)
            le = limit if le < 0 else le + 1
            if m.end() > le and b"\n" in buf[ms:m.end()]:
                # Crossed a newline: check each spanned line on its own.
                span_end = buf.find(b"\n", m.end() - 1, limit)
                span_end = limit if span_end < 0 else span_end + 1
                s = ls
                while s < span_end:
                    e = buf.find(b"\n", s, span_end)
                    e = span_end if e < 0 else e + 1
                    stop = e - 1 if buf[e - 1:e] == b"\n" else e
                    m2 = pattern.search(buf, s, stop)
                    if m2 is not None:
                        line += buf.count(b"\n", counted, s)
                        counted = s
                        total += 1
                        if len(hits) < keep:
                            hits.append(Hit(line=line, start=base + s, end=base + e,
                                            match=base + m2.start()))
                    s = e
                pos = span_end
                continue
            line += buf.count(b"\n", counted, ls)
            counted = ls
            total += 1
            if len(hits) < keep:
                hits.append(Hit(line=line, start=base + ls, end=base + le, match=base + ms))
            pos = le
        line += buf.count(b"\n", counted, limit)
        carry = buf[limit:]
        carry_at = base + limit
    return ScanResult(hits=hits, total=total, segmented=segmented)


def _timeout(pattern) -> None:
    raise UsageError(
        f"--grep {pattern.pattern.decode('utf-8', 'replace')!r} took longer than the time "
        "limit (archive.grep_timeout_seconds); use a simpler pattern or narrow it with --lines"
    )


def _line_before(reader: ChunkReader, start: int, n: int) -> int:
    """Start offset of line ``n - 1`` given that line ``n`` starts at ``start``."""
    if start <= 0 or n <= 1:
        return 0
    index = reader.index
    i = index.chunk_at(start - 1)
    data = reader.chunk(i)
    j = data.rfind(b"\n", 0, start - 1 - index.starts[i])
    if j >= 0:
        return index.starts[i] + j + 1
    return reader.line_start(n - 1)


def _show(reader: ChunkReader, start: int, end: int, focus: int | None,
          cap: int = LINE_SHOW_BYTES) -> tuple[bytes, str]:
    """Bytes of a line to display (a window around ``focus`` when long) and a clip note."""
    body_end = end
    length = end - start
    if length <= cap:
        raw = reader.read(start, length)
        return (raw[:-1] if raw.endswith(b"\n") else raw), ""
    lo = start if focus is None else max(start, focus - cap // 4)
    lead_in = min(lo, 3)
    raw = reader.read(lo - lead_in, cap + 3 + lead_in)
    _, skip = inside_char(raw, lead_in)
    raw = clip_utf8(raw[lead_in + skip:], cap)
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    shown_from = lo + skip
    return raw, (f" [{body_end - start} byte line, shown {shown_from}-{shown_from + len(raw)}; "
                 f"--bytes {shown_from}:{4 * cap}]")


def render_grep(reader: ChunkReader, entry: Entry, sel: Selection, budget: Budget,
                policy: ArchivePolicy) -> View:
    """Matching lines with context, total count and a paging hint."""
    assert sel.grep is not None
    pattern = compile_regex(sel.grep, sel.ignore_case)
    first, last = resolve_lines(sel.lines or (None, None), entry.lines)
    sid = entry.short_id
    flags = (" -i" if sel.ignore_case else "") + (f" -B {sel.before}" if sel.before else "") + \
        (f" -A {sel.after}" if sel.after else "")
    selector = f"--grep {shlex.quote(sel.grep)}{flags}"
    if sel.lines is not None:
        selector += f" --lines {first}:{last}"
    if entry.lines == 0 or first > last:
        return View(text=f"[{sid}] grep: no lines selected\n", entry=entry, selector=selector,
                    matches=0, shown_matches=0)
    start = reader.line_start(first)
    end = reader.line_end(last)
    keep = min(sel.max_matches, 100_000)
    deadline = time.monotonic() + policy.grep_timeout_seconds
    counter = compile_line_counter(sel.grep, sel.ignore_case)
    result = scan(reader, pattern, start, end, first, keep, deadline, counter)
    hits = result.hits
    cap = min(LINE_SHOW_BYTES, budget.max_tokens // 2)
    # Gather display groups until the byte estimate of the budget is used.
    groups: list[list[tuple[int, str, bytes, str]]] = []
    used = 0
    for hit in hits:
        if used >= budget.max_bytes:
            break
        group = []
        s, n = hit.start, hit.line
        before = []
        for _ in range(sel.before):
            if n <= first:
                break
            s = _line_before(reader, s, n)
            n -= 1
            before.append((n, s))
        for n_b, s_b in reversed(before):
            raw, clip = _show(reader, s_b, next_line_end(reader, s_b, n_b), None, cap)
            group.append((n_b, "-", raw, clip))
        raw, clip = _show(reader, hit.start, hit.end, hit.match, cap)
        group.append((hit.line, ":", raw, clip))
        s, n = hit.end, hit.line
        for _ in range(sel.after):
            if n >= last or s >= end:
                break
            n += 1
            e = next_line_end(reader, s, n)
            raw, clip = _show(reader, s, e, None, cap)
            group.append((n, "-", raw, clip))
            s = e
        used += sum(len(g[2]) + 10 for g in group)
        groups.append(group)

    def build(k: int) -> tuple[str, str | None]:
        stats = DecodeStats()
        seen: dict[int, tuple[str, bytes, str]] = {}
        for group in groups[:k]:
            for n, kind, raw, clip in group:
                if n not in seen or kind == ":":
                    seen[n] = (kind, raw, clip)
        numbers = sorted(seen)
        width = len(str(numbers[-1])) if numbers else 1
        body: list[str] = []
        prev = None
        for n in numbers:
            kind, raw, clip = seen[n]
            if prev is not None and n != prev + 1 and (sel.before or sel.after):
                body.append("--")
            text = decode_row(raw, stats)
            body.append(f"{n:>{width}}{kind} {text}{clip}" if text or clip else f"{n:>{width}}{kind}")
            prev = n
        shown = min(k, len(groups))
        scope = f" in lines {first}-{last}" if sel.lines is not None else ""
        header = (f"[{sid}] grep {shlex.quote(sel.grep)}{' -i' if sel.ignore_case else ''}"
                  f"{scope}: {result.total} matching line{'s' if result.total != 1 else ''}"
                  + (f", showing {shown}" if shown < result.total else ""))
        notes = stats.notes()
        if result.segmented:
            notes.append(f"note: lines over {SEGMENT_BYTES} bytes were searched in segments")
        hint = None
        if shown < result.total and shown > 0:
            nl = hits[shown - 1].line + 1
            extra = f" --max-matches {sel.max_matches}" if sel.max_matches != policy.grep_max_matches else ""
            end_part = str(last) if (sel.lines is not None and sel.lines[1] is not None) else ""
            hint = f"--grep {shlex.quote(sel.grep)}{flags}{extra} --lines {nl}:{end_part}"
        return assemble(header, body, notes, hint), hint

    k = fit_rows(lambda k: build(k)[0], max(1, len(groups)), budget) if groups else 0
    text, hint = build(k)
    return View(
        text=text, entry=entry, selector=selector, next_hint=hint, matches=result.total,
        shown_matches=min(k, len(groups)), truncated=hint is not None,
        line_range=(first, last),
        notes=tuple(line for line in text.splitlines() if line.startswith("note: ")),
    )
