"""Secret redaction: the kinds of :mod:`.secret_kinds` applied to bytes, streams and metadata.

Redaction runs on the bytes before they are hashed and stored, so a secret never reaches the
archive; the firewall digests the redacted bytes, so a digest never shows one either. Each
secret becomes ``[REDACTED:<kind>]``; what surrounds it stays (``DB_PASSWORD=``, the quotes of
``"password": "…"`` so JSON stays JSON). A secret spanning lines (a private key's body) is
replaced line by line: newlines are never removed, so line numbers stay true. The number of
replacements is recorded in the entry.

Streaming: :class:`Redactor` holds back :data:`OVERLAP_BYTES` between scans (no kind matches
more than that), so a secret split across two writes is still found, and keeps
:data:`CONTEXT_BYTES` of already emitted input as left context (a variable name or a
look-behind that started before the cut). Literal prefilters (``akia``, ``ghp_``,
``private key`` ...) skip the expressions on the (overwhelmingly common) buffers that cannot
contain their kind, and credential assignments are only tried where an anchor such as
``password=`` or ``token:`` occurs, which keeps ingest near disk speed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ctxgate.archive.secret_checks import Found
from ctxgate.archive.secret_kinds import SECRET_KINDS, SecretKind
from ctxgate.errors import ConfigError

__all__ = ["BUILTIN_PATTERNS", "CONTEXT_BYTES", "OVERLAP_BYTES", "Pattern", "Redactor",
           "compile_patterns", "redact_bytes", "redact_text", "redact_value"]

OVERLAP_BYTES = 32_768
"""Bytes held back between scans so secrets split across writes are found, bytes."""

CONTEXT_BYTES = 256
"""Bytes of already emitted input kept as left context for the next scan, bytes."""

_MIN_BATCH_BYTES = 131_072
"""Input gathered before a scan when writes are small, bytes."""


@dataclass(frozen=True, kw_only=True)
class Pattern:
    """One compiled kind of secret."""

    kind: str
    """Label used in the replacement ``[REDACTED:kind]``."""
    regex: Any
    """A compiled ``re.Pattern[bytes]`` (built-in kinds: compiled on first use). Groups
    named ``secret``, ``secret2`` ... are replaced; without any, the whole match."""
    literals: tuple[bytes, ...] = ()
    """Prefilter: lower-case literals; the pattern only runs when one occurs in the lower-cased
    bytes (empty: always run)."""
    anchors: tuple[bytes, ...] = ()
    """Lower-case literals; the pattern is only tried (``match``) where one of them starts."""

    fold_case: bool = False
    """The regular expression ignores (ASCII) case."""
    check: Any = None
    """``(secret bytes) -> bool``: rejects look-alikes."""
    not_after: frozenset[int] | None = None
    """Bytes that must not come right before a match (a word boundary)."""
    resolve: Any = None
    """``(match, buffer) -> Found | None``: finishes matches a regular expression cannot."""


_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_LEADING_GUARDS = {r"(?<![A-Za-z0-9_\-])": frozenset(_ALNUM + b"_-"),
                   r"(?<![A-Za-z0-9])": frozenset(_ALNUM)}


class _LazyRegex:
    """A built-in kind's expression, compiled the first time it is used: a short output whose
    literals rule every kind out never compiles any (~15 ms per process)."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: bytes, flags: int) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[bytes] | None = None

    def _get(self) -> re.Pattern[bytes]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def match(self, *args: Any) -> re.Match[bytes] | None:
        return self._get().match(*args)

    def search(self, *args: Any) -> re.Match[bytes] | None:
        return self._get().search(*args)

    def finditer(self, *args: Any) -> Any:
        return self._get().finditer(*args)


def _compile(k: SecretKind) -> Pattern:
    flags = re.IGNORECASE if k.fold_case else 0
    regex, not_after = k.regex, None
    for guard, chars in _LEADING_GUARDS.items():
        if regex.startswith(guard):
            # A leading look-behind hides the literal prefix from the regex engine (no fast
            # skip to candidates, ~10x slower on text full of near misses): checked after.
            regex, not_after = regex[len(guard):], chars
            break
    return Pattern(kind=k.name, regex=_LazyRegex(regex.encode(), flags), not_after=not_after,
                   literals=tuple(s.encode() for s in k.literals),
                   anchors=tuple(s.encode() for s in k.anchors), fold_case=k.fold_case,
                   check=k.check, resolve=k.resolve)


