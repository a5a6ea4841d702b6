"""Streaming scan of an output as it is written to the archive, in constant memory.

:class:`OutputScanner` sees the output chunk by chunk and keeps only what a digest needs:
the first ``keep_bytes`` bytes (head lines, JSON preview, binary sniffing, verbatim
delivery of small outputs), the last ``tail_keep_bytes`` bytes (tail lines and tail
characters), the line count, the long lines (at least ``long_line_bytes``, exact lengths),
and the lines that matter (errors, failures, tracebacks, warnings; the first and the last
``hits_per_kind`` of each kind, and counts). A 1 GiB output is digested without re-reading
it, with memory bounded by those caps.

Work per byte is a handful of C-level scans per 1 MiB block: a newline count (shared with
the failure windows and the line shapes), one Aho-Corasick pass for all error keywords on an
ASCII-lowercased copy (one ``bytes.find`` per keyword without ``ahocorasick_rs``: about 15x
slower), and one short newline probe per ``long_line_bytes / 2`` bytes (any line that long
must cover a whole probe window, so none is missed). Python runs per candidate line, never
per line. After a flood of candidates the keyword pass runs on one block in
:data:`COUNT_EVERY` (the count of the others is estimated; the digest shows it as ``~N``).
Blocks are cut from the fed chunks where they lie (:class:`~ctxgate.archive.bytequeue.ByteQueue`:
one copy per byte, none when a chunk is a block).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxgate.archive.bytequeue import ByteQueue
from ctxgate.firewall.errorlines import COUNTED_KEYWORDS as _COUNTED
from ctxgate.firewall.errorlines import KEYWORDS, SEVERITY, Hit, classify_line

if TYPE_CHECKING:  # loaded with the first block analysed (never for a small verbatim output)
    from ctxgate.firewall.blocks import KnownLine
    from ctxgate.firewall.shapes import Shapes

__all__ = ["OutputScanner", "ScanResult"]

BLOCK_BYTES = 1 << 20
"""Bytes gathered before a block is scanned."""
MAX_CARRY_BYTES = 4 << 20
"""A line without newline longer than this is scanned in pieces (its length stays exact)."""
_SNIFF_BYTES = 8192
_MAX_CANDIDATES_PER_BLOCK = 4096
_LINE_WINDOW = 65_536
"""Keyword hits further than this from the start of their line (giant lines) are not
candidates: they are data, not messages, bytes."""
COUNT_EXACT_BLOCKS = 4
"""After a flood, blocks whose keyword occurrences are all counted."""
COUNT_EVERY = 8
"""Past :data:`COUNT_EXACT_BLOCKS`, one block in this many is counted (a lower-cased copy and
an Aho-Corasick pass); the others are estimated. The number is shown as ``~N`` anyway."""
_CLASSIFY_BUDGET = 2_000
"""Candidate lines classified in all; past that (a flood) keyword occurrences are only counted
and the last lines that matter are taken from the kept tail bytes."""


_CLASS_SUMMARY = re.compile(rb"Tests run: \d+, .*?(?:--|\s-) in ([\w$.]+)")
_MAX_PASSING = 4_096
"""Passing ranges and classes kept at most (memory stays bounded on any output)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ScanResult:
    """What a scan kept of an output."""

    total_bytes: int
    lines: int
    """Lines, counting a final line without newline."""
    prefix: bytes
    """The first bytes (at most the scanner's ``keep_bytes``)."""
    suffix: bytes
    """The last bytes (at most the scanner's ``tail_keep_bytes``)."""
    longest_line: int
    """Longest line in bytes if at least ``long_line_threshold``; else a lower bound."""
    longest_line_number: int
    long_lines: int
    """Lines of at least ``long_line_threshold`` bytes."""
    long_line_threshold: int
    hits: tuple[Hit, ...]
    hit_counts: dict[str, int] = field(default_factory=dict)
    """Classified lines that matter per kind, up to line ``hits_counted_to``."""
    hits_exact: bool = True
    """False when a flood of candidates switched the scan to counting keyword occurrences."""
    hits_counted_to: int = 0
    """Last line classified (the whole output when ``hits_exact``)."""
    uncounted_occurrences: int = 0
    """Keyword occurrences after ``hits_counted_to`` (not classified; may include look-alikes;
    partly estimated when ``uncounted_estimated_bytes``)."""
    uncounted_estimated_bytes: int = 0
    """Bytes after the flood whose keyword occurrences were estimated, not counted: after
    :data:`COUNT_EXACT_BLOCKS` counted blocks, one block in :data:`COUNT_EVERY` is counted and
    the next ones get its occurrences per line."""
    binary: bool = False
    sha256: str | None = None
    """SHA-256 of the output, computed for binary output."""
    legacy_8bit: bool = False
    """Text that is not UTF-8 but reads as a legacy 8-bit encoding (Latin-1/cp1252): shown
    decoded with replacement characters and a note, not as binary hex."""
    windows: tuple[tuple[KnownLine, ...], ...] = ()
    """Lines kept around the lines that matter (see :mod:`ctxgate.firewall.blocks`)."""
    passing_ranges: tuple[tuple[int, int], ...] = ()
    """Line ranges (inclusive) of test classes that passed, from Maven Surefire's per-class
    summaries: from the line after the previous class's ``Tests run: …`` to this class's
    ``Tests run: …, Failures: 0, Errors: 0 … -- in Class``; what passing tests print there
    (``ERROR … retrying``, the stack trace of an exception they handled) did not fail them."""
    passing_classes: frozenset[str] = frozenset()
    """Classes whose Surefire summary says they passed (at most :data:`_MAX_PASSING`)."""
    shapes: Shapes | None = None
    """Line shapes with counts and the rare ones (see :mod:`ctxgate.firewall.shapes`)."""

    @property
    def unclassified_note(self) -> str:
        """What a digest says of a count that stopped classifying (``""`` when exact):
        where classifying stopped, the occurrences after it, and how many bytes of those
        were estimated rather than counted."""
        if self.hits_exact:
            return ""
        guessed = (f", {self.uncounted_estimated_bytes:,} bytes of it estimated from sampled "
                   "blocks" if self.uncounted_estimated_bytes else "")
        return (f"classified up to line {self.hits_counted_to:,}; "
                f"~{self.uncounted_occurrences:,} more keyword occurrences after it{guessed}")

    @property
    def complete(self) -> bool:
        """Whether :attr:`prefix` is the whole output."""
        return len(self.prefix) == self.total_bytes

    @property
    def hits_total(self) -> int:
        return sum(self.hit_counts.values())


