"""Secret redaction before storage: built-in patterns, extra patterns, a streaming redactor.

Redaction runs on the bytes before they are hashed and stored, so a secret never reaches the
archive. Each secret becomes ``[REDACTED:<kind>]`` (for ``key=value`` pairs the key and separator
stay, so the output still reads). The number of replacements is recorded in the entry.

Streaming: :class:`Redactor` keeps a tail of :data:`OVERLAP_BYTES` between writes, so a secret
split across two writes is still found; no pattern matches more than that many bytes. Literal
prefilters (``AKIA``, ``ghp_``, ``PRIVATE KEY`` ...) skip the regular expressions on the
(overwhelmingly common) chunks that cannot contain a secret, which keeps ingest near disk speed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ctxgate.errors import ConfigError

__all__ = ["BUILTIN_PATTERNS", "OVERLAP_BYTES", "Pattern", "Redactor", "compile_patterns",
           "redact_bytes"]

OVERLAP_BYTES = 16_384
"""Bytes held back between writes so secrets split across writes are found, bytes."""

_MIN_BATCH_BYTES = 65_536
"""Input gathered before a scan when writes are small, bytes."""


@dataclass(frozen=True, kw_only=True)
class Pattern:
    """One kind of secret."""

    kind: str
    """Label used in the replacement ``[REDACTED:kind]``."""
    regex: re.Pattern[bytes]
    """Bytes pattern; group ``keep`` (when present) is kept verbatim before the marker."""
    literals: tuple[bytes, ...] = ()
    """Prefilter: lower-case literals; the pattern only runs when one occurs in the lower-cased
    bytes (empty: always run)."""
    fold_case: bool = False
    """The regular expression ignores (ASCII) case."""


def _p(kind: str, regex: str, literals: Iterable[str], fold_case: bool = False) -> Pattern:
    flags = re.IGNORECASE if fold_case else 0
    return Pattern(kind=kind, regex=re.compile(regex.encode(), flags),
                   literals=tuple(s.encode() for s in literals), fold_case=fold_case)


BUILTIN_PATTERNS: tuple[Pattern, ...] = (
    _p("private_key",
       r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
       r"(?:[\s\S]{0,12000}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
       r"|(?:\r?\n[A-Za-z0-9+/=:\- ]{0,100}){0,200})",
       ["private key"]),
    _p("aws_access_key", r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])",
       ["akia", "asia"]),
    _p("aws_secret_key",
       r"(?P<keep>aws_?secret_?(?:access_?)?key[\"']?\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{40}",
       ["secret"], fold_case=True),
    _p("github_token", r"(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,251})\b",
       ["gh", "github_pat_"]),
    _p("gitlab_token", r"gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_\-]{20,250}", ["gl"]),
    _p("slack_token", r"xox[abposre]-[A-Za-z0-9\-]{10,250}", ["xox"]),
    _p("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{10,250}",
       ["://"]),
    _p("bearer", r"(?P<keep>\bbearer\s+)[A-Za-z0-9\-._~+/]{8,4096}=*", ["bearer"],
       fold_case=True),
    _p("password",
       r"(?P<keep>\b(?:password|passwd)[\"']?\s*[=:]\s*)"
       r"(?:\"[^\"\r\n]{1,1024}\"|'[^'\r\n]{1,1024}'|[^\s\"',;&]{1,1024})",
       ["passw"], fold_case=True),
    _p("url_credentials", r"(?P<keep>://[^/\s:@]{1,256}:)[^/\s@]{1,256}(?=@)", ["://"]),
)
"""The patterns applied when redaction is on."""


def compile_patterns(extra: Iterable[str] = ()) -> tuple[Pattern, ...]:
    """Built-in patterns plus user patterns (each replaced whole as ``[REDACTED:custom]``).

    Raises:
        ConfigError: an extra pattern is not a valid regular expression.
    """
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


def _replacement(kind: str) -> Callable[[re.Match[bytes]], bytes]:
    marker = f"[REDACTED:{kind}]".encode()

    def repl(m: re.Match[bytes]) -> bytes:
        keep = m.groupdict().get("keep")
        return (keep or b"") + marker

    return repl


_AUTOMATA: dict[tuple[bytes, ...], object] = {}


def _present(lower: bytes, patterns: tuple[Pattern, ...]) -> set[bytes]:
    """The prefilter literals that occur in ``lower``.

    With the optional ``ahocorasick_rs`` package all literals are found in one pass (about 3x
    faster ingest); without it, one substring scan per literal.
    """
    literals = tuple(sorted({lit for p in patterns for lit in p.literals}))
    if USE_AUTOMATON:
        automaton = _AUTOMATA.get(literals)
        if automaton is None:
            try:
                import ahocorasick_rs
            except ImportError:
                automaton = False
            else:
                # Leftmost-first, non-overlapping: ~3x faster than overlapping search. It can
                # only miss a literal that overlaps a reported one, and no literal overlaps a
                # literal of another pattern (a test keeps it so), so no pattern is skipped.
                automaton = ahocorasick_rs.BytesAhoCorasick(
                    list(literals), matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST)
            _AUTOMATA[literals] = automaton
        if automaton:
            hits = automaton.find_matches_as_indexes(lower)  # type: ignore[attr-defined]
            return {literals[i] for i, _, _ in hits}
    return {lit for lit in literals if lit in lower}


USE_AUTOMATON = True
"""Use ``ahocorasick_rs`` for the prefilter when it is installed (tests switch it off)."""


def _matches(buf: bytes, patterns: tuple[Pattern, ...], limit: int) -> list[tuple[int, int, bytes]]:
    """Non-overlapping ``(start, end, replacement)`` for matches starting before ``limit``."""
    present = _present(buf.lower(), patterns)  # one copy; every prefilter literal is lower case
    found: list[tuple[int, int, bytes]] = []
    for pat in patterns:
        if pat.literals and not any(lit in present for lit in pat.literals):
            continue
        repl = _replacement(pat.kind)
        for m in pat.regex.finditer(buf):
            if m.start() >= limit:
                break
            if m.end() > m.start():
                found.append((m.start(), m.end(), repl(m)))
    found.sort(key=lambda t: (t[0], -t[1]))
    chosen: list[tuple[int, int, bytes]] = []
    last_end = 0
    for start, end, rep in found:
        if start >= last_end:
            chosen.append((start, end, rep))
            last_end = end
    return chosen


def redact_bytes(data: bytes, patterns: tuple[Pattern, ...] = BUILTIN_PATTERNS) -> tuple[bytes, int]:
    """Redact a whole buffer; returns ``(redacted bytes, replacements)``."""
    r = Redactor(patterns)
    out = r.feed(data) + r.flush()
    return out, r.count


class Redactor:
    """Streaming redaction: ``feed`` bytes, get redacted bytes back (lagging by a small tail)."""

    def __init__(self, patterns: tuple[Pattern, ...] = BUILTIN_PATTERNS) -> None:
        self.patterns = patterns
        self.count = 0
        """Replacements made so far."""
        self._buf = b""

    def feed(self, data: bytes) -> bytes:
        """Add bytes; returns the redacted bytes that are final now."""
        self._buf = self._buf + data if self._buf else bytes(data)
        if len(self._buf) < max(_MIN_BATCH_BYTES, 2 * OVERLAP_BYTES):
            return b""
        return self._scan(final=False)

    def flush(self) -> bytes:
        """Return everything still held (end of stream)."""
        return self._scan(final=True)

    def _scan(self, final: bool) -> bytes:
        buf = self._buf
        limit = len(buf) if final else len(buf) - OVERLAP_BYTES
        if limit <= 0:
            return b""
        found = _matches(buf, self.patterns, limit)
        if not found:
            self._buf = buf[limit:]
            return buf[:limit]
        cut = max(limit, found[-1][1])
        parts = []
        pos = 0
        for start, end, rep in found:
            parts.append(buf[pos:start])
            parts.append(rep)
            pos = end
        parts.append(buf[pos:cut])
        self.count += len(found)
        self._buf = buf[cut:]
        return b"".join(parts)