BUILTIN_PATTERNS: tuple[Pattern, ...] = tuple(_compile(k) for k in SECRET_KINDS)
"""The patterns applied when redaction is on."""


def compile_patterns(extra: Iterable[str] = ()) -> tuple[Pattern, ...]:
    """Built-in patterns plus user patterns (each replaced whole as ``[REDACTED:custom]``).

    The same ``extra`` gives the same tuple object, so the literal tables built for it
    (~0.1 s, kept by identity) are built once per process, not once per archive opened (the
    decision daemon opens one per hook call).

    Raises:
        ConfigError: an extra pattern is not a valid regular expression.
    """
    return _compiled(tuple(extra))


@functools.lru_cache(maxsize=16)
def _compiled(extra: tuple[str, ...]) -> tuple[Pattern, ...]:
    if not extra:
        return BUILTIN_PATTERNS
    out = list(BUILTIN_PATTERNS)
    for text in extra:
        try:
            regex = re.compile(text.encode("utf-8"))
        except re.error as exc:
            raise ConfigError(
                f"archive.extra_redact_patterns: {text!r} is not a valid regular expression "
                f"({exc}); fix or remove it"
            ) from exc
        out.append(Pattern(kind="custom", regex=regex))
    return tuple(out)


# ------------------------------------------------------------------------------ literals

class _Literals:
    """Every prefilter literal of a pattern set found in one pass, every anchor in another
    (two small automata stay on the fast SIMD path where one large one would not)."""

    def __init__(self, patterns: tuple[Pattern, ...]) -> None:
        self.literals = tuple(sorted({lit for p in patterns for lit in p.literals}))
        self.anchors = tuple(sorted({a for p in patterns for a in p.anchors}))
        self._automata: Any = None
        self._built = False

    def _build(self) -> None:
        """The automata and their overlap tables, made the first time a buffer is large
        enough to need them (~10 ms; a short output never pays it)."""
        self._built = True
        self._neighbours: dict[bytes, tuple[bytes, ...]] = {}
        self._shadows: dict[bytes, tuple[tuple[bytes, int], ...]] = {}
        if USE_AUTOMATON:
            try:
                import ahocorasick_rs
            except ImportError:
                pass
            else:
                self._automata = tuple(
                    ahocorasick_rs.BytesAhoCorasick(
                        list(lits), matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST)
                    if lits else None for lits in (self.literals, self.anchors))

    def neighbours(self, a: bytes) -> tuple[bytes, ...]:
        """Literals a leftmost-first match of ``a`` could hide (they share bytes); computed
        for the literals an output really holds (most hold none), then kept."""
        got = self._neighbours.get(a)
        if got is None:
            got = self._neighbours[a] = tuple(b for b in self.literals
                                              if b != a and _overlap(a, b))
        return got

    def shadows(self, a: bytes) -> tuple[tuple[bytes, int], ...]:
        """``(anchor, offset)``: anchors that can start ``offset`` bytes into a match of the
        anchor ``a`` (a leftmost-first search reports ``a`` and skips them); computed on
        first use, then kept."""
        got = self._shadows.get(a)
        if got is None:
            got = self._shadows[a] = tuple(
                (b, d) for b in self.anchors if b != a for d in range(len(a))
                if a[d:d + len(b)] == b[:len(a) - d])  # as _agree(a[d:], b)
        return got

    @property
    def automata(self) -> Any:
        if not self._built:
            self._build()
        return self._automata

    def find(self, lower: bytes) -> tuple[set[bytes], list[tuple[bytes, int]]]:
        """The literals present in ``lower``, and ``(anchor, start)`` of every anchor.

        Buffers under :data:`_SMALL_BYTES` are searched literal by literal (the same answer;
        cheaper than building the automata for one short output)."""
        if len(lower) < _SMALL_BYTES and not self._built:
            return self._find_slow(lower)
        if self.automata is not None:
            # leftmost-first, non-overlapping: ~5x faster than overlapping search. A literal
            # can only be hidden by a found one it overlaps: those are checked one by one.
            lit_auto, anchor_auto = self.automata
            present: set[bytes] = set()
            if lit_auto is not None:
                lits = self.literals
                present = {lits[i] for i, _, _ in
                           lit_auto.find_matches_as_indexes(lower)}
                for a in tuple(present):
                    present.update(b for b in self.neighbours(a)
                                   if b not in present and b in lower)
            hits: list[tuple[bytes, int]] = []
            if anchor_auto is not None:
                anchors = self.anchors
                hits = [(anchors[i], s) for i, s, _ in
                        anchor_auto.find_matches_as_indexes(lower)]
                hits += self._hidden(lower, hits)
            return present, hits
        return self._find_slow(lower)

    def _hidden(self, lower: bytes, hits: list[tuple[bytes, int]]) -> list[tuple[bytes, int]]:
        """Anchors a leftmost-first match hid: those overlapping a found one, checked there."""
        extra = []
        shadows = self.shadows
        for a, s in hits:
            for b, d in shadows(a):
                if lower.startswith(b, s + d):
                    extra.append((b, s + d))
        return extra

    def _find_slow(self, lower: bytes) -> tuple[set[bytes], list[tuple[bytes, int]]]:
        present = {lit for lit in self.literals if lit in lower}
        hits = []
        for a in self.anchors:
            at = lower.find(a)
            while at != -1:
                hits.append((a, at))
                at = lower.find(a, at + 1)
        return present, hits


