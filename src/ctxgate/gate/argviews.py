"""Budgeted argument views: what of a call's arguments the decision model is shown.

Arguments are sent **whole** when they fit the character budget (serialized, JSON escapes
counted) and the backend's state limits. Otherwise every string longer than a common cap ``c``
is shortened to its head and tail around ``\\n[truncated N chars]\\n``, with ``c`` as large as
fits (binary search, at least :data:`MIN_KEPT_CHARS`), and each cut is listed in
``tool_call.omitted`` as an RFC 6901 pointer with the characters cut. A cut is made only where
it makes the arguments smaller — under the *state* rule (the ``omitted`` entry counted, chars
and bytes) for the backend's limits, else under the *arguments* rule for the budget. Strings
under a full-view pointer are never shortened; a call whose full view does not fit, or that
does not fit even at the floor, is refused (:class:`FullViewUnfit`, :class:`TooLarge`).

Sizes at a cap are computed from per-string escaped lengths measured once, not by
re-serializing the arguments at every step of the search: the serialized size changes only
by what each cut string loses. The whole size itself is the serialized skeleton (long strings
emptied) plus each long string's escaped length, so no string is escaped twice; UTF-8 bytes
are counted only when a backend limits bytes (or tokens).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, Literal

from ctxgate.gate.backends.base import StateLimits, serialize_state
from ctxgate.gate.pointers import escape_segment, is_full_view

__all__ = [
    "DEFAULT_ARG_BUDGET_CHARS",
    "MIN_KEPT_CHARS",
    "ArgumentView",
    "FullViewUnfit",
    "Omission",
    "TooLarge",
    "build_state",
    "cut_view",
    "fit_arguments",
    "truncate_middle",
]

DEFAULT_ARG_BUDGET_CHARS = 48_000
"""Default budget of the serialized arguments, code points (JSON escapes counted)."""
MIN_KEPT_CHARS = 400
"""The least of a long string a shortened call keeps (head and tail), code points."""

Rule = Literal["state", "arguments"]
_OMITTED_OPENING = len(',"omitted":[]')


@dataclass(frozen=True, kw_only=True)
class Omission:
    """One shortened string."""

    argument: str
    """RFC 6901 pointer into the arguments."""
    chars: int
    """Code points cut from it."""


@dataclass(frozen=True, kw_only=True)
class ArgumentView:
    """The arguments as the gate shows them, and what was cut."""

    arguments: Any
    omitted: tuple[Omission, ...] = ()
    args_chars: int = 0
    """Code points of the serialized arguments shown."""
    state_chars: int = 0
    """Code points of the serialized state (:func:`build_state`)."""
    state_bytes: int = 0
    """UTF-8 bytes of the serialized state."""


@dataclass(frozen=True, kw_only=True)
class FullViewUnfit:
    """A full-view argument is what does not fit."""

    argument: str
    chars: int
    """Code points of that string."""


@dataclass(frozen=True, kw_only=True)
class TooLarge:
    """Nothing more may be cut and the call still does not fit."""

    chars: int
    """Code points of the serialized arguments at their shortest allowed view."""


def truncate_middle(text: str, max_chars: int) -> str:
    """``text`` whole if it has at most ``max_chars`` code points, else head and tail.

    Keeps ``max_chars // 2`` code points from each end around ``\\n[truncated N chars]\\n``,
    where N is exactly the number removed (so the result is a little over ``max_chars``).
    """
    n = len(text)
    if n <= max_chars:
        return text
    keep = max_chars // 2
    return f"{text[:keep]}\n[truncated {n - 2 * keep} chars]\n{text[n - keep:] if keep else ''}"


def build_state(user_request: str, tool: str, view: ArgumentView | Any,
                omitted: Sequence[Omission] = ()) -> dict[str, Any]:
    """The state the decision model sees: ``{"user_request", "tool_call": {tool, arguments, omitted?}}``."""
    if isinstance(view, ArgumentView):
        arguments, omitted = view.arguments, view.omitted
    else:
        arguments = view
    call: dict[str, Any] = {"tool": tool, "arguments": arguments}
    if omitted:
        call["omitted"] = [{"argument": o.argument, "chars": o.chars} for o in omitted]
    return {"user_request": user_request, "tool_call": call}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _size(text: str) -> tuple[int, int]:
    if text.isascii():
        return len(text), len(text)
    return len(text), len(text.encode("utf-8", "surrogatepass"))


_BLOCK = 2_048
"""Code points per block of the escaped-length prefix sums of a long string."""


def _esc_size(text: str) -> tuple[int, int]:
    """Escaped ``(chars, bytes)`` of ``text`` inside a JSON string, quotes excluded."""
    esc = encode_basestring(text)
    if text.isascii():
        return len(esc) - 2, len(esc) - 2
    return len(esc) - 2, len(esc.encode("utf-8", "surrogatepass")) - 2


class _Candidate:
    """A string longer than the floor: where it is and what it weighs serialized.

    The escaped size of a head or tail is needed at every step of the search. For a string
    without escapes or non-ASCII it is its length; otherwise it comes from prefix sums over
    blocks of :data:`_BLOCK` code points (escaping is per character, so block sums are exact),
    built lazily from each end as far as the search reaches, plus one partial block.
    """

    __slots__ = ("path", "pointer", "full", "text", "n", "esc_c", "_esc_b", "simple", "ascii",
                 "entry_base_c", "entry_base_b", "_head", "_tail")

    def __init__(self, path: tuple, pointer: str, full: bool, text: str):
        self.path, self.pointer, self.full, self.text = path, pointer, full, text
        self.n = len(text)
        self.ascii = text.isascii()
        self.esc_c = len(encode_basestring(text))
        self._esc_b: int | None = self.esc_c if self.ascii else None
        self.simple = self.ascii and self.esc_c == self.n + 2
        # {"argument":"<pointer>","chars":} without the digits of N
        entry = _dumps({"argument": pointer, "chars": 0})
        c, b = _size(entry)
        self.entry_base_c, self.entry_base_b = c - 1, b - 1
        self._head: list[tuple[int, int]] = []
        self._tail: list[tuple[int, int]] = []

    @property
    def esc_b(self) -> int:
        """UTF-8 bytes of the serialized string (computed on first use)."""
        if self._esc_b is None:
            # escapes are ASCII for ASCII: the extra characters they add are extra bytes too
            raw = len(self.text.encode("utf-8", "surrogatepass"))
            self._esc_b = raw + self.esc_c - self.n
        return self._esc_b

    def _end(self, k: int, tail: bool) -> tuple[int, int]:
        """Escaped ``(chars, bytes)`` of the first (or last) ``k`` code points."""
        blocks, text, n = (self._tail if tail else self._head), self.text, self.n
        full = k // _BLOCK
        while len(blocks) < full:
            j = len(blocks)
            seg = text[n - (j + 1) * _BLOCK:n - j * _BLOCK] if tail else \
                text[j * _BLOCK:(j + 1) * _BLOCK]
            c, b = _esc_size(seg)
            pc, pb = blocks[-1] if blocks else (0, 0)
            blocks.append((pc + c, pb + b))
        bc, bb = blocks[full - 1] if full else (0, 0)
        rest = text[n - k:n - full * _BLOCK] if tail else text[full * _BLOCK:k]
        c, b = _esc_size(rest)
        return bc + c, bb + b

    def cut_size(self, cap: int) -> tuple[int, int, int]:
        """``(chars cut, escaped chars, escaped bytes)`` of this string cut at ``cap``."""
        keep = cap // 2
        cut = self.n - 2 * keep
        marker = len(str(cut)) + 22  # \n[truncated N chars]\n, escaped (a newline is two)
        if self.simple:
            body_c = body_b = 2 * keep
        else:
            hc, hb = self._end(keep, False)
            tc, tb = self._end(keep, True)
            body_c, body_b = hc + tc, hb + tb
        return cut, body_c + marker + 2, body_b + marker + 2


def _collect(args: Any, full_views: Sequence[str], floor: int) -> list[_Candidate]:
    """Every string longer than ``floor`` code points, in serialization order."""
    out: list[_Candidate] = []
    stack: list[tuple[Any, tuple, str, bool]] = [(args, (), "", False)]
    while stack:
        node, path, pointer, inherited = stack.pop()
        full = inherited or is_full_view(pointer, full_views)
        if isinstance(node, str):
            if len(node) > floor:
                out.append(_Candidate(path, pointer, full, node))
        elif isinstance(node, dict):
            items = list(node.items())
            for key, value in reversed(items):
                stack.append((value, (*path, key), f"{pointer}/{escape_segment(str(key))}", full))
        elif isinstance(node, (list, tuple)):
            for i in range(len(node) - 1, -1, -1):
                stack.append((node[i], (*path, i), f"{pointer}/{i}", full))
    return out


def _materialize(args: Any, cuts: Sequence[tuple[tuple, str]]) -> Any:
    """A copy of ``args`` with the strings at ``cuts`` replaced; untouched parts are shared."""
    if not cuts:
        return args
    if cuts[0][0] == ():
        return cuts[0][1]
    root = dict(args) if isinstance(args, dict) else list(args)
    copied: dict[tuple, Any] = {(): root}
    for path, new in cuts:
        node = root
        for depth in range(len(path) - 1):
            prefix = path[: depth + 1]
            child = copied.get(prefix)
            if child is None:
                original = node[path[depth]]
                child = dict(original) if isinstance(original, dict) else list(original)
                node[path[depth]] = child
                copied[prefix] = child
            node = child
        node[path[-1]] = new
    return root


class _Fitter:
    """The search of :func:`fit_arguments` over one call."""

    def __init__(self, args: Any, full_views: Sequence[str], user_request: str, tool: str,
                 budget_chars: int, limits: StateLimits):
        self.args = args
        self.budget = budget_chars
        self.limits = limits
        self.cands = _collect(args, full_views, MIN_KEPT_CHARS)
        # The arguments' size without serializing the long strings twice: the skeleton (every
        # long string emptied) is serialized, the long strings' escaped lengths are added.
        skeleton = _dumps(_materialize(args, [(c.path, "") for c in self.cands]))
        self.skeleton = skeleton
        self.args_c = len(skeleton) + sum(c.esc_c - 2 for c in self.cands)
        self._args_b: int | None = None
        self.track_bytes = limits.max_bytes is not None
        wrapper_c, wrapper_b = _size(serialize_state(build_state(user_request, tool, 0)))
        self.wrap_c, self.wrap_b = wrapper_c - 1, wrapper_b - 1

    @property
    def args_b(self) -> int:
        """UTF-8 bytes of the serialized arguments (encoded on first use)."""
        if self._args_b is None:
            self._args_b = _size(self.skeleton)[1] + sum(c.esc_b - 2 for c in self.cands)
        return self._args_b

    def fits_sizes(self, args_c: int, state_c: int, state_b: int) -> bool:
        return args_c <= self.budget and self.limits.allows(state_c, state_b)

    def whole_fits(self) -> bool:
        if self.args_c > self.budget or not self.limits.allows(self.wrap_c + self.args_c, 0):
            return False
        return self.fits_sizes(self.args_c, self.wrap_c + self.args_c, self.wrap_b + self.args_b)

    def _cuttable(self, honor_full: bool) -> list[_Candidate]:
        return [c for c in self.cands if not (honor_full and c.full)]

    def lower_bound_fits(self, cap: int, honor_full: bool) -> bool:
        """False when even the most a cut at ``cap`` could save is not enough (cheap).

        Characters first: bytes are at least characters, so a state over the byte limit in
        characters fails without encoding anything.
        """
        keep = cap // 2
        cut = [c for c in self._cuttable(honor_full) if c.n > cap]
        least = [2 * keep + len(str(c.n - 2 * keep)) + 24 for c in cut]
        args_c = self.args_c - sum(max(0, c.esc_c - lo) for c, lo in zip(cut, least, strict=True))
        state_c = self.wrap_c + args_c
        if not self.fits_sizes(args_c, state_c, 0):
            return False
        if not self.track_bytes:
            return True
        if not self.limits.allows(state_c, state_c):
            return False
        save_b = sum(max(0, c.esc_b - lo) for c, lo in zip(cut, least, strict=True))
        return self.limits.allows(state_c, self.wrap_b + self.args_b - save_b)

    def cut(self, cap: int, rule: Rule, honor_full: bool = True, *, need_bytes: bool = True):
        """``(cuts, omitted, args_c, state_c, state_b)`` at ``cap`` under ``rule``."""
        track = self.track_bytes and need_bytes
        args_c, args_b = self.args_c, (self.args_b if track else 0)
        om_c = om_b = 0
        cuts: list[tuple[_Candidate, int]] = []
        omitted: list[Omission] = []
        for c in self._cuttable(honor_full):
            if c.n <= cap:
                continue
            n_cut, after_c, after_b = c.cut_size(cap)
            extra_c = extra_b = 0
            if rule == "state":
                digits = len(str(n_cut))
                opening = _OMITTED_OPENING if not omitted else 1
                extra_c = c.entry_base_c + digits + opening
                extra_b = c.entry_base_b + digits + opening
            if after_c + extra_c >= c.esc_c:
                continue
            if (track or extra_b != extra_c) and after_b + extra_b > c.esc_b:
                continue
            cuts.append((c, cap))
            omitted.append(Omission(argument=c.pointer, chars=n_cut))
            args_c += after_c - c.esc_c
            if track:
                args_b += after_b - c.esc_b
            digits = len(str(n_cut))
            opening = _OMITTED_OPENING if len(omitted) == 1 else 1
            om_c += c.entry_base_c + digits + opening
            om_b += c.entry_base_b + digits + opening
        return cuts, omitted, args_c, self.wrap_c + args_c + om_c, self.wrap_b + args_b + om_b

    def at(self, cap: int, honor_full: bool = True):
        """The view at ``cap`` that fits (state rule first, keeping more text), or None."""
        if not self.lower_bound_fits(cap, honor_full):
            return None
        lean = self.cut(cap, "state", honor_full)
        if self.fits_sizes(*lean[2:]):
            return lean
        every = self.cut(cap, "arguments", honor_full)
        if len(every[1]) != len(lean[1]) and self.fits_sizes(*every[2:]):
            return every
        return None

    def view(self, found) -> ArgumentView:
        cuts, omitted, args_c, state_c, state_b = found
        arguments = _materialize(
            self.args, [(c.path, truncate_middle(c.text, cap)) for c, cap in cuts]
        )
        if not self.track_bytes:  # not tracked in the search: measure the (small) result
            omitted_b = state_b - self.wrap_b  # args bytes were left at 0
            state_b = self.wrap_b + _size(_dumps(arguments))[1] + omitted_b
        return ArgumentView(arguments=arguments, omitted=tuple(omitted), args_chars=args_c,
                            state_chars=state_c, state_bytes=state_b)


def fit_arguments(
    args: Any,
    *,
    user_request: str = "",
    tool: str = "",
    full_views: Sequence[str] = (),
    budget_chars: int = DEFAULT_ARG_BUDGET_CHARS,
    limits: StateLimits | None = None,
) -> ArgumentView | FullViewUnfit | TooLarge:
    """The largest view of ``args`` that fits, or why none does.

    Args:
        args: the call's JSON arguments (never modified).
        user_request: the request text that goes into the state (counts against ``limits``).
        tool: the tool name (counts against ``limits``).
        full_views: JSON pointers never shortened (``""`` for all).
        budget_chars: most code points of the serialized arguments.
        limits: the backend's state limits (chars, bytes); ``None`` for none.

    Raises:
        ValueError: ``args`` is not JSON-serializable (NaN, infinity, foreign objects).
    """
    fitter = _Fitter(args, full_views, user_request, tool, budget_chars, limits or StateLimits())
    if fitter.whole_fits():
        return ArgumentView(arguments=args, args_chars=fitter.args_c,
                            state_chars=fitter.wrap_c + fitter.args_c,
                            state_bytes=fitter.wrap_b + fitter.args_b)
    cuttable = fitter._cuttable(True)
    longest = max((c.n for c in cuttable), default=0)
    if longest > MIN_KEPT_CHARS:
        best = fitter.at(MIN_KEPT_CHARS)
        if best is not None:
            lo, hi = MIN_KEPT_CHARS, longest
            while hi - lo > 1:
                mid = lo + (hi - lo) // 2
                found = fitter.at(mid)
                if found is not None:
                    best, lo = found, mid
                else:
                    hi = mid
            return fitter.view(best)
    fulls = [c for c in fitter.cands if c.full]
    if fulls:
        blamed = max(fulls, key=lambda c: c.n)  # first of the longest, in document order
        if fitter.at(MIN_KEPT_CHARS, honor_full=False) is not None:
            return FullViewUnfit(argument=blamed.pointer, chars=blamed.n)
    return TooLarge(chars=fitter.cut(MIN_KEPT_CHARS, "arguments", need_bytes=False)[2])


def cut_view(args: Any, *, full_views: Sequence[str] = (), cap: int = MIN_KEPT_CHARS,
             rule: Rule = "arguments", user_request: str = "", tool: str = "") -> ArgumentView:
    """Every string outside ``full_views`` longer than ``cap`` cut (where the cut saves space
    under ``rule``): the building block of :func:`fit_arguments`, exposed for tests and tools.
    """
    fitter = _Fitter(args, full_views, user_request, tool, 1, StateLimits())
    fitter.args_b  # noqa: B018 - measured over the floor's candidates, before they change
    fitter.cands = _collect(args, full_views, cap)
    return fitter.view(fitter.cut(cap, rule))
