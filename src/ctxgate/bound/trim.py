"""Where to cut, and how: closed-form targets from the measured overflow, code-point-safe cuts.

**Planning** works on numbers only (the serialized size of each truncatable string and of
its smallest possible form, the bare marker), never by re-serializing:

- ``level`` (default, water-filling): find the highest level ``L`` such that cutting every
  string larger than ``L`` down to ``L`` fits the allowance; strings at or under ``L`` stay
  whole. No string is emptied while another survives whole, and equal strings are cut
  equally. ``L`` is found by bisection over the sizes, ``O(n log max_size)`` arithmetic.
- ``widest`` (the seed's policy): charge the overflow to the widest string (by bytes); if
  that empties it, carry the rest to the next widest, and so on.

Atomic strings (binary data) are either kept whole or replaced by the bare marker.

**Cutting** realizes a target exactly: the kept head and/or tail are the longest runs of whole
code points whose escaped bytes fit the budget (a bisection over slices measured with the
C encoder), never splitting a surrogate pair that a ``str`` holds as two code points, then
moved back to a line boundary when one is within ``min(line_snap_bytes, budget / 200)``
bytes. The marker is sized with its largest possible ``kept`` number, so the cut string is
never larger than its target; the total slack below the bound is at most, per cut string,
the line snap window + 5 bytes (one escape) + a few digits, i.e. under 1 % when the cut
strings are large.
"""

from __future__ import annotations

from ctxgate.bound.measure import escaped_size, text_bytes

__all__ = ["cut_text", "plan_level", "plan_widest", "prefix_fit", "suffix_fit"]


def plan_level(sizes: list[int], floors: list[int], atomic: list[bool], allowance: int
               ) -> list[int] | None:
    """Water-filling targets (serialized bytes per string), or ``None`` if nothing fits.

    Args:
        sizes: serialized bytes of each string as it is.
        floors: serialized bytes of each string cut to its bare marker (kept 0).
        atomic: strings that are kept whole or reduced to the bare marker.
        allowance: bytes the strings may take together.
    """

    def target(i: int, level: int) -> int:
        size = sizes[i]
        if size <= level or size <= floors[i]:
            return size
        if atomic[i]:
            return floors[i]
        return max(level, floors[i])

    indexes = range(len(sizes))
    if sum(target(i, 0) for i in indexes) > allowance:
        return None
    lo, hi = 0, max(sizes, default=0)
    if sum(sizes) <= allowance:
        return list(sizes)
    # invariant: level lo fits, level hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if sum(target(i, mid) for i in indexes) <= allowance:
            lo = mid
        else:
            hi = mid
    targets = [target(i, lo) for i in indexes]
    # Bytes left below the allowance (integer rounding, or an atomic part dropped whole
    # just under the level) go back to the cut strings, in document order.
    spare = allowance - sum(targets)
    for i in indexes:
        if spare <= 0:
            break
        if not atomic[i] and targets[i] < sizes[i]:
            give = min(spare, sizes[i] - targets[i])
            targets[i] += give
            spare -= give
    return targets


def plan_widest(sizes: list[int], floors: list[int], atomic: list[bool], allowance: int
                ) -> list[int] | None:
    """Widest-first targets: the overflow is charged to the widest strings in turn."""
    targets = list(sizes)
    overflow = sum(sizes) - allowance
    for i in sorted(range(len(sizes)), key=lambda k: (-sizes[k], k)):
        if overflow <= 0:
            break
        room = sizes[i] - floors[i]
        if room <= 0:
            continue
        cut = room if atomic[i] else min(room, overflow)
        targets[i] = sizes[i] - cut
        overflow -= cut
    return targets if overflow <= 0 else None


def _is_pair(text: str, at: int) -> bool:
    """Whether a high+low surrogate pair straddles index ``at``."""
    return (0 < at < len(text) and "\ud800" <= text[at - 1] <= "\udbff"
            and "\udc00" <= text[at] <= "\udfff")


def prefix_fit(text: str, budget: int, snap: int = 0) -> tuple[int, int]:
    """``(j, bytes)``: the longest ``text[:j]`` whose escaped bytes fit ``budget``.

    Every code point takes at least one byte, so ``j <= budget`` and dropping ``c`` code
    points frees at least ``c`` bytes; that bounds the bisection to the slice that matters.
    """
    if budget <= 0:
        return 0, 0
    hi = min(len(text), budget)
    hi_size = escaped_size(text[:hi])
    if hi_size <= budget:
        lo, lo_size = hi, hi_size
    else:
        lo = max(0, hi - (hi_size - budget))
        lo_size = escaped_size(text[:lo])
        while hi - lo > 1:
            mid = (lo + hi) // 2
            mid_size = lo_size + escaped_size(text[lo:mid])
            if mid_size <= budget:
                lo, lo_size = mid, mid_size
            else:
                hi = mid
    if _is_pair(text, lo):
        lo -= 1
        lo_size -= 6
    if snap and lo < len(text):
        newline = text.rfind("\n", max(0, lo - snap), lo)
        if newline >= 0:
            dropped = escaped_size(text[newline + 1:lo])
            if dropped <= snap:
                lo, lo_size = newline + 1, lo_size - dropped
    return lo, lo_size


def suffix_fit(text: str, budget: int, snap: int = 0, start: int = 0) -> tuple[int, int]:
    """``(j, bytes)``: the smallest ``j >= start`` whose ``text[j:]`` fits ``budget``."""
    n = len(text)
    if budget <= 0:
        return n, 0
    # work in suffix lengths: hi is the longest candidate, lo the shortest known to fit
    hi = min(n - start, budget)
    hi_size = escaped_size(text[n - hi:])
    if hi_size <= budget:
        length, size = hi, hi_size
    else:
        lo = max(0, hi - (hi_size - budget))
        lo_size = escaped_size(text[n - lo:]) if lo else 0
        while hi - lo > 1:
            mid = (lo + hi) // 2
            mid_size = lo_size + escaped_size(text[n - mid:n - lo])
            if mid_size <= budget:
                lo, lo_size = mid, mid_size
            else:
                hi = mid
        length, size = lo, lo_size
    j = n - length
    if _is_pair(text, j):
        j += 1
        size -= 6
    if snap and j > start:
        newline = text.find("\n", j, j + snap)
        if newline >= 0:
            dropped = escaped_size(text[j:newline + 1])
            if dropped <= snap:
                j, size = newline + 1, size - dropped
    return j, size


def cut_text(text: str, budget: int, keep: str, line_snap_bytes: int) -> tuple[str, str, int]:
    """``(head, tail, kept_bytes)`` whose escaped bytes together fit ``budget``.

    ``kept_bytes`` is the UTF-8 byte count of head plus tail (the marker's ``kept``).
    """
    snap = min(line_snap_bytes, max(budget, 0) // 200)
    head = tail = ""
    if keep == "head":
        j, _ = prefix_fit(text, budget, snap)
        head = text[:j]
    elif keep == "tail":
        j, _ = suffix_fit(text, budget, snap)
        tail = text[j:]
    elif keep == "both":
        j, used = prefix_fit(text, budget // 2, snap)
        head = text[:j]
        k, _ = suffix_fit(text, budget - used, snap, start=j)
        tail = text[k:]
    return head, tail, text_bytes(head) + text_bytes(tail)