def _agree(tail: bytes, b: bytes) -> bool:
    """Whether ``b`` can start where ``tail`` starts (they agree on their common length)."""
    n = min(len(tail), len(b))
    return tail[:n] == b[:n]


def _overlap(a: bytes, b: bytes) -> bool:
    """Whether an occurrence of ``a`` can share bytes with one of ``b``."""
    if a in b or b in a:
        return True
    return any(a[-k:] == b[:k] or b[-k:] == a[:k] for k in range(1, min(len(a), len(b))))


_SMALL_BYTES = 8_192
"""Buffers shorter than this are searched without the automata (until they are built)."""

USE_AUTOMATON = True
"""Use ``ahocorasick_rs`` for the literals when it is installed (tests switch it off)."""

_TABLES: dict[tuple[int, bool], tuple[tuple[Pattern, ...], _Literals]] = {}


def _table(patterns: tuple[Pattern, ...]) -> _Literals:
    key = (id(patterns), USE_AUTOMATON)  # by identity: hashing the patterns costs ~1 ms
    got = _TABLES.get(key)
    if got is None or got[0] is not patterns:
        if len(_TABLES) > 64:
            _TABLES.clear()
        got = _TABLES[key] = (patterns, _Literals(patterns))
    return got[1]


# ------------------------------------------------------------------------------ matching

def _default_found(pat: Pattern, m: re.Match[bytes]) -> Found | None:
    if pat.not_after is not None and m.start() > 0 and m.string[m.start() - 1] in pat.not_after:
        return None
    spans = []
    for name, value in m.groupdict().items():
        if value is not None and name.startswith("secret"):
            spans.append((m.start(name), m.end(name), False))
    if not spans:
        spans = [(m.start(), m.end(), False)]
    if not any(m.string[s:e].strip() and not m.string.startswith(b"[REDACTED:", s)
               for s, e, _ in spans):
        return None  # nothing left to hide (already redacted): redaction is idempotent
    if pat.check is not None and not all(pat.check(m.string[s:e]) for s, e, _ in spans):
        return None
    spans.sort()
    return Found(end=m.end(), spans=tuple(spans), kind=pat.kind)


def _matches(buf: bytes, patterns: tuple[Pattern, ...], pos: int,
             limit: int) -> list[tuple[int, Found]]:
    """Non-overlapping ``(start, Found)`` for matches starting in ``[pos, limit)``."""
    table = _table(patterns)
    lower = buf.lower()  # every literal is lower case
    present, anchor_hits = table.find(lower)
    found: list[tuple[int, Found]] = []
    by_anchor: dict[bytes, list[int]] = {}
    for lit, at in anchor_hits:
        if pos <= at < limit:
            by_anchor.setdefault(lit, []).append(at)
    for pat in patterns:
        if pat.anchors:
            starts = sorted({at for a in pat.anchors for at in by_anchor.get(a, ())})
            for at in starts:
                m = pat.regex.match(buf, at)
                if m is None:
                    continue
                f = pat.resolve(m, buf) if pat.resolve else _default_found(pat, m)
                if f is not None:
                    found.append((m.start(), f))
            continue
        if pat.literals and not present.intersection(pat.literals):
            continue
        for m in pat.regex.finditer(buf, pos):
            if m.start() >= limit:
                break
            if m.end() <= m.start():
                continue
            f = pat.resolve(m, buf) if pat.resolve else _default_found(pat, m)
            if f is not None:
                found.append((m.start(), f))
    found.sort(key=lambda t: (t[0], -t[1].end))
    chosen: list[tuple[int, Found]] = []
    last_end = pos
    for start, f in found:
        if start >= last_end:
            chosen.append((start, f))
            last_end = max(f.end, f.spans[-1][1])
    return chosen