class OutputScanner:
    """Feed chunks with :meth:`feed`, then :meth:`close` for the :class:`ScanResult`.

    Args:
        keep_bytes: bytes kept from the start.
        tail_keep_bytes: bytes kept from the end.
        long_line_bytes: lines at least this long are measured exactly and counted.
        line_max_bytes: bytes kept of each line that matters.
        hits_per_kind: lines that matter kept per kind (the rest are counted).
    """

    def __init__(self, *, keep_bytes: int = 262_144, tail_keep_bytes: int = 65_536,
                 long_line_bytes: int = 4_096, line_max_bytes: int = 240,
                 hits_per_kind: int = 64):
        self.keep_bytes = max(keep_bytes, _SNIFF_BYTES)
        self.tail_keep_bytes = tail_keep_bytes
        self.long_line_bytes = max(64, long_line_bytes)
        self.line_max_bytes = line_max_bytes
        self.hits_per_kind = hits_per_kind
        self._prefix = bytearray()
        self._suffix = b""
        self._queue = ByteQueue()  # fed and not yet scanned (held as fed, no copy)
        self._total = 0
        self._newlines = 0
        self._offset = 0  # absolute offset of the first held byte
        self._grid = BLOCK_BYTES  # the next block ends at the last newline before this
        self._line_start = 0  # absolute offset where the current line starts
        self._longest = 0
        self._longest_no = 0
        self._long_lines = 0
        self._hits: list[Hit] = []
        self._last: dict[str, deque[Hit]] = {}
        self._kept = Counter()
        self._counts = Counter()
        self._exact = True
        self._counting_only = False
        self._classified = 0
        self._counting_from = 0
        self._uncounted = 0
        self._flood_blocks = 0
        self._rate = 0.0  # occurrences per line in the last block counted after a flood
        self._estimated = 0.0
        self._estimated_bytes = 0
        self._binary: bool | None = None
        self._legacy = False
        self._sha = None
        self._closed: ScanResult | None = None
        self._windows: Any = None
        self._collecting = False
        self._shapes: Any = None
        self._passing: list[tuple[int, int]] = []
        self._passing_classes: set[str] = set()
        self._class_end = 0  # the line of the last Surefire class summary seen

    def feed(self, data: bytes) -> None:
        """Add a chunk (any size, any boundary)."""
        if not data:
            return
        before = self._total
        self._total += len(data)
        if len(self._prefix) < self.keep_bytes:
            self._prefix += data[: self.keep_bytes - len(self._prefix)]
        if len(data) >= self.tail_keep_bytes:
            self._suffix = bytes(data[-self.tail_keep_bytes:])
        else:
            self._suffix = (self._suffix + data)[-self.tail_keep_bytes:]
        if self._binary is None and self._total >= _SNIFF_BYTES:
            self._sniff(before)
        if self._sha is not None:
            self._sha.update(data)
        if type(data) is not bytes:
            data = bytes(data)  # held by reference: never a buffer the caller reuses
        self._queue.append(data)
        while self._offset + self._queue.held >= self._grid:
            cut = self._cut()
            if not cut:
                break  # wait for the end of a line that crosses the grid point
            self._scan(self._queue.take(cut))
            # the next grid point: one block on, or past a line that ran over this one
            self._grid = max(self._grid + BLOCK_BYTES,
                             (self._offset // BLOCK_BYTES + 1) * BLOCK_BYTES)

    def _cut(self) -> int:
        """Length of the next block of the held bytes, or 0 to wait for more.

        Blocks end at the last newline before each multiple of :data:`BLOCK_BYTES` of the
        output (or, for a line crossing it, at that line's end, or :data:`MAX_CARRY_BYTES`
        on), so where they fall depends on the bytes alone, never on how they were fed:
        the same output gives the same scan (and digest) whatever its pipe delivered.
        The held bytes are searched where they lie (no copy).
        """
        at = self._grid - self._offset  # the grid point, relative to the held bytes
        spans = self._queue.located()
        for base, obj, lo, hi in reversed(spans):  # the last newline before the grid point
            if base >= at:
                continue
            nl = obj.rfind(b"\n", lo, min(hi, lo + at - base))
            if nl != -1:
                return base + nl - lo + 1
        for base, obj, lo, hi in spans:  # none: the end of the line crossing it
            if base + hi - lo <= at:
                continue
            if base >= MAX_CARRY_BYTES:
                break
            nl = obj.find(b"\n", lo + max(0, at - base), min(hi, lo + MAX_CARRY_BYTES - base))
            if nl != -1:
                return base + nl - lo + 1
        return MAX_CARRY_BYTES if self._queue.held >= MAX_CARRY_BYTES else 0

    def skip(self, n: int) -> None:
        """Count ``n`` bytes that this scanner never saw (a scanner process died with them):
        byte counts stay true; line numbers after the gap miss its newlines."""
        if self._queue.held:
            self._scan(self._queue.take(self._queue.held))
        self._total += n
        self._offset += n
        self._line_start = self._offset
        self._grid = (self._offset // BLOCK_BYTES + 1) * BLOCK_BYTES

    @property
    def total_bytes(self) -> int:
        """Bytes fed so far."""
        return self._total

    @property
    def holds_all(self) -> bool:
        """Whether the kept prefix is the whole output so far."""
        return len(self._prefix) == self._total

    def close(self, *, analyse: bool = True) -> ScanResult:
        """Scan what is left and return the result (idempotent).

        ``analyse=False`` (the output is shown whole, not digested) only counts what is left:
        no keyword scan, windows or shapes for it, so a small output never loads them.
        """
        if self._closed is not None:
            return self._closed
        if self._binary is None:
            self._sniff(self._total)
        if self._queue.held:
            self._scan(self._queue.take(self._queue.held), analyse=analyse)
        # the last line has no newline: close it
        if self._line_start < self._total:
            self._line_done(self._total - self._line_start, self._newlines + 1)
        lines = self._newlines + (1 if self._total and self._line_start < self._total else 0)
        if self._counting_only and not self._binary:
            self._last_from_suffix(lines)
        longest, longest_no = self._longest, self._longest_no
        if self._closed is None:
            self._closed = ScanResult(
                total_bytes=self._total, lines=lines, prefix=bytes(self._prefix),
                suffix=self._suffix, longest_line=longest, longest_line_number=longest_no,
                long_lines=self._long_lines, long_line_threshold=self.long_line_bytes,
                hits=tuple(sorted(self._hits + [h for q in self._last.values() for h in q],
                                  key=lambda h: h.number)),
                hit_counts=dict(sorted(self._counts.items())), hits_exact=self._exact,
                hits_counted_to=self._counting_from - 1 if not self._exact else lines,
                uncounted_occurrences=self._uncounted + round(self._estimated),
                uncounted_estimated_bytes=self._estimated_bytes,
                binary=bool(self._binary), legacy_8bit=self._legacy,
                sha256=self._sha.hexdigest() if self._sha is not None else None,
                windows=() if self._binary or self._windows is None else tuple(
                    tuple(w) for w in self._windows.windows()),
                shapes=None if self._binary or self._shapes is None
                else self._shapes.result(lines),
                passing_ranges=tuple(self._passing),
                passing_classes=frozenset(self._passing_classes),
            )
        return self._closed

    # ------------------------------------------------------------------ internals

    def _sniff(self, seen: int) -> None:
        """Decide text or binary from the first 8 KiB; ``seen`` bytes came before the
        current chunk (all of them are in the prefix, which is at least 8 KiB)."""
        head = bytes(self._prefix[:_SNIFF_BYTES])
        self._binary = _looks_binary(head)
        if self._binary and _legacy_8bit(head):
            self._binary, self._legacy = False, True
        if self._binary:
            self._sha = hashlib.sha256(bytes(self._prefix[:seen]))

    def _scan(self, block: bytes, analyse: bool = True) -> None:
        base = self._offset
        first_no = self._newlines + 1
        nl_count = block.count(b"\n")
        self._long_line_probe(block, base, first_no)
        if not self._binary and analyse:
            if self._windows is None:
                from ctxgate.firewall.blocks import WindowCollector
                from ctxgate.firewall.shapes import ShapeMiner

                self._windows, self._shapes = WindowCollector(), ShapeMiner()
            self._windows.begin(block, first_no)
            self._collecting = True
            self._keyword_scan(block, first_no, newlines=nl_count)
            self._collecting = False
            self._windows.end(newlines=nl_count)
            self._shapes.feed(block, first_no, newlines=nl_count)
        self._newlines += nl_count
        last_nl = block.rfind(b"\n")
        if last_nl != -1:
            self._line_start = base + last_nl + 1
        self._offset = base + len(block)

    def _line_done(self, length: int, number: int) -> None:
        if length >= self.long_line_bytes:
            self._long_lines += 1
        if length > self._longest:
            self._longest, self._longest_no = length, number

    def _long_line_probe(self, block: bytes, base: int, first_no: int) -> None:
        half = self.long_line_bytes // 2
        first_nl = block.find(b"\n")
        if first_nl != -1:  # the line running in from earlier blocks ends here
            self._line_done(base + first_nl - self._line_start, first_no)
        n = len(block)
        m = 0 if first_nl == -1 else first_nl + 1
        while m + half <= n:
            if block.find(b"\n", m, m + half) != -1:
                m += half
                continue
            start = block.rfind(b"\n", 0, m) + 1
            end = block.find(b"\n", m + half)
            if end == -1:
                return  # runs past the block: measured when its newline arrives
            number = first_no + block.count(b"\n", 0, start)
            self._line_done(end - start, number)
            m = end + 1

    def _keyword_scan(self, block: bytes, first_no: int, newlines: int | None = None, *,
                      budget: bool = True) -> None:
        """Classify the candidate lines of ``block``; count keyword occurrences after a flood
        (``newlines``: the block's newline count, for the estimate; ``budget=False``: the kept
        tail after a flood, whose lines are all classified)."""
        if self._counting_only:
            self._flood_blocks += 1
            lines = max(1, block.count(b"\n") if newlines is None else newlines)
            if self._flood_blocks <= COUNT_EXACT_BLOCKS or self._flood_blocks % COUNT_EVERY == 0:
                before = self._uncounted
                self._count_occurrences(block.lower(), 0)
                self._rate = (self._uncounted - before) / lines
            else:  # estimated at the last counted block's rate per line (see COUNT_EVERY)
                self._estimated += self._rate * lines
                self._estimated_bytes += len(block)
            return
        lowered = block.lower()  # ASCII only, as the keywords are (2x faster than translate)
        starts = _candidate_starts(block, lowered)
        if not starts:
            return
        ordered = sorted(starts)
        # classify no more than the budget has room for (one over, to see it is spent)
        cap = _MAX_CANDIDATES_PER_BLOCK if not budget else min(
            _MAX_CANDIDATES_PER_BLOCK, max(1, _CLASSIFY_BUDGET + 1 - self._classified))
        flood = len(ordered) > cap
        if flood:
            # a flood of candidates: classify the first ones, count the rest from here on
            ordered = ordered[:cap]
        number = first_no
        prev = 0
        end = 0
        for start in ordered:
            number += block.count(b"\n", prev, start)
            prev = start
            end = block.find(b"\n", start)
            end = len(block) if end == -1 else end
            raw = block[start:end]
            kind = classify_line(raw[:4096].decode("utf-8", "replace"))
            if b"Tests run:" in raw[:80]:
                self._class_summary(raw, number, passed=kind is None)
            if kind is None:
                continue
            self._counts[kind] += 1
            cut = raw[: self.line_max_bytes].decode("utf-8", "ignore")
            found = Hit(number=number, text=cut.rstrip("\r"), length=len(raw), kind=kind)
            if self._collecting:
                self._windows.hit(start, number, SEVERITY[kind])
            if self._kept[kind] < self.hits_per_kind:
                self._kept[kind] += 1
                self._hits.append(found)
            else:  # keep the last ones too: a CI log's decisive error is often near the end
                self._last.setdefault(kind, deque(maxlen=self.hits_per_kind)).append(found)
        self._classified += len(ordered)
        if flood or self._classified > _CLASSIFY_BUDGET:
            self._counting_only = True
            self._counting_from = number + 1
            self._count_occurrences(lowered, end + 1)

    def _class_summary(self, raw: bytes, number: int, *, passed: bool) -> None:
        """Note one Surefire ``Tests run: …`` line: a class's summary (``-- in Class``, 2.x
        ``- in Class``) ends its output; a passing one makes that output a passing range."""
        m = _CLASS_SUMMARY.search(raw[:1024])
        if m is None:
            return  # the totals after `Results:`, not one class
        if passed and len(self._passing) < _MAX_PASSING:
            start = self._class_end + 1 if self._class_end else number
            if self._passing and start <= self._passing[-1][1] + 1:
                self._passing[-1] = (self._passing[-1][0], number)
            else:
                self._passing.append((start, number))
            self._passing_classes.add(m.group(1).decode("utf-8", "replace"))
        self._class_end = number

    def _last_from_suffix(self, lines: int) -> None:
        """After a flood, take the last lines that matter from the kept tail bytes."""
        suffix = self._suffix
        if len(suffix) < self._total:  # drop the partial first line
            cut = suffix.find(b"\n")
            suffix = suffix[cut + 1:] if cut != -1 else b""
        pos = len(suffix) - 1
        for _ in range(_MAX_CANDIDATES_PER_BLOCK // 2):  # the last ~2,000 lines at most
            pos = suffix.rfind(b"\n", 0, pos)
            if pos <= 0:
                break
        if pos > 0:
            suffix = suffix[pos + 1:]
        if not suffix:
            return
        body = suffix[:-1] if suffix.endswith(b"\n") else suffix
        first_no = lines - body.count(b"\n")
        saved = (self._hits, self._kept, self._counts, self._classified, self._uncounted,
                 self._counting_from, self._exact)
        self._hits, self._kept, self._counts = [], Counter(), Counter()
        self._counting_only, self._classified = False, 0
        self._keyword_scan(suffix, first_no, budget=False)
        tail_hits = [h for h in self._hits if h.number >= saved[5]]
        (self._hits, self._kept, self._counts, self._classified, self._uncounted,
         self._counting_from, self._exact) = saved
        self._counting_only = True
        for found in tail_hits:
            self._last.setdefault(found.kind, deque(maxlen=self.hits_per_kind)).append(found)

    def _count_occurrences(self, lowered: bytes, start: int) -> None:
        self._exact = False
        counter = _counted_finder()
        if counter is not None:  # one pass for all (the same sum: see _counted_finder)
            self._uncounted += len(counter.find_matches_as_indexes(
                memoryview(lowered)[start:] if start else lowered))
            return
        for kw in _COUNTED:
            self._uncounted += lowered.count(kw, start)


def _candidate_starts(block: bytes, lowered: bytes) -> set[int]:
    """Start offsets of the lines holding a keyword (at most one more than the block cap).

    A line counts once, from its leftmost keyword occurrence; a message line is short, so
    the walk back to its start never goes further than ``_LINE_WINDOW`` bytes.
    """
    starts: set[int] = set()
    finder = _keyword_finder()
    if finder is not None:
        # One pass over the block for all keywords (Aho-Corasick, GB/s); leftmost-first
        # matches in order, so the first match on each line is its leftmost occurrence.
        line_end = -1
        for _kw, pos, _end in finder.find_matches_as_indexes(lowered):
            if pos <= line_end:
                continue
            nl = block.rfind(b"\n", max(0, pos - _LINE_WINDOW), pos)
            if nl != -1 or pos <= _LINE_WINDOW:
                starts.add(nl + 1)
                if len(starts) > _MAX_CANDIDATES_PER_BLOCK:
                    break
            line_end = block.find(b"\n", pos)
            if line_end == -1:
                break
        return starts
    for kw in KEYWORDS:
        pos = lowered.find(kw)
        while pos != -1 and len(starts) <= _MAX_CANDIDATES_PER_BLOCK:
            nl = block.rfind(b"\n", max(0, pos - _LINE_WINDOW), pos)
            if nl != -1 or pos <= _LINE_WINDOW:
                starts.add(nl + 1)
            nxt = block.find(b"\n", pos)
            if nxt == -1:
                break
            pos = lowered.find(kw, nxt + 1)
    return starts


_FINDER: list = []


def _keyword_finder():
    """A one-pass matcher of all keywords (``ahocorasick_rs``), or None without it."""
    if not _FINDER:
        try:
            import ahocorasick_rs

            _FINDER.append(ahocorasick_rs.BytesAhoCorasick(
                list(KEYWORDS), matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST))
        except ImportError:
            _FINDER.append(None)
    return _FINDER[0]


def _counted_finder():
    """One non-overlapping matcher of the counted keywords, or None.

    Its match count equals the sum of ``bytes.count`` over the keywords only when no
    occurrence of one keyword can overlap another (or itself); that is checked here, and any
    overlap (or a missing ``ahocorasick_rs``) keeps the one-count-per-keyword loop.
    """
    if not _COUNTER:
        found = None
        kws = tuple(_COUNTED)
        clash = any(a != b and (a in b) for a in kws for b in kws) or any(
            a[-k:] == b[:k] for a in kws for b in kws for k in range(1, min(len(a), len(b))))
        if not clash:
            try:
                import ahocorasick_rs

                found = ahocorasick_rs.BytesAhoCorasick(
                    list(kws), matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST)
            except ImportError:
                pass
        _COUNTER.append(found)
    return _COUNTER[0]


_COUNTER: list = []


def _looks_binary(head: bytes) -> bool:
    """NUL bytes, or much invalid UTF-8 / control bytes, in the first 8 KiB."""
    if not head:
        return False
    if b"\x00" in head:
        return True
    text = head.decode("utf-8", "replace")
    bad = text.count("\ufffd")
    if len(head) == 8192:  # a multi-byte character may be cut at the end
        bad = max(0, bad - 3)
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\n\r\t\f\b\x1b")
    return (bad + controls) > max(8, len(text) // 20)


def _legacy_8bit(head: bytes) -> bool:
    """Latin-1/cp1252 text: no NUL, every byte a cp1252 character, few control characters,
    and mostly ASCII (a log in a Western European language, not compressed data)."""
    if b"\x00" in head:
        return False
    try:
        text = head.decode("cp1252")
    except UnicodeDecodeError:
        return False
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\n\r\t\f\b\x1b")
    high = sum(1 for b in head if b >= 0x80)
    return controls <= max(8, len(text) // 100) and high <= len(head) // 4
