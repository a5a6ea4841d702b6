"""Page renderers: turn a checked Selection into a bounded View (lines, bytes; grep and JSON
live in :mod:`.grep` and :mod:`.jsonview`).

A line page shows whole lines with a gutter; a line longer than the page budget is shown clipped
and the next hint switches to ``--bytes`` for the rest of it. Following ``next:`` hints from any
page visits every byte of the entry once: no gaps, no overlaps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxgate.archive.entry import Entry, View
from ctxgate.archive.views import (
    Budget,
    DecodeStats,
    clip_utf8,
    decode_row,
    fit_rows,
    inside_char,
)

if TYPE_CHECKING:
    from ctxgate.archive.chunks import ChunkReader
    from ctxgate.archive.policy import ArchivePolicy
    from ctxgate.archive.selectors import Selection

__all__ = ["assemble", "next_line_end", "render", "render_bytes", "render_lines"]


def assemble(header: str, body: list[str], notes: list[str], next_hint: str | None) -> str:
    """The view text: header, body rows, notes, then ``next: ...`` as the last line."""
    parts = [header, *body, *notes]
    if next_hint:
        parts.append(f"next: {next_hint}")
    return "\n".join(parts) + "\n"


def next_line_end(reader: ChunkReader, start: int, n: int) -> int:
    """Offset just past line ``n`` (which starts at ``start``), newline included."""
    index = reader.index
    if start >= reader.size:
        return reader.size
    i = index.chunk_at(start)
    data = reader.chunk(i)
    j = data.find(b"\n", start - index.starts[i])
    if j >= 0:
        return index.starts[i] + j + 1
    if n > index.newlines:
        return reader.size
    return reader.newline_pos(n) + 1


def render(reader: ChunkReader, entry: Entry, sel: Selection, budget: Budget,
           policy: ArchivePolicy) -> View:
    """Dispatch a selection to its renderer."""
    kind = sel.kind
    if kind == "bytes":
        assert sel.byte_range is not None
        return render_bytes(reader, entry, sel.byte_range[0], sel.byte_range[1], budget)
    if kind == "json":
        from ctxgate.archive.jsonview import render_json

        return render_json(reader, entry, sel, budget, policy)
    if kind == "grep":
        from ctxgate.archive.grep import render_grep

        return render_grep(reader, entry, sel, budget, policy)
    from ctxgate.archive.selectors import resolve_lines

    first, last = resolve_lines(sel.lines or (None, None), entry.lines)
    return render_lines(reader, entry, first, last, budget)


def _gutter(n: int, width: int, text: str) -> str:
    return f"{n:>{width}}| {text}" if text else f"{n:>{width}}|"


def render_lines(reader: ChunkReader, entry: Entry, first: int, last: int,
                 budget: Budget) -> View:
    """Lines ``first..last`` (1-based, inclusive, already clamped) within the budget."""
    sid = entry.short_id
    selector = f"--lines {first}:{last}"
    if entry.lines == 0 or first > last:
        text = (f"[{sid}] no lines selected (entry has {entry.lines} lines, "
                f"{entry.raw_bytes} bytes)\n")
        return View(text=text, entry=entry, selector=selector, line_range=None,
                    byte_range=(0, 0))
    rows: list[tuple[int, bytes, int, int, bool]] = []  # (n, shown raw, start, end, clipped)
    pos = reader.line_start(first)
    n = first
    used = 0
    while n <= last and used < budget.max_bytes:
        end = next_line_end(reader, pos, n)
        body_len = end - pos
        remaining = budget.max_bytes - used
        if body_len > remaining and rows:
            break
        take = min(body_len, max(remaining, 64))
        raw = reader.read(pos, take)
        clipped = take < body_len
        if clipped:
            raw = clip_utf8(raw, take)
        elif raw.endswith(b"\n"):
            raw = raw[:-1]
        rows.append((n, raw, pos, end, clipped))
        used += len(raw) + 8
        pos = end
        n += 1

    def build(k: int, rows=rows) -> tuple[str, str | None, DecodeStats]:
        shown = rows[:k]
        stats = DecodeStats()
        width = len(str(shown[-1][0]))
        body = [_gutter(r[0], width, decode_row(r[1], stats)) for r in shown]
        ln, raw, start, end, clipped = shown[-1]
        notes = stats.notes()
        hint = None
        if clipped:
            cut = start + len(raw)
            notes.append(f"note: line {ln} is {end - start} bytes; showing its first {len(raw)}")
            hint = f"--bytes {cut}:{end - cut}"  # the rest of this line, then lines again
        elif ln < last:
            hint = f"--lines {ln + 1}:{last}"
        header = f"[{sid}] lines {shown[0][0]}-{ln} of {entry.lines} ({entry.raw_bytes} bytes)"
        return assemble(header, body, notes, hint), hint, stats

    k = fit_rows(lambda k: build(k)[0], len(rows), budget)
    text, hint, _ = build(k)
    # A single clipped line may still be too dense for the token budget: shrink it.
    if k == 1 and not budget.fits(text):
        n0, full, start, end, _ = rows[0]
        lo, hi = 1, len(full) - 1  # longest prefix (bytes) whose view fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            rows[0] = (n0, clip_utf8(full, mid), start, end, True)
            if budget.fits(build(1)[0]):
                lo = mid
            else:
                hi = mid - 1
        rows[0] = (n0, clip_utf8(full, lo), start, end, True)
        text, hint, _ = build(1)
    shown = rows[:k]
    last_row = shown[-1]
    covered_end = last_row[2] + len(last_row[1]) if last_row[4] else last_row[3]
    return View(
        text=text, entry=entry, selector=selector, next_hint=hint,
        line_range=(shown[0][0], last_row[0]), byte_range=(shown[0][2], covered_end),
        notes=tuple(line for line in text.splitlines() if line.startswith("note: ")),
        truncated=hint is not None,
    )


def render_bytes(reader: ChunkReader, entry: Entry, offset: int, length: int,
                 budget: Budget) -> View:
    """Raw bytes ``[offset, offset+length)`` (``length`` -1: to the end), cut at UTF-8 boundaries."""
    size = entry.raw_bytes
    sid = entry.short_id
    start = max(0, size + offset) if offset < 0 else min(offset, size)
    want = size - start if length == -1 else min(length, size - start)
    selector = f"--bytes {offset}:{length}" if length != -1 else f"--bytes {offset}"
    if want <= 0:
        text = f"[{sid}] bytes {start}-{start} of {size}: nothing selected\n"
        return View(text=text, entry=entry, selector=selector, byte_range=(start, start))
    notes_extra: list[str] = []
    lead_in = min(start, 3)
    raw = reader.read(start - lead_in, min(want, budget.max_bytes) + 3 + lead_in)
    _, skip = inside_char(raw, lead_in)
    raw = raw[lead_in:]
    if skip:
        notes_extra.append(f"note: start moved forward {skip} byte(s) to a UTF-8 boundary")
    take = min(want, budget.max_bytes) - skip

    def build(take: int) -> tuple[str, str | None, int]:
        body_raw = raw[skip:skip + take]
        if take > 0 and start + skip + take < size and len(body_raw) == take:
            cut = clip_utf8(raw[skip:skip + take + 1], take)
            body_raw = cut if len(cut) <= take else body_raw
        end = start + skip + len(body_raw)
        stats = DecodeStats()
        body = decode_row(body_raw, stats, strip_cr=False)
        notes = list(notes_extra)
        if len(body_raw) < take:
            notes.append(f"note: end moved back {take - len(body_raw)} byte(s) to a UTF-8 boundary")
        notes += [n for n in stats.notes() if "CRLF" not in n]
        line = reader.line_of(start + skip)
        header = f"[{sid}] bytes {start + skip}-{end} of {size} (from line {line}):"
        hint = None
        if end < start + want:
            hint = f"--bytes {end}:{start + want - end}" if length != -1 else f"--bytes {end}"
        elif end < size and body_raw.endswith(b"\n"):
            hint = f"--lines {reader.line_of(end)}:"  # done, and at a line start: read on
        return assemble(header, [body], notes, hint), hint, end

    text, hint, end = build(take)
    lo, hi = 1, take
    if not budget.fits(text):
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if budget.fits(build(mid)[0]):
                lo = mid
            else:
                hi = mid - 1
        text, hint, end = build(lo)
    return View(
        text=text, entry=entry, selector=selector, next_hint=hint,
        byte_range=(start + skip, end), truncated=end < start + want,
        notes=tuple(line for line in text.splitlines() if line.startswith("note: ")),
    )