_SEGMENT = re.compile(rb"[^\r\n]+")


def _mask(secret: bytes, marker: bytes, quote: bool) -> bytes:
    """The replacement of one secret span: newlines kept, each line's text replaced."""
    if b"\n" not in secret and b"\r" not in secret:
        return b'"' + marker + b'"' if quote else marker
    def line(s: re.Match[bytes]) -> bytes:
        text = s.group()
        body = text.lstrip(b" \t")
        return text[:len(text) - len(body)] + marker if body.strip() else text

    return _SEGMENT.sub(line, secret)


def _apply(buf: bytes, start: int, stop: int, chosen: list[tuple[int, Found]]) -> bytes:
    parts = []
    p = start
    for _, f in chosen:
        marker = f"[REDACTED:{f.kind}]".encode()
        for s, e, quote in f.spans:
            if s < p:
                continue
            parts.append(buf[p:s])
            parts.append(_mask(buf[s:e], marker, quote))
            p = e
    parts.append(buf[p:stop])
    return b"".join(parts)


# ------------------------------------------------------------------------------ entry points

def redact_bytes(data: bytes, patterns: tuple[Pattern, ...] = BUILTIN_PATTERNS) -> tuple[bytes, int]:
    """Redact a whole buffer; returns ``(redacted bytes, replacements)``."""
    r = Redactor(patterns)
    out = r.feed(data) + r.flush()
    return out, r.count


def redact_text(text: str, patterns: tuple[Pattern, ...] = BUILTIN_PATTERNS) -> tuple[str, int]:
    """Redact a string (as its UTF-8 bytes); returns ``(redacted text, replacements)``."""
    raw = text.encode("utf-8", "surrogatepass")
    out, n = redact_bytes(raw, patterns)
    return (out.decode("utf-8", "surrogatepass") if n else text), n


def redact_value(value: Any, patterns: tuple[Pattern, ...] = BUILTIN_PATTERNS) -> tuple[Any, int]:
    """Redact every string in a JSON-like value (dict keys kept); returns ``(value, count)``."""
    if isinstance(value, str):
        return redact_text(value, patterns)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        total = 0
        for k, v in value.items():
            out[k], n = redact_value(v, patterns)
            total += n
        return out, total
    if isinstance(value, (list, tuple)):
        items = []
        total = 0
        for v in value:
            r, n = redact_value(v, patterns)
            items.append(r)
            total += n
        return (type(value)(items) if isinstance(value, tuple) else items), total
    return value, 0


class Redactor:
    """Streaming redaction: ``feed`` bytes, get redacted bytes back (lagging by a small tail).

    The output has exactly as many newlines as the input, in the same places relative to the
    text that is kept.
    """

    def __init__(self, patterns: tuple[Pattern, ...] = BUILTIN_PATTERNS) -> None:
        self.patterns = patterns
        self.count = 0
        """Replacements made so far."""
        self._buf = b""
        self._skip = 0
        """Bytes at the start of ``_buf`` already emitted (left context only)."""

    def feed(self, data: bytes) -> bytes:
        """Add bytes; returns the redacted bytes that are final now."""
        self._buf = self._buf + data if self._buf else bytes(data)
        if len(self._buf) - self._skip < max(_MIN_BATCH_BYTES, 2 * OVERLAP_BYTES):
            return b""
        return self._scan(final=False)

    def flush(self) -> bytes:
        """Return everything still held (end of stream)."""
        out = self._scan(final=True)
        self._buf, self._skip = b"", 0
        return out

    def _scan(self, final: bool) -> bytes:
        buf, skip = self._buf, self._skip
        limit = len(buf) if final else len(buf) - OVERLAP_BYTES
        if limit <= skip:
            return b""
        chosen = _matches(buf, self.patterns, skip, limit)
        cut = max(limit, max((max(f.end, f.spans[-1][1]) for _, f in chosen), default=limit))
        out = _apply(buf, skip, cut, chosen) if chosen else buf[skip:cut]
        self.count += len(chosen)
        keep = max(0, cut - CONTEXT_BYTES)
        self._buf = buf[keep:]
        self._skip = cut - keep
        return out
