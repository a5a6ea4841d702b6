"""Line shapes and outliers: what most lines look like, and the few that look different.

A keyword scan cannot see an anomaly that says no "error": one ``503`` among 96,000 ``200``
responses, one line of another form in a sorted listing. :class:`ShapeMiner` mines line
templates in the stream: each line is masked (timestamps, UUIDs, IPs, hex ids, paths, long
numbers and long quoted strings always; short numbers and short quoted values become *slots*)
and counted by its template. Per template it keeps, for each slot, the few values seen (a
slot with more than :data:`SLOT_VALUES` distinct values is free-form and no longer tracked),
so a ``503`` where a slot is ``200`` everywhere else is a *rare value*, reported with its
line number, like a template seen only once or twice (a *rare shape*).

Cost and memory: masking is Python regex work (about 20 MB/s), so the miner is exact for the
first :data:`EXACT_LINES` lines. After that, when one template covers nearly every line, each
new block is checked at C speed: the literal parts of that template (with its fixed slot
values filled in) are counted with ``bytes.count``, and the block's separators (kept by one
``bytes.translate``) must be the template's, in order, line after line; a block where some
line lacks a literal part or has other separators is mined line by line (at most
:data:`DEVIANT_BLOCKS` blocks). Without a dominant
template, when two to :data:`MIX_SHAPES` templates cover 99 % of the lines (an access log
interleaved with an application log), each gets one literal anchor that none of the others
has, and a block conforms when the anchors' counts add up to its line count and every
separator's count matches (counted in the translated separators, a quarter of the bytes).
Otherwise one block in :data:`SAMPLE_EVERY` is mined. :class:`Shapes` says which lines were mined exactly, so a
digest never claims more than was looked at. Templates are capped at :data:`MAX_SHAPES`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["RareLine", "Shape", "ShapeMiner", "Shapes", "mask_line"]

EXACT_LINES = 4_000
"""Lines mined one by one from the start."""
DEVIANT_BLOCKS = 8
"""Blocks (after the exact start) mined line by line because a line deviated."""
MIX_SHAPES = 4
"""Without a dominant template, at most this many templates may share the check."""
_MIX_SHARE = 0.99
SAMPLE_EVERY = 16
"""Without a dominant template, one block in this many is mined after the exact start."""
MAX_SHAPES = 2_000
"""Templates tracked; lines of further templates are counted as ``untracked``."""
SLOT_VALUES = 8
"""Distinct values a slot may take and still be tracked (a status code, a log level)."""
RARE_MAX = 2
"""A template or slot value seen at most this many times is rare (in outputs of
:data:`MIN_LINES` lines or more)."""
MIN_LINES = 200
_LINE_BYTES = 2_048
_SAMPLE_BYTES = 240
_DOMINANT_SHARE = 0.95
_UNIFORM_SHARE = 0.9
"""Rare shapes are reported only when the three commonest shapes cover this share of the
lines mined: in a mixed output (a CI log) every one-off line would be "rare"."""
_RARE_LIST = 64

_SPLIT = re.compile(rb"([\s,;:=\[\]{}()\"'<>|]+)")
"""Separators: a token between them is masked whole (never a separator inside a mask)."""
_SEPARATORS = b" \t,;:=[]{}()\"'<>|"
_NOT_SEPARATOR = bytes(c for c in range(256) if c not in _SEPARATORS + b"\n")
_DIGITS = b"0123456789"
_STRONG_MARK = b"\x01"
_WEAK_MARK = b"\x02"


def mask_line(line: bytes) -> tuple[bytes, list[bytes]]:
    """(template, slot values) of a line.

    The line is split at separators (whitespace and punctuation); a token of 1-3 digits
    becomes a slot (``\x02``, its value kept: a status code, a count); any other token with a
    digit or a ``/`` (numbers, timestamps, ids, hashes, IPs, paths, versions) becomes
    ``\x01``; other tokens (words) stay as they are.
    """
    parts = _SPLIT.split(line[:_LINE_BYTES])
    values: list[bytes] = []
    for i in range(0, len(parts), 2):
        t = parts[i]
        if not t:
            continue
        if t.isdigit():
            if len(t) <= 3:
                parts[i] = _WEAK_MARK
                values.append(t)
            else:
                parts[i] = _STRONG_MARK
        elif b"/" in t or len(t.translate(None, _DIGITS)) != len(t):
            parts[i] = _STRONG_MARK
    return b"".join(parts), values


@dataclass(slots=True)
class Shape:
    """A line template with its count, first line and per-slot value counts."""

    template: bytes
    count: int
    first_line: int
    sample: bytes
    slots: list[dict[bytes, list] | None] = field(default_factory=list)
    """Per slot: value -> [count, first line, sample, (line, sample) of its next occurrences
    while it is rare]; None once it took too many values."""
    seen: list[tuple[int, bytes]] = field(default_factory=list)
    """(line, sample) of the template's occurrences after the first, while it is rare."""


