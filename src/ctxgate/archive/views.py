"""Bounded rendering of archive slices: decoding notes, line gutter, token budget, ``next:`` hints.

Only views decode; stored bytes stay exactly as they came. Decoding is deterministic: invalid
UTF-8 becomes U+FFFD, ANSI escape sequences are removed, other control characters (NUL, lone
CR, ESC ...) are shown as Unicode control pictures (``␀``, ``␍``), a CR before the newline is
dropped; each kind is counted and reported in a ``note:`` line.

A view must fit a token budget. Rows are gathered under a byte estimate (``max_tokens`` times
:data:`~ctxgate.tokens.ESTIMATE_BYTES_PER_TOKEN`), then checked: a text of at most ``max_tokens``
UTF-8 bytes always fits (every token is at least one byte), anything larger is counted with the
named tokenizer and trimmed row by row until it fits. When rows were cut the last line says
exactly how to get the next page (``next: --lines 401:600``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ctxgate.tokens import ESTIMATE, ESTIMATE_BYTES_PER_TOKEN, count_tokens

__all__ = ["MIN_VIEW_TOKENS", "Budget", "DecodeStats", "clip_utf8", "decode_row", "fit_rows",
           "inside_char", "upper_token_count"]

MIN_VIEW_TOKENS = 100
"""Smallest accepted view budget, tokens (a header, a note and a next line must fit)."""

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_PICTURES = {c: chr(0x2400 + c) for c in range(0x20)} | {0x7F: "\u2421"}
_PICTURES_NO_TAB = {k: v for k, v in _PICTURES.items() if k not in (9, 10)}


@dataclass(kw_only=True)
class DecodeStats:
    """Counts of what decoding changed, reported as notes."""

    chars: int = 0
    """Code points decoded (to judge whether the content is binary)."""
    invalid: int = 0
    nul: int = 0
    control: int = 0
    ansi: int = 0
    crlf: int = 0

    def notes(self) -> list[str]:
        out = []
        if self.invalid:
            out.append(f"note: {self.invalid} invalid UTF-8 sequence(s) shown as U+FFFD "
                       "(stored bytes unchanged; --bytes shows exact offsets)")
        if self.nul:
            out.append(f"note: {self.nul} NUL byte(s) shown as \u2400 (binary content?)")
        if self.control:
            out.append(f"note: {self.control} control character(s) shown as control pictures")
        if self.ansi:
            out.append(f"note: {self.ansi} ANSI escape sequence(s) removed")
        if self.crlf:
            out.append("note: CRLF line endings (CR not shown)")
        if self.chars and (self.invalid + self.nul + self.control) * 10 > 3 * self.chars:
            out.append("note: this looks like binary data; --bytes OFF:LEN addresses exact "
                       "byte ranges, and 'ctxgate archive stat' shows the size")
        return out


def decode_row(raw: bytes, stats: DecodeStats, *, strip_cr: bool = True) -> str:
    """Decode one line (without its newline) for display, counting what changed."""
    if strip_cr and raw.endswith(b"\r"):
        raw = raw[:-1]
        stats.crlf += 1
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
        stats.invalid += text.count("\ufffd") - raw.count("\ufffd".encode())
    if "\x1b" in text:
        text, n = _ANSI.subn("", text)
        stats.ansi += n
    if _CONTROL.search(text):
        nul = text.count("\x00")
        stats.nul += nul
        stats.control += len(_CONTROL.findall(text)) - nul
        text = text.translate(_PICTURES_NO_TAB)
    stats.chars += len(text)
    return text


def _seq_len(lead: int) -> int:
    """Length of the UTF-8 sequence a lead byte announces (0 for a non-lead byte)."""
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def inside_char(data: bytes, pos: int) -> tuple[int, int]:
    """If ``pos`` splits a (well-formed looking) UTF-8 sequence of ``data``, return how far back
    it starts and how far forward it ends; else ``(0, 0)``. Bytes that belong to no valid
    sequence are never skipped, so cuts of binary data lose nothing."""
    if pos <= 0 or pos >= len(data) or (data[pos] & 0xC0) != 0x80:
        return 0, 0
    for back in range(1, 4):
        if pos - back < 0:
            break
        b = data[pos - back]
        if (b & 0xC0) == 0x80:
            continue
        n = _seq_len(b)
        if n > back:
            return back, n - back
        break
    return 0, 0


def clip_utf8(data: bytes, limit: int) -> bytes:
    """The longest prefix of ``data`` of at most ``limit`` bytes that does not split a character."""
    if len(data) <= limit:
        return data
    back, _ = inside_char(data, limit)
    return data[: limit - back]


_LONG_RUN = re.compile(r"\S{256,}")
"""Runs the pure-Python BPE would take quadratic time on; bounded by their byte length."""


def upper_token_count(text: str, tokenizer: str) -> int:
    """Tokens of ``text`` in ``tokenizer``: exact, except that very long runs without
    whitespace count as their UTF-8 byte length (an upper bound: every token is >= 1 byte)."""
    runs = list(_LONG_RUN.finditer(text))
    if not runs:
        return count_tokens(text, tokenizer).count
    total = 0
    pos = 0
    for m in runs:
        total += count_tokens(text[pos:m.start()], tokenizer).count + 1
        total += len(m.group().encode("utf-8", "surrogatepass"))
        pos = m.end()
    return total + count_tokens(text[pos:], tokenizer).count


class Budget:
    """A view's token budget (named tokenizer, or the labelled estimate)."""

    def __init__(self, max_tokens: int, tokenizer: str = "o200k_base") -> None:
        if max_tokens < MIN_VIEW_TOKENS:
            from ctxgate.errors import UsageError

            raise UsageError(f"--max-tokens must be at least {MIN_VIEW_TOKENS}, got {max_tokens}")
        self.max_tokens = int(max_tokens)
        self.tokenizer = tokenizer
        self.max_bytes = int(self.max_tokens * ESTIMATE_BYTES_PER_TOKEN)
        """Byte estimate used while gathering rows, bytes."""
        self._line_tokens: dict[str, int] = {}

    def fits(self, text: str) -> bool:
        """Whether ``text`` is within ``max_tokens``."""
        nbytes = len(text.encode("utf-8", "surrogatepass"))
        if nbytes <= self.max_tokens:
            return True
        if self.tokenizer == ESTIMATE:
            return nbytes <= self.max_bytes
        return upper_token_count(text, self.tokenizer) <= self.max_tokens

    def fits_by_lines(self, text: str) -> bool:
        """Like :meth:`fits`, counting line by line with a cache (for searches over prefixes).

        The o200k/cl100k pre-tokenizers never join a newline with the following line, and only
        ever join it with the preceding spaces or punctuation into one piece, so the sum of
        per-line counts plus one per newline is at least the whole-text count: never under.
        """
        nbytes = len(text.encode("utf-8", "surrogatepass"))
        if nbytes <= self.max_tokens:
            return True
        if self.tokenizer == ESTIMATE:
            return nbytes <= self.max_bytes
        total = text.count("\n")
        for line in text.split("\n"):
            cost = self._line_tokens.get(line)
            if cost is None:
                cost = upper_token_count(line, self.tokenizer) if line else 0
                self._line_tokens[line] = cost
            total += cost
            if total > self.max_tokens:
                return False
        return True

    def label(self) -> str:
        return f"{self.max_tokens} tokens ({self.tokenizer})"


def fit_rows(build: Callable[[int], str], n: int, budget: Budget) -> int:
    """Largest ``k`` in ``[1, n]`` with ``build(k)`` within budget (1 when even one row is over).

    Texts are counted line by line, each distinct line once (see :meth:`Budget.fits_by_lines`),
    so the whole search costs about one tokenization of the largest candidate.
    """
    if n <= 1 or budget.fits_by_lines(build(n)):
        return n
    lo, hi = 1, n - 1  # build(n) does not fit; find the largest fitting k
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if budget.fits_by_lines(build(mid)):
            lo = mid
        else:
            hi = mid - 1
    return lo
