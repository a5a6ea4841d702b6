"""Selectors: parse and check what part of an entry to show, before any data is read.

* ``lines``: ``"A:B"`` 1-based and inclusive, ``"A:"``/``":B"`` open, ``"N"`` one line; negative
  numbers count from the end (``-1`` is the last line); out-of-range values are clamped.
* ``head N`` = lines ``1:N``; ``tail N`` = lines ``-N:-1``.
* ``grep REGEX`` with ``ignore_case``, ``context``/``before``/``after`` lines and
  ``max_matches``; combines with a line range (grep within lines A:B) or head/tail.
* ``byte_range`` ``"OFFSET:LENGTH"`` (negative offset from the end), cut at UTF-8 boundaries.
* ``json_pointer`` (RFC 6901) and ``keys`` (structural view) for JSON and JSON Lines.

Regular expressions match the stored UTF-8 *bytes*, line by line (``-i`` folds ASCII case).
Patterns that can backtrack catastrophically (a quantified group that itself contains an
unbounded quantifier, as in ``(a+)+``, and backreferences) are refused with a UsageError; the
scan also has a wall-time limit (:attr:`ArchivePolicy.grep_timeout_seconds`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxgate.errors import UsageError

__all__ = ["Selection", "compile_line_counter", "compile_regex", "parse", "parse_byte_range", "parse_line_range",
           "parse_pointer", "resolve_lines"]

_MAX_CONTEXT = 1_000
"""Largest -A/-B/-C value, lines."""


@dataclass(frozen=True, kw_only=True)
class Selection:
    """A checked selector (what :meth:`Archive.expand` was asked for)."""

    lines: tuple[int | None, int | None] | None = None
    """Line range, 1-based inclusive, negatives from the end, ``None`` for an open end."""
    grep: str | None = None
    ignore_case: bool = False
    before: int = 0
    after: int = 0
    max_matches: int = 200
    byte_range: tuple[int, int] | None = None
    """``(offset, length)``; a negative offset counts from the end."""
    json_pointer: str | None = None
    keys: bool = False

    @property
    def kind(self) -> str:
        if self.byte_range is not None:
            return "bytes"
        if self.json_pointer is not None or self.keys:
            return "json"
        if self.grep is not None:
            return "grep"
        return "lines"


def _int(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise UsageError(f"{what}: {text!r} is not an integer") from None


def parse_line_range(spec: str | tuple[int | None, int | None]) -> tuple[int | None, int | None]:
    """``"A:B"``, ``"A:"``, ``":B"``, ``"N"`` or a tuple → ``(A, B)``; 0 is refused (1-based)."""
    if isinstance(spec, tuple):
        a, b = spec
    else:
        text = spec.strip()
        if ":" in text:
            left, _, right = text.partition(":")
            a = _int(left, "--lines start") if left.strip() else None
            b = _int(right, "--lines end") if right.strip() else None
        else:
            a = b = _int(text, "--lines")
    if a == 0 or b == 0:
        raise UsageError(f"--lines {spec!r}: line numbers are 1-based (use 1 for the first line, "
                         "-1 for the last)")
    return a, b


def resolve_lines(rng: tuple[int | None, int | None], total: int) -> tuple[int, int]:
    """Absolute, clamped ``(first, last)``; ``first > last`` means an empty selection.

    Raises:
        UsageError: the start comes after the end (``"10:5"``).
    """
    a, b = rng
    first = 1 if a is None else (a if a > 0 else total + a + 1)
    last = total if b is None else (b if b > 0 else total + b + 1)
    if a is not None and b is not None and (a > 0) == (b > 0) and a > b:
        raise UsageError(f"--lines {a}:{b}: the start comes after the end; did you mean {b}:{a}?")
    first = max(1, first)
    last = min(total, last)
    return first, last


def parse_byte_range(spec: str | tuple[int, int]) -> tuple[int, int]:
    """``"OFFSET:LENGTH"`` (or a tuple) → ``(offset, length)``; ``"OFFSET"`` alone reads on."""
    if isinstance(spec, tuple):
        off, length = spec
    else:
        left, sep, right = spec.strip().partition(":")
        off = _int(left, "--bytes offset") if left.strip() else 0
        length = _int(right, "--bytes length") if sep and right.strip() else -1
    if length is not None and length < -1:
        raise UsageError(f"--bytes {spec!r}: the length must be positive")
    return off, length


def parse_pointer(pointer: str) -> list[str]:
    """RFC 6901 pointer → reference tokens (``~1`` is ``/``, ``~0`` is ``~``)."""
    if pointer in ("", "/") and pointer == "":
        return []
    if not pointer.startswith("/"):
        raise UsageError(f"--json {pointer!r}: a JSON pointer starts with '/' (RFC 6901), "
                         "for example /items/0/name; use '' for the whole document")
    tokens = pointer.split("/")[1:]
    for tok in tokens:
        if re.search(r"~(?![01])", tok):
            raise UsageError(f"--json {pointer!r}: '~' must be written ~0 and '/' ~1 (RFC 6901)")
    return [t.replace("~1", "/").replace("~0", "~") for t in tokens]


def _unsafe(tree: object, inside_repeat: bool = False) -> str | None:
    """Why a parsed pattern can backtrack catastrophically, or None."""
    from re import _constants as c  # type: ignore[attr-defined]

    for op, av in tree:  # type: ignore[attr-defined]
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            unbounded = hi == c.MAXREPEAT or hi > 100
            if inside_repeat and unbounded and op != getattr(c, "POSSESSIVE_REPEAT", None):
                return "a quantified group contains another unbounded quantifier (like (a+)+)"
            if hi > 1:
                why = _unsafe(sub, inside_repeat or unbounded)
                if why:
                    return why
        elif op in (c.GROUPREF, c.GROUPREF_EXISTS):
            return "backreferences are not supported"
        elif op == c.SUBPATTERN:
            why = _unsafe(av[-1], inside_repeat)
            if why:
                return why
        elif op == c.BRANCH:
            for alt in av[1]:
                why = _unsafe(alt, inside_repeat)
                if why:
                    return why
        elif op in (c.ASSERT, c.ASSERT_NOT):
            why = _unsafe(av[1], inside_repeat)
            if why:
                return why
    return None


def compile_regex(pattern: str, ignore_case: bool = False):  # -> compiled pattern (re or regex)
    """Compile a grep pattern for UTF-8 bytes, refusing invalid and catastrophic ones.

    Raises:
        UsageError: invalid syntax, or a construct that can backtrack exponentially.
    """
    from re import _parser  # type: ignore[attr-defined]

    raw = pattern.encode("utf-8")
    try:
        tree = _parser.parse(raw, re.MULTILINE | (re.IGNORECASE if ignore_case else 0))
    except re.error as exc:
        raise UsageError(f"--grep {pattern!r} is not a valid regular expression: {exc}") from exc
    why = _unsafe(tree)
    if why:
        raise UsageError(f"--grep {pattern!r} is refused: {why}, which can take exponential "
                         "time; simplify it (for example (ab)+ instead of (a+b?)+)")
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        import regex  # faster case folding and a match time limit

        return regex.compile(raw, regex.MULTILINE | (regex.IGNORECASE if ignore_case else 0))
    except ImportError:
        return re.compile(raw, flags)
    except Exception:  # a construct only `re` accepts
        return re.compile(raw, flags)


_MAY_MATCH_NEWLINE = ("\\s", "\\W", "\\D", "\\n", "\\x", "\\0", "\\u", "\\U", "\\N",
                      "[^", "(?s", "(?x", "\n")


def compile_line_counter(pattern: str, ignore_case: bool = False):  # -> compiled or None
    """A pattern that matches once per line containing ``pattern`` (for fast counting), or
    ``None`` when ``pattern`` might match a newline (then only the line-by-line scan is exact).

    The check is textual and conservative: any construct that could match ``\\n`` disables it.
    """
    if any(token in pattern for token in _MAY_MATCH_NEWLINE):
        return None
    # Each match runs on to the end of its line, so the next search starts on a later line:
    # one match per matching line, and the pattern keeps its literal-prefix fast search.
    wrapped = b"(?:" + pattern.encode("utf-8") + b")[^\n]*"
    try:
        import regex

        return regex.compile(wrapped, regex.MULTILINE | (regex.IGNORECASE if ignore_case else 0))
    except ImportError:
        return re.compile(wrapped, re.MULTILINE | (re.IGNORECASE if ignore_case else 0))
    except Exception:
        return None


def parse(
    *, lines=None, head=None, tail=None, grep=None, ignore_case=False, context=0, before=0,
    after=0, max_matches=None, byte_range=None, json_pointer=None, keys=False,
    default_max_matches: int = 200, fixed_strings: bool = False,
) -> Selection:
    """Check a combination of selectors and normalize it.

    Raises:
        UsageError: conflicting selectors, negative counts, malformed ranges.
    """
    ranges = [name for name, v in (("--lines", lines), ("--head", head), ("--tail", tail))
              if v is not None]
    if len(ranges) > 1:
        raise UsageError(f"{' and '.join(ranges)} cannot be combined; use one line selector")
    if byte_range is not None and (ranges or grep is not None or json_pointer is not None or keys):
        raise UsageError("--bytes cannot be combined with other selectors")
    if (json_pointer is not None or keys) and grep is not None:
        raise UsageError("--json/--keys cannot be combined with --grep")
    if keys and ranges:
        raise UsageError("--keys cannot be combined with --lines/--head/--tail")
    if json_pointer is not None and ranges and ranges != ["--lines"]:
        raise UsageError("with --json, page the value with --lines A:B (rows of the value)")
    if fixed_strings:
        if grep is None:
            raise UsageError("-F/--fixed-strings only applies to --grep")
        grep = re.escape(grep)  # a literal: ( [ * ? . match themselves
    for name, v in (("--head", head), ("--tail", tail), ("-C", context), ("-B", before),
                    ("-A", after), ("--max-matches", max_matches)):
        if v is not None and v < 0:
            raise UsageError(f"{name} must be >= 0, got {v}")
    if grep is None and (context or before or after or max_matches is not None or ignore_case):
        raise UsageError("-i, -C/-A/-B and --max-matches only apply to --grep")
    rng = None
    if lines is not None:
        rng = parse_line_range(lines)
    elif head is not None:
        if head < 1:
            raise UsageError(f"--head must be >= 1, got {head}")
        rng = (1, head)
    elif tail is not None:
        if tail < 1:
            raise UsageError(f"--tail must be >= 1, got {tail}")
        rng = (-tail, -1)
    before = min(_MAX_CONTEXT, max(before, context))
    after = min(_MAX_CONTEXT, max(after, context))
    if grep is not None:
        if grep == "":
            raise UsageError("--grep needs a non-empty pattern")
        compile_regex(grep, ignore_case)  # validate now, before any data is read
    if json_pointer is not None:
        parse_pointer(json_pointer)
    return Selection(
        lines=rng, grep=grep, ignore_case=ignore_case, before=before, after=after,
        max_matches=default_max_matches if max_matches is None else max_matches,
        byte_range=parse_byte_range(byte_range) if byte_range is not None else None,
        json_pointer=json_pointer, keys=keys,
    )