@dataclass(frozen=True, slots=True)
class RareLine:
    """A line whose shape (or slot value) is rare."""

    number: int
    text: bytes
    why: str
    """``rare shape (1x)`` or ``rare value 503 (1x; 200 in 100,000 lines)``."""


@dataclass(frozen=True, slots=True)
class Shapes:
    """What the miner found."""

    lines: int
    """Lines in the output."""
    mined: int
    """Lines mined one by one (the rest were checked against the dominant template or not
    looked at)."""
    checked: int
    """Lines checked at C speed against the dominant template's literal parts."""
    distinct: int
    """Templates found (at most :data:`MAX_SHAPES`)."""
    capped: bool
    """True when more templates existed than were tracked."""
    top: tuple[tuple[int, int, bytes], ...]
    """The dominant templates: (lines, first line, sample line), most frequent first."""
    rare: tuple[RareLine, ...]

    @property
    def exact(self) -> bool:
        """Every line was mined or checked."""
        return self.mined + self.checked >= self.lines

    @property
    def unseen(self) -> int:
        return max(0, self.lines - self.mined - self.checked)


class ShapeMiner:
    """Feed blocks of whole lines with :meth:`feed`; :meth:`result` at the end."""

    def __init__(self) -> None:
        self._shapes: dict[bytes, Shape] = {}
        self._untracked = 0
        self._mined = 0
        self._checked = 0
        self._blocks_after = 0
        self._deviant_blocks = 0
        self._anchors: list[bytes] | None = None
        self._dominant: Shape | None = None
        self._fixed: list[tuple[int, bytes]] = []
        self._profile = b""
        """The dominant template's separators in order, then a newline."""
        self._mix: list[tuple[Shape, bytes, dict[bytes, int], list[tuple[int, bytes]]]] = []
        self._mix_chars: list[bytes] = []

    def feed(self, block: bytes, first_no: int, newlines: int | None = None) -> None:
        """Mine a block (it ends at a newline, or is the output's last piece).

        ``newlines``: the block's newline count, when the caller has it (saves a pass)."""
        if self._mined < EXACT_LINES:
            lines = block.split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            room = EXACT_LINES - self._mined
            self._mine(lines[:room], first_no)
            if len(lines) <= room:
                return
            self._plan()
            rest_no = first_no + room
            tail = b"\n".join(lines[room:]) + b"\n"
            self._after(tail, rest_no)
            return
        if self._anchors is None:
            self._plan()
        self._after(block, first_no, newlines)

    def result(self, total_lines: int) -> Shapes:
        shapes = sorted(self._shapes.values(), key=lambda s: (-s.count, s.first_line))
        seen = self._mined + self._checked
        rare: list[RareLine] = []
        covered = sum(s.count for s in shapes[:3])
        if total_lines >= MIN_LINES and seen >= MIN_LINES and covered >= seen * _UNIFORM_SHARE:
            for s in shapes:
                if s.count <= RARE_MAX and len(shapes) > 1:
                    why = f"rare shape ({s.count}x)"
                    rare += [RareLine(number=n, text=t, why=why)
                             for n, t in [(s.first_line, s.sample), *s.seen]]
            for s in shapes:
                if s.count < MIN_LINES:
                    continue
                for slot in s.slots:
                    if not slot or len(slot) < 2:
                        continue
                    main, (main_n, *_) = max(slot.items(), key=lambda kv: (kv[1][0], kv[0]))
                    for value, (n, first, sample, *more) in sorted(slot.items(),
                                                                   key=lambda kv: kv[1][1]):
                        if n <= RARE_MAX and main_n >= MIN_LINES:
                            why = (f"rare value {_show(value)} ({n}x; "
                                   f"{_show(main)} in {main_n:,} lines)")
                            rare += [RareLine(number=k, text=t, why=why)
                                     for k, t in [(first, sample), *more]]
        rare.sort(key=lambda r: r.number)
        rare = rare[:_RARE_LIST]
        top = tuple((s.count, s.first_line, s.sample) for s in shapes[:3])
        return Shapes(lines=total_lines, mined=self._mined, checked=self._checked,
                      distinct=len(self._shapes), capped=self._untracked > 0, top=top,
                      rare=tuple(rare))

    # ------------------------------------------------------------------ internals

    def _mine(self, lines: list[bytes], first_no: int) -> None:
        shapes = self._shapes
        for i, line in enumerate(lines):
            if line.endswith(b"\r"):
                line = line[:-1]
            template, values = mask_line(line)
            s = shapes.get(template)
            number = first_no + i
            if s is None:
                if len(shapes) >= MAX_SHAPES:
                    self._untracked += 1
                    continue
                s = shapes[template] = Shape(template=template, count=0, first_line=number,
                                             sample=line[:_SAMPLE_BYTES],
                                             slots=[{} for _ in values])
            elif s.count < RARE_MAX:  # a rare shape is listed at each of its lines
                s.seen.append((number, line[:_SAMPLE_BYTES]))
            s.count += 1
            for k, value in enumerate(values):
                slot = s.slots[k] if k < len(s.slots) else None
                if slot is None:
                    continue
                got = slot.get(value)
                if got is not None:
                    if got[0] < RARE_MAX:  # a rare value too, at each of its lines
                        got.append((number, line[:_SAMPLE_BYTES]))
                    got[0] += 1
                elif len(slot) >= SLOT_VALUES:
                    s.slots[k] = None
                else:
                    slot[value] = [1, number, line[:_SAMPLE_BYTES]]
        self._mined += len(lines)

    def _plan(self) -> None:
        """After the exact start: find a dominant template and the literal anchors to check
        (or, without one, the few templates that together cover nearly every line)."""
        self._anchors = []
        if not self._shapes or not self._mined:
            return
        top = max(self._shapes.values(), key=lambda s: (s.count, -s.first_line))
        if top.count < self._mined * _DOMINANT_SHARE:
            self._plan_mix()
            return
        fixed = _fixed_values(top)
        ranked = sorted({p for p in _pieces(top.template, fixed) if len(p[1].strip()) >= 3},
                        key=lambda p: (not p[0], -len(p[1]), p[1]))
        self._anchors = [p[1] for p in ranked[:2]]
        # separators are never inside a masked token: a line of this template has exactly
        # the template's separators, in its order (one translate pass checks a whole block)
        self._profile = top.template.translate(None, _NOT_SEPARATOR) + b"\n"
        self._dominant = top
        self._fixed = [(i, v) for i, v in enumerate(fixed) if v is not None]

    def _plan_mix(self) -> None:
        """Two to :data:`MIX_SHAPES` templates covering :data:`_MIX_SHARE` of the lines (an
        access log interleaved with an app log): each gets one literal anchor found in none of
        the others, so a block is checked by counting anchors and separators."""
        # templates that differ only in which numbers were short slots check as one group
        groups: dict[bytes, list[Shape]] = {}
        for shape in sorted(self._shapes.values(), key=lambda s: (-s.count, s.first_line)):
            groups.setdefault(shape.template.replace(_WEAK_MARK, _STRONG_MARK), []).append(shape)
        ranked = sorted(groups.items(), key=lambda kv: (-sum(x.count for x in kv[1]),
                                                        kv[1][0].first_line))
        take: list[tuple[bytes, list[Shape]]] = []
        covered = 0
        for key, members in ranked[:MIX_SHAPES]:
            take.append((key, members))
            covered += sum(x.count for x in members)
            if covered >= self._mined * _MIX_SHARE:
                break
        if len(take) < 2 or covered < self._mined * _MIX_SHARE:
            return
        mix: list[tuple[Shape, bytes, dict[bytes, int], list[tuple[int, bytes]]]] = []
        for key, members in take:
            shape = members[0]  # lines of the group are counted as its commonest template's
            fixed = _fixed_values(shape) if len(members) == 1 else []
            others = [o for k, group in take if k != key for o in group]
            cands = sorted({p for p in _pieces(key if not fixed else shape.template, fixed)
                            if len(p[1].strip()) >= 3},
                           key=lambda p: (not p[0], -len(p[1]), p[1]))
            anchor = next((a for _, a in cands if shape.sample.count(a) == 1 and not any(
                a in o.sample or a in o.template for o in others)), None)
            if anchor is None:
                return
            seps = {bytes([c]): key.count(bytes([c])) for c in _SEPARATORS}
            mix.append((shape, anchor, seps,
                        [(i, v) for i, v in enumerate(fixed) if v is not None]))
        chars = [bytes([c]) for c in _SEPARATORS
                 if any(m[2][bytes([c])] for m in mix) or c in b" \t"][:6]
        self._mix = mix
        self._mix_chars = chars

    def _mix_counts(self, data: bytes, n: int) -> list[int] | None:
        """Lines of each mixed template in ``data`` (``n`` lines), or None when some line
        fits none of them."""
        counts = [data.count(m[1]) for m in self._mix]
        if sum(counts) != n:
            return None
        seps = data.translate(None, _NOT_SEPARATOR)  # counted there: a quarter of the bytes
        for c in self._mix_chars:
            if seps.count(c) != sum(k * m[2][c] for k, m in zip(counts, self._mix, strict=True)):
                return None
        return counts

    def _count_mix(self, counts: list[int]) -> None:
        for k, (shape, _, _, fixed) in zip(counts, self._mix, strict=True):
            shape.count += k
            for i, value in fixed:
                slot = shape.slots[i]
                if slot is not None and value in slot:
                    slot[value][0] += k
        self._checked += sum(counts)

    def _after(self, block: bytes, first_no: int, newlines: int | None = None) -> None:
        self._blocks_after += 1
        n = (block.count(b"\n") if newlines is None else newlines) + (
            0 if block.endswith(b"\n") or not block else 1)
        if self._mix:
            counts = self._mix_counts(block, n)
            if counts is not None:
                self._count_mix(counts)
                return
            if self._deviant_blocks < DEVIANT_BLOCKS:
                self._deviant_blocks += 1
                self._split_mix(block, first_no)
                return
        top = self._dominant
        if top is not None:
            if self._conforms(block, n):
                self._count_dominant(n)
                return
            if self._deviant_blocks < DEVIANT_BLOCKS:
                self._deviant_blocks += 1
                self._split_deviants(block, first_no)
                return
        if self._blocks_after % SAMPLE_EVERY == 1:
            lines = block.split(b"\n", _SAMPLE_LINES)[:_SAMPLE_LINES]
            self._mine(lines, first_no)

    def _conforms(self, data: bytes, n: int) -> bool:
        if any(data.count(a) < n for a in self._anchors):
            return False
        seps = data.translate(None, _NOT_SEPARATOR)
        if not data.endswith(b"\n"):
            seps += b"\n"
        return seps == self._profile * n

    def _count_dominant(self, n: int) -> None:
        top = self._dominant
        top.count += n
        for i, value in self._fixed:
            slot = top.slots[i]
            if slot is not None and value in slot:
                slot[value][0] += n
        self._checked += n

    def _split_deviants(self, block: bytes, first_no: int) -> None:
        """Count the conforming lines of a block; mine the others one by one."""
        lines = block.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        ok = 0
        for i, line in enumerate(lines):
            if self._conforms(line, 1):
                ok += 1
            else:
                self._mine([line], first_no + i)
        self._count_dominant(ok)


    def _split_mix(self, block: bytes, first_no: int) -> None:
        """Count the lines of a block that fit a mixed template; mine the others."""
        lines = block.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        total = [0] * len(self._mix)
        for i, line in enumerate(lines):
            counts = self._mix_counts(line, 1)
            if counts is None:
                self._mine([line], first_no + i)
            else:
                total = [a + b for a, b in zip(total, counts, strict=True)]
        self._count_mix(total)


