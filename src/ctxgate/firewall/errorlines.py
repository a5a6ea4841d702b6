"""Lines that matter, wherever they sit: errors, failures, exceptions, tracebacks, warnings.

Two stages keep a 1 GiB scan affordable. The streaming scanner looks for a few lowercase
:data:`KEYWORDS` with ``bytes.find`` (C speed) and hands each candidate line to
:func:`classify_line`, which applies precise line-level patterns and drops look-alikes
(``Failures: 0, Errors: 0``, ``-Werror``, ``error_log.c``). :func:`select_hits` then picks
what a digest shows under its line and byte caps: the most severe first, shown in line order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["COUNTED_KEYWORDS", "KEYWORDS", "SEVERITY", "Hit", "classify_line", "select_hits"]

KEYWORDS: tuple[bytes, ...] = (
    b"error", b"fail", b"exception", b"traceback", b"panic", b"fatal", b"caused by",
    b"warn", b"abort", b"exit", b"not found", b"no such file", b"fault", b"denied",
    b"no space left",
)
"""Lowercase byte strings whose presence makes a line a candidate."""

COUNTED_KEYWORDS: tuple[bytes, ...] = (b"error", b"fail", b"exception")
"""The keywords whose occurrences are still counted after a flood of candidates."""

SEVERITY = {"error": 3, "failure": 3, "exception": 3, "traceback": 3, "exit": 2, "frame": 2,
            "warning": 1}
"""Rank of each kind of line that matters; higher is shown first."""

_ZERO_COUNTS = re.compile(
    r"(?i)\b(?:errors?|failures?|failed|failing|warnings?|skipped|exceptions?)\s*[:=]\s*0\b"
    r"|\b0\s+(?:errors?|failures?|failed|warnings?|exceptions?)\b"
)
_NONZERO_COUNTS = re.compile(
    r"(?i)\b(?:errors?|failures?|failed)\s*[:=]\s*[1-9]"
    r"|\b[1-9]\d*\s+(?:errors?|failures?|failed|failing)\b"
)
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("traceback", re.compile(r"Traceback \(most recent call last\)|^\s*Caused by\b|"
                             r"^\s*Exception in thread")),
    ("frame", re.compile(r"^\s*at [\w$.<>/]+\(.*\)\s*$|^\s*File \".*\", line \d+")),
    ("exception", re.compile(r"\b[A-Z]\w*(?:Exception|Error)\b(?: \[[\w.]+\])?(?::|\s*$| at | in )|"
                             r"\bpanicked at\b|^panic:|\bunhandled exception\b", re.I)),
    ("error", re.compile(r"\[ERROR\]|^\s*ERROR\b|\berror(?:\[\w+\])?:|\bERROR:|"
                         r"^\s*E\s{2,}|\bfatal(?: error)?:|\bFATAL\b|npm ERR!|"
                         r"\bcommand not found\b|\bNo such file or directory\b|"
                         r"\bPermission denied\b|\bSegmentation fault\b|\bAborted\b|\bNo space left on device\b|"
                         r"\bcompilation terminated\b|\bBUILD FAILURE\b|\b\d+ errors?\b|"
                         r"\berror\b", re.I)),
    ("failure", re.compile(r"\bFAIL(?:ED|URE|S)?\b|\bfailed\b|\bfailure\b|\bfailing\b|"
                           r"\bfailures\b|\btest(?:s)? failed\b", re.I)),
    ("exit", re.compile(r"\bexit(?:ed)?(?: with)? (?:code|status)[: ]+[1-9]\d*|"
                        r"\bexited with [1-9]\d*\.?\s*$|"
                        r"\bnon-zero exit\b|\breturned non-zero\b|\bError \d+\s*$", re.I)),
    ("warning", re.compile(r"\[WARN(?:ING)?\]|\bwarning\b|^\s*WARN\b|\bWARN:|"
                           r"\bdeprecated\b", re.I)),
)
_NEEDS: dict[str, tuple[str, ...]] = {
    "exception": ("exception", "error", "panic"),
    "error": ("error", "fatal", "npm err!", "command not found", "no such file or directory",
              "permission denied", "segmentation fault", "aborted", "compilation terminated",
              "build failure", "no space left on device"),
    "exit": ("exit", "non-zero", "error"),
    "warning": ("warn", "deprecated"),
}
"""Lowercase words of which every branch of a rule needs one (a rule without them is skipped:
the same result, without running a long case-insensitive alternation on every line)."""
_E_PREFIX = re.compile(r"\s*E\s{2,}", re.I)
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_LOOKALIKE = re.compile(r"-Werror|-Wno-error|--fail-fast|fail_fast|errorprone|error_prone|"
                        r"\bno errors?\b|\bwithout errors?\b|\berror[-_]?(?:log|page|handler|"
                        r"code|msg|message)s?\b|\bfailsafe\b", re.I)


@dataclass(frozen=True, kw_only=True, slots=True)
class Hit:
    """One line that matters."""

    number: int
    """1-based line number in the whole output."""
    text: str
    """The line (cut to the scanner's per-line cap; decoded with replacement characters)."""
    length: int
    """Full length of the line in UTF-8 bytes."""
    kind: str
    """``error``, ``failure``, ``exception``, ``traceback``, ``exit`` or ``warning``."""

    @property
    def severity(self) -> int:
        return SEVERITY[self.kind]


def classify_line(line: str) -> str | None:
    """The kind of a line that matters, or None for ordinary lines and look-alikes.

    Terminal colour codes are ignored (``\x1b[1;31mERROR\x1b[m`` is ``ERROR``).
    """
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    low = line.lower()
    if "0" in line and _ZERO_COUNTS.search(line) and not _NONZERO_COUNTS.search(line):
        return None
    stripped = _LOOKALIKE.sub("", line) if ("error" in low or "fail" in low) else line
    if stripped is not line:
        low = stripped.lower()
    for kind, pattern in _RULES:
        need = _NEEDS.get(kind)
        if need is not None and not any(n in low for n in need) and \
                not (kind == "error" and _E_PREFIX.match(stripped)):
            continue  # none of the words any branch of this rule needs: it cannot match
        if pattern.search(stripped):
            return kind
    return None


def select_hits(hits: Iterable[Hit], *, exclude: Iterable[range] = (), limit: int) -> list[Hit]:
    """The hits a digest shows, at most ``limit``, in line order.

    Hits outside the ``exclude`` ranges are grouped into clusters of consecutive lines (a
    stack trace, a compiler message with its notes). Clusters are ranked by their most
    severe line, and among equals taken alternately from the start and the end of the output
    (the first error is often the cause, the last one what failed the run). Lines are taken
    round-robin — the first line of every cluster, then the second … — so one long trace
    cannot crowd out a second error.
    """
    excluded = list(exclude)
    pool = sorted((h for h in hits if not any(h.number in r for r in excluded)),
                  key=lambda h: h.number)
    clusters: list[list[Hit]] = []
    for hit in pool:
        if clusters and hit.number - clusters[-1][-1].number <= 1:
            clusters[-1].append(hit)
        else:
            clusters.append([hit])
    clusters = _ends_first(clusters)
    chosen: list[Hit] = []
    depth = 0
    while len(chosen) < limit and any(depth < len(c) for c in clusters):
        for cluster in clusters:
            if depth < len(cluster) and len(chosen) < limit:
                chosen.append(cluster[depth])
        depth += 1
    return sorted(chosen, key=lambda h: h.number)


def _ends_first(clusters: list[list[Hit]]) -> list[list[Hit]]:
    """Clusters by severity (highest first); within a severity: first, last, second, …"""
    out: list[list[Hit]] = []
    for severity in sorted({max(h.severity for h in c) for c in clusters}, reverse=True):
        group = [c for c in clusters if max(h.severity for h in c) == severity]
        lo, hi = 0, len(group) - 1
        while lo <= hi:
            out.append(group[lo])
            if hi != lo:
                out.append(group[hi])
            lo, hi = lo + 1, hi - 1
    return out