_SAMPLE_LINES = 256


def _fixed_values(shape: Shape) -> list[bytes | None]:
    """Per slot of ``shape``: the value it takes in 99.9 % of its lines, else None."""
    fixed: list[bytes | None] = []
    for slot in shape.slots:
        value = None
        if slot:
            best, (n, *_) = max(slot.items(), key=lambda kv: (kv[1][0], kv[0]))
            if n >= shape.count * 0.999:
                value = best
        fixed.append(value)
    return fixed


def _pieces(template: bytes, fixed: list[bytes | None]) -> list[tuple[bool, bytes]]:
    """The literal runs of a template, fixed slot values filled in: (holds a value, run)."""
    pieces: list[tuple[bool, bytes]] = []
    cur = b""
    valued = False
    k = 0
    for ch in re.split(rb"([\x01\x02])", template):
        if ch == _STRONG_MARK:
            pieces.append((valued, cur))
            cur, valued = b"", False
        elif ch == _WEAK_MARK:
            value = fixed[k] if k < len(fixed) else None
            k += 1
            if value is None:
                pieces.append((valued, cur))
                cur, valued = b"", False
            else:
                cur += value
                valued = True
        else:
            cur += ch
    pieces.append((valued, cur))
    return pieces


def _show(value: bytes) -> str:
    return value.decode("utf-8", "replace").strip()
