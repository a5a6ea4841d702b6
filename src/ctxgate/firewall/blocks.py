"""Failure blocks: the contiguous regions of an output that explain a failure.

A digest that lists scattered "lines that say error" misses what a reader needs: the stack
frames under an exception, the ``Expected … / Actual …`` pair, the compiler's notes, the test
that owns a failure, and the summary (``Tests run: …, Failures: 1``, ``BUILD FAILURE``). This
module finds those regions as windows of consecutive lines.

Two parts:

* :class:`WindowCollector` runs inside the streaming scanner. For every line that matters
  (an error, failure, exception, traceback or exit line; not warnings) it keeps the
  surrounding lines — a few before, more after — merging overlapping windows. Memory is
  bounded: the first :data:`KEEP_FIRST` and the last :data:`KEEP_LAST` windows, each at most
  :data:`WINDOW_MAX_LINES` lines of at most :data:`LINE_KEEP_BYTES` bytes.
* :func:`find_blocks` (at digest time) reads the kept windows plus the output's tail, gives
  every line a role (signal, continuation, boilerplate, other) and grows blocks from signal
  lines through their continuations, attaches the owning test or target line above, trims
  trailing boilerplate (cache uploads, cleanup, ``Finished: FAILURE``), and labels each block
  (``java stack trace``, ``python traceback``, ``compiler errors``, ``test failure``,
  ``build summary`` …). :func:`pick_blocks` then spends a byte budget on few of them: the
  last failing block first, then the first one, then the rest by severity.

Everything is a pure function of the output's bytes: the same output gives the same blocks.
"""

from __future__ import annotations

import functools
import re
from collections import deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from ctxgate.firewall.errorlines import _ANSI, KEYWORDS, SEVERITY, classify_line

__all__ = ["Block", "KnownLine", "WindowCollector", "failure_headers", "find_blocks",
           "in_passing_tests", "is_boilerplate", "last_lines", "opens_report", "pick_blocks",
           "report_header", "report_owner", "strong_line", "visible"]

BEFORE_LINES = 6
"""Lines kept above a line that matters (the test name, the command that failed)."""
AFTER_LINES = 48
"""Lines kept below a line that matters (frames, notes, expected/actual)."""
WINDOW_MAX_LINES = 240
"""A window grows to at most this many lines; a longer region starts a new window."""
LINE_KEEP_BYTES = 512
"""Bytes kept of each window line (its full length is kept too)."""
END_KEEP_BYTES = 48
KEEP_FIRST = 4
KEEP_LAST = 8
KEEP_REPORTS = 4
"""Windows that open with a test-failure report (``--- FAIL:``, ``*** FAILED ***``, ``1) X::y``)
kept besides the first and the last ones, when the middle of a long log would drop them."""
_MIN_SEVERITY = 2


@dataclass(frozen=True, slots=True)
class KnownLine:
    """One line whose text the digest has: number, text (cut), full length in bytes."""

    number: int
    raw: bytes
    length: int
    end: bytes = b""
    """The line's last :data:`END_KEEP_BYTES` bytes when ``raw`` is cut (how a long command
    line ends: ``… exited with 1.``)."""


def last_lines(suffix: bytes, total_bytes: int, lines: int, *, n: int, keep: int,
               after: int = 0) -> list[KnownLine]:
    """The last ``n`` whole lines after line ``after`` found in ``suffix`` (the scanner's
    kept tail of an output of ``total_bytes`` bytes and ``lines`` lines), each cut to
    ``keep`` bytes; a line that starts before ``suffix`` does is left out."""
    parts = suffix.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    whole = len(suffix) == total_bytes
    out: list[KnownLine] = []
    for j, raw in enumerate(reversed(parts)):
        number = lines - j
        if number <= after or len(out) >= n or (j == len(parts) - 1 and not whole):
            break
        out.append(KnownLine(number=number, raw=raw[:keep], length=len(raw),
                             end=raw[-END_KEEP_BYTES:] if len(raw) > keep else b""))
    out.reverse()
    return out


class _Window:
    __slots__ = ("lines", "next_pos", "want_to")

    def __init__(self) -> None:
        self.lines: list[KnownLine] = []
        self.want_to = 0  # last line number this window wants
        self.next_pos = 0  # offset in the current block of the line after the last kept one

    @property
    def last(self) -> int:
        return self.lines[-1].number if self.lines else 0


class WindowCollector:
    """Keeps the lines around lines that matter, block by block, in bounded memory.

    The scanner calls :meth:`begin` with each block (cut at a newline) and the number of its
    first line, :meth:`hit` for each line that matters in it (offset of the line start, line
    number, severity) in line order, then :meth:`end`.
    """

    def __init__(self) -> None:
        self._first: list[list[KnownLine]] = []
        self._last: deque[list[KnownLine]] = deque(maxlen=KEEP_LAST)
        self._reports: list[list[KnownLine]] = []
        self._open: _Window | None = None
        self._carry: list[KnownLine] = []  # the last lines of the previous block
        self._block = b""
        self._first_no = 1
        self._dropped = 0

    def begin(self, block: bytes, first_no: int) -> None:
        self._block = block
        self._first_no = first_no
        w = self._open
        if w is not None:
            if w.want_to >= first_no and w.last == first_no - 1:
                w.next_pos = 0  # the window runs on into this block
                self._take(w, first_no, w.want_to)
            else:
                self._close()

    def hit(self, start: int, number: int, severity: int) -> None:
        if severity < _MIN_SEVERITY:
            return
        w = self._open
        lo = max(1, number - BEFORE_LINES)
        if w is not None and lo <= w.want_to + 1 and number - w.lines[0].number < WINDOW_MAX_LINES:
            w.want_to = max(w.want_to, number + AFTER_LINES)
            if w.last < number and w.last < self._first_no:  # nothing kept from this block
                w.next_pos = 0
                self._take(w, self._first_no, w.want_to)
            elif w.last < w.want_to:
                self._take(w, w.last + 1, w.want_to)
            return
        self._close()
        w = self._open = _Window()
        w.want_to = number + AFTER_LINES
        if lo < self._first_no:  # lines above the hit from the previous block
            w.lines.extend(k for k in self._carry if k.number >= lo)
        pos, n = start, number
        above: list[KnownLine] = []
        while n > max(lo, self._first_no) and pos > 0:
            prev = self._block.rfind(b"\n", 0, pos - 1) + 1
            n -= 1
            above.append(_known(self._block, prev, pos - 1, n))
            pos = prev
        w.lines.extend(reversed(above))
        w.next_pos = start
        self._take(w, number, w.want_to)

    def end(self, newlines: int | None = None) -> None:
        """The block is done: keep its last lines for the next block's windows.

        ``newlines``: the block's newline count, when the caller has it (saves a pass)."""
        block = self._block
        carry: list[KnownLine] = []
        end = len(block) - 1 if block.endswith(b"\n") else len(block)
        count = block.count(b"\n") if newlines is None else newlines
        n = self._first_no + count - (1 if block.endswith(b"\n") else 0)
        pos = end
        while len(carry) < BEFORE_LINES and pos >= 0:
            start = block.rfind(b"\n", 0, pos) + 1
            carry.append(_known(block, start, pos, n))
            n -= 1
            if start == 0:
                break
            pos = start - 1
        carry.reverse()
        self._carry = carry
        self._block = b""

    def windows(self) -> list[list[KnownLine]]:
        """The kept windows in line order (call once the scan is done)."""
        self._close()
        return list(self._first) + self._reports + list(self._last)

    @property
    def dropped(self) -> int:
        """Windows between the first and the last ones that were not kept."""
        return self._dropped

    # ------------------------------------------------------------------ internals

    def _close(self) -> None:
        w, self._open = self._open, None
        if w is None or not w.lines:
            return
        if len(self._first) < KEEP_FIRST:
            self._first.append(w.lines)
        else:
            if len(self._last) == self._last.maxlen:
                old = self._last[0]
                kept = self._reports[-1] if self._reports else None
                if len(self._reports) < KEEP_REPORTS and opens_report(old):
                    self._reports.append(old)  # a test's failure report: kept, not dropped
                elif kept is not None and len(kept) >= WINDOW_MAX_LINES and \
                        old[0].number == kept[-1].number + 1:
                    # the report window was cut at its size cap: its report goes on here
                    self._reports[-1] = kept + old[:_REPORT_MAX]
                    self._dropped += 1
                else:
                    self._dropped += 1
            self._last.append(w.lines)

    def _take(self, w: _Window, n: int, to: int) -> None:
        """Append lines ``n``..``to`` from the current block, starting at ``w.next_pos``."""
        block = self._block
        to = min(to, w.lines[0].number + WINDOW_MAX_LINES - 1 if w.lines else to)
        pos = w.next_pos
        while n <= to and pos < len(block):
            nl = block.find(b"\n", pos)
            end = len(block) if nl == -1 else nl
            w.lines.append(_known(block, pos, end, n))
            n += 1
            pos = len(block) if nl == -1 else nl + 1
        w.next_pos = pos


def opens_report(lines: list[KnownLine]) -> bool:
    """Whether a window holds a line that heads a test-failure report (one bytes search over
    the window for what every header holds; only the lines it finds are read further)."""
    blob = b"\n".join(x.raw for x in lines)
    pos = 0
    while (m := _REPORT_BYTES.search(blob, pos)) is not None:
        start = blob.rfind(b"\n", 0, m.start()) + 1
        end = blob.find(b"\n", m.start())
        end = len(blob) if end == -1 else end
        k = blob.count(b"\n", 0, start)
        if report_owner(_text(lines[k])) is not None:
            return True
        pos = end + 1
    return False


_REPORT_BYTES = re.compile(rb"FAIL|^ERROR: |not ok |\*\*\*|<<<|____| stdout ----|\xe2\x9c[\x95-\x97]|\xc3\x97 |"
                           rb"\xe2\x97\x8f |#test|::|:\r?$", re.M)
"""What most lines :data:`_REPORT` matches hold (✕ ✖ ✗ × ●: their UTF-8; a Mocha title ends
with a colon)."""


def _known(block: bytes, start: int, end: int, number: int) -> KnownLine:
    raw = block[start:min(end, start + LINE_KEEP_BYTES)]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    tail = block[max(start + LINE_KEEP_BYTES, end - END_KEEP_BYTES):end] \
        if end - start > LINE_KEEP_BYTES else b""
    return KnownLine(number=number, raw=raw, length=end - start, end=tail)


# ---------------------------------------------------------------------------- analysis


@dataclass(frozen=True, slots=True)
class Block:
    """A failure region: consecutive lines ``first``..``last`` with a label."""

    first: int
    last: int
    label: str
    severity: int
    lines: tuple[KnownLine, ...]
    ends_step: bool = False
    """The block holds the last line that ends a failed step (what failed the run)."""
    owner: str = ""
    """The test a test-failure report in the block names (``TestFoo/bar``, ``Class#test_x``)."""
    core: tuple[int, int] | None = None
    """The block's own first and last lines when the digest shows it with lines around it."""
    strong: bool = True
    """The block has a strong line (:func:`strong_line`); False for application log lines
    alone (a passing test's ``ERROR … retrying``)."""
    headers: tuple[int, ...] = ()
    """Numbers of the lines in the block that head a test's failure report
    (:func:`failure_headers`)."""

    @property
    def size(self) -> int:
        return self.last - self.first + 1


_PREFIX = re.compile(
    r"^(?:[^\t\n]+\t){1,3}(?=\d{4}-\d\d-\d\dT)"  # GitHub Actions: job<TAB>step<TAB>time
    r"|^\s*\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?\s"  # an ISO timestamp
)
_FRAME = re.compile(
    r"^\s+at \S|^\s*\.\.\. \d+ (?:more|common frames)|^\s*Caused by\b|^\s*Suppressed:|"
    r"^\s*File \".*\", line \d+|^\s+\S+\.(?:go|rs|py|js|ts|java|kt|c|cc|cpp|h):\d+|"
    r"^goroutine \d+|^\s+at .*\(.*:\d+:\d+\)|^\s*\d+: 0x[0-9a-f]+|^\s*\d+:\s+\S+::|"
    r"^\s+-->\s|^\s*\|\s|^\s*\^|^\s*=\s*(?:note|help):|^\s*(?:note|help):|"
    r"^\s*(?:symbol|location|required|found|reason)\s*:|"
    r"^\s*(?:Expected|Actual|expected|actual|but was|but found|Received|Diff)\b|"
    r"^\s*[-+]\s{0,3}\S|^\s*E\s{2,}|^\s*>\s+\S|^\s*\[ERROR\]|^\s*\[FAIL|^npm ERR!"
)
_SUMMARY = re.compile(
    r"\bTests? run:.*(?:Failures|Errors): *[1-9]|(?-i:\bTests run:.*FAILURE)|\b\d+ (?:failed|errors?)\b|"
    r"\bBUILD (?:FAILURE|FAILED)\b|\bFAILURE: Build failed|\bFailed to execute goal\b|"
    r"\bTests (?:in error|failed)\b|\bFailed tests:|\b(?:FAIL|FAILED)\s+\S|"
    r"^=+ .*\b(?:failed|error)|\btest result: FAILED|\bexit(?:ed)? (?:with )?(?:code|status) [1-9]|"
    r"\bProcess completed with exit code [1-9]|\bWhat went wrong|\bExecution failed for task|"
    r"\bThere were failing tests|\bCOMPILATION ERROR\b|\bcompilation failed|\bTests FAILED",
    re.I,
)
_OWNER = re.compile(
    r"\bRunning \S+|\bTests run:|<<< (?:FAILURE|ERROR)!|\bFAILED\b|^--- FAIL:|^_{3,} .* _{3,}$|"
    r"^\s*def test|\bTest\w* > \w|> Task \S+|^=+ (?:FAILURES|ERRORS) =+|\bERROR in\b|"
    r"^\s*(?:●|✕|✖|✗|×) |\bpanicked at\b|^panic:|^thread '.*'(?: \(\d+\))? panicked",
)
_REPORT = re.compile(
    r"^\s*--- FAIL: (?P<go>\S+)"  # go test
    r"|^(?:\[info\] )?- (?P<scala>.+?) \*\*\* FAILED \*\*\*"  # ScalaTest
    r"|^\s*(?P<scala2>\S.*?) \*\*\* FAILED \*\*\*"
    r"|^(?:\[ERROR\] )?(?P<surefire>\S+?\(\S+\)|\S+)(?: --)?\s+Time elapsed: .*<<< "
    r"(?:FAILURE|ERROR)!"  # Maven Surefire (3.x: "[ERROR] Cls.method -- Time elapsed: …")
    r"|^\s*(?P<gradle>[\w$.]+ > .+?) FAILED\s*$"  # Gradle test task
    r"|^\s*\d+\) (?P<numbered>[\w\\$.]+(?:::|#)\w.*?)\s*$"  # PHPUnit, minitest
    r"|^\s*\d+\) (?P<mocha>\S.*):\s*$"  # Mocha, minitest: "1) Failure:"
    r"|^(?P<minitest>[\w:]+#test\w*)(?: \[.*\])?:\s*$"  # minitest: Class#test_x [file:line]:
    r"|^_{3,} (?P<pytest>\S.*?) _{3,}\s*$"  # pytest
    r"|^FAILED (?P<pytest2>\S+::\S+)"
    r"|^---- (?P<rust>\S+) stdout ----"  # cargo test
    r"|^\s*(?:✗|✕|✖|×|●) (?P<jest>\S.*?)\s*$"  # Jest, Quick, node's spec reporter
    r"|^\s*not ok \d+ - (?P<tap>\S.*?)(?:\s+# .*)?\s*$"  # TAP (node --test, prove, bats)
    r"|^(?:FAIL|ERROR): (?P<unittest>[\w.\[\]-]+) \(\S[^)]*\)\s*$"  # unittest, C runners
)
"""A line that heads one test's failure report, naming the test."""


def report_owner(text: str) -> str | None:
    """The test a test-failure report header names (``--- FAIL: TestX``, ``1) A::b``,
    ``name *** FAILED ***``, ``x(Cls)  Time elapsed: … <<< FAILURE!``, ``___ test_x ___``,
    ``---- name stdout ----``, ``✕ name``), or None for any other line."""
    if len(text) > _ROLE_BYTES:
        text = text[:_ROLE_BYTES]
    m = _REPORT.search(text)
    if m is None:
        return None
    return next((v for v in m.groupdict().values() if v), "")[:120]


_BOILER_START = re.compile(
    r"\s*$|\s*\[(?:INFO|ERROR|WARNING)\]\s*-*\s*$|\s*\[INFO\] (?:Total time|Finished at|"
    r"Final Memory|-{8,})|\[command\]|\s*git version|Finished: |Done\. Your build exited|"
    r"Archiving artifacts|##\[(?:group|endgroup)\]|Temporarily overriding HOME|"
    r"Adding repository directory|\* Get more help|Get more help|Notifying|Sending e-?mails?|"
    r"GitHub Issue Notifier|Recording test results|"
    r"\s*\[INFO\] \S.*? \.{3,} (?:SUCCESS|SKIPPED)\b"  # Maven's reactor summary: modules that passed
)
"""Boilerplate recognised by how the line starts (``match``: cheap)."""
_BOILER_ANY = ("Post job cleanup", "Cleaning up orphan", "Terminate orphan process",
               "WS-CLEANUP", "cache upload", "Uploading cache", "uploading cache",
               "Uploading artifact", "uploading artifact", "Saving cache", "safe.directory",
               "extraheader", "core.sshCommand", "actionable task")
"""Boilerplate recognised by a phrase anywhere in the line."""
_PY_TRACEBACK = "Traceback (most recent call last)"
_PY_RAISED = re.compile(r"[A-Za-z_][\w.]*(?::\s|$)")
"""The line that ends a Python traceback, ``module.ExceptionName: message`` at column 0
(``decimal.InvalidOperation: […]``: no keyword says it is an error)."""
_DIAGNOSTIC = re.compile(r"\S+:\d+(?::\d+)?:? warning\b|\[WARNING\] \S+:\[\d+,\d+\] |"
                         r"warning(?:\[\w+\])?: ", re.I)
"""A compiler's or linter's warning diagnostic (``file.c:3:5: warning: …``, javac's
``[WARNING] /F.java:[3,5] …``, rustc's ``warning[E…]: …``): it ends an error block it follows,
with the source excerpt under it (``  403 | …``, ``^~~~``) that would otherwise extend the
block from warning to warning."""
_SUMMARY_NEEDS = ("fail", "error", "test", "exit", "what went wrong")
_MAX_GAP = 2
_KEYWORDS = tuple(k.decode() for k in KEYWORDS)
_ROLE_BYTES = 300
"""Bytes of a line its role and label are read from."""
"""Ordinary lines a block may span between two of its lines."""


def visible(raw: bytes) -> bytes:
    """What a terminal shows of a line: the text after its last carriage return (CI runners
    write ``travis_time:end:…\\r\\x1b[0KThe command … exited with 1.``; progress bars redraw
    with ``\\r``), without a line-ending ``\\r``."""
    if raw.endswith(b"\r"):
        raw = raw.rstrip(b"\r")
    cr = raw.rfind(b"\r")
    return raw if cr == -1 else raw[cr + 1:]


def _text(line: KnownLine) -> str:
    t = visible(line.raw)[:_ROLE_BYTES].decode("utf-8", "replace")
    if "\x1b" in t:
        t = _ANSI.sub("", t)
    return _PREFIX.sub("", t, count=1)


@functools.lru_cache(maxsize=8192)
def _role(text: str) -> tuple[str, int]:
    """(role, severity): ``signal``, ``summary``, ``cont``, ``boiler`` or ``other``.

    Memoised: a line's role is asked for when blocks are grown, labelled and ordered."""
    if _BOILER_START.match(text) or any(p in text for p in _BOILER_ANY):
        return "boiler", 0
    if report_owner(text) is not None:
        return "signal", 3
    low = text.lower()
    kind = classify_line(text) if any(k in low for k in _KEYWORDS) else None
    sev = SEVERITY.get(kind, 0) if kind else 0
    if any(k in low for k in _SUMMARY_NEEDS) and _SUMMARY.search(text):
        return "summary", max(sev, 3)
    if kind == "frame":
        return "cont", sev
    if sev >= _MIN_SEVERITY:
        return "signal", sev
    if kind == "warning" and _DIAGNOSTIC.match(text):
        return "warn", sev
    if _FRAME.search(text):
        return "cont", 0
    return "other", 0


def report_header(line: KnownLine) -> bool:
    """Whether a line heads a test's failure report (:func:`report_owner` of its text)."""
    return report_owner(_text(line)) is not None


def strong_line(line: KnownLine) -> bool:
    """Whether a line says what failed on its own: a test report's header, a summary, or an
    error signal that is not an application's log line (``2023-… [main] ERROR x - retrying``
    is what passing tests print too)."""
    text = _text(line)
    if _role(text)[0] not in ("signal", "summary"):
        return False
    # (a report header is a signal; only an app-log-looking one needs the second regex)
    return not _APP_LOG.match(visible(line.raw).decode("utf-8", "replace")) \
        or report_owner(text) is not None


_APP_LOG = re.compile(r"\s*\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[.,\d]*Z?\s+(?:\[[^\]]*\]\s+)?"
                      r"(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|SEVERE|FATAL)\b")
"""An application's log line: timestamp, optional [thread], level."""


def is_boilerplate(line: KnownLine) -> bool:
    """Whether a line is CI boilerplate (cleanup, cache upload, blank, ``Finished:``)."""
    return _role(_text(line))[0] == "boiler"


def _segments(lines: list[KnownLine]) -> list[list[KnownLine]]:
    out: list[list[KnownLine]] = []
    for line in lines:
        if out and line.number == out[-1][-1].number + 1:
            out[-1].append(line)
        elif out and line.number <= out[-1][-1].number:
            continue
        else:
            out.append([line])
    return out


def find_blocks(known: list[KnownLine]) -> list[Block]:
    """Failure blocks among ``known`` lines (any order, duplicates allowed), in line order."""
    by_no: dict[int, KnownLine] = {}
    for line in known:
        by_no.setdefault(line.number, line)
    blocks: list[Block] = []
    ordered = [by_no[n] for n in sorted(by_no)]
    headers, passed = failure_headers(ordered)
    for seg in _segments(ordered):
        texts = [_text(x) for x in seg]
        roles = [("other", 0) if x.number in passed else _role(t)  # a passing test's
                 for x, t in zip(seg, texts, strict=True)]  # header is its output
        i = 0
        while i < len(seg):
            role, sev = roles[i]
            if role not in ("signal", "summary"):
                i += 1
                continue
            if seg[i].number in headers:  # one test's failure report, whole
                end = _report_end(texts, roles, i)
                blocks.append(Block(first=seg[i].number, last=seg[end].number, label="",
                                    severity=3, lines=tuple(seg[i:end + 1])))
                i = end + 1
                continue
            start = i
            end = i
            best = sev
            j = i + 1
            gap = 0
            indent = _indent(texts[i])
            soft = 0
            traceback = _PY_TRACEBACK in texts[i]
            while j < len(seg):
                r, s = roles[j]
                if r == "signal" and seg[j].number in headers:
                    break  # a test's failure report starts its own block
                traceback = traceback or _PY_TRACEBACK in texts[j]
                if r == "other" and traceback and _PY_RAISED.match(texts[j]) and \
                        _indent(texts[j - 1]) > 0:  # right after the last frame's code
                    r, s = "cont", 3  # a traceback's last line: the exception raised
                if r == "other" and _indent(texts[j]) > max(indent, 1) and soft < 8:
                    soft += 1  # indented under the failure: kept if the block goes on
                    j += 1
                    continue
                soft = 0
                if r == "warn":
                    break  # another diagnostic, a warning: what follows is its excerpt
                if r in ("signal", "summary", "cont"):
                    end = j
                    best = max(best, s)
                    gap = 0
                elif r == "boiler" and texts[j].strip() and gap == 0 and _is_sep(texts[j]):
                    gap += 1  # a separator line inside a block
                else:
                    gap += 1
                    if gap > _MAX_GAP:
                        break
                j += 1
            start = _owner_above(seg, texts, roles, start)
            blocks.append(Block(first=seg[start].number, last=seg[end].number,
                                label="", severity=best,
                                lines=tuple(seg[start:end + 1])))
            i = end + 1
    leads = _lead_ups(by_no)
    if leads:
        blocks = sorted([*blocks, *leads], key=lambda b: (b.first, b.last))
    return [b if b.label else Block(first=b.first, last=b.last, severity=b.severity,
                                    lines=b.lines, label=_label([_text(x) for x in b.lines]),
                                    ends_step=b.ends_step, owner=_owner(b.lines, headers),
                                    strong=any(strong_line(x) for x in b.lines),
                                    headers=tuple(x.number for x in b.lines
                                                  if x.number in headers))
            for b in _bridge(_merge(blocks, passed), by_no, passed)]


_REPORT_MAX = 60
"""Lines a test-failure report block spans at most (its header, message, diff and frames)."""


_PASSED = re.compile(r"\s*(?:✓|✔|√|ok \d|PASS\b|--- PASS:|\[info\] - (?!.*\*\*\* FAILED))")
"""A line that reports a passing test: the failure report above it has ended."""


def _report_end(texts: list[str], roles: list[tuple[str, int]], i: int) -> int:
    """Index of the last line of the test-failure report headed at ``i``: up to the next
    report header, a summary line, three blank or boilerplate lines in a row or
    :data:`_REPORT_MAX` lines."""
    end = i
    quiet = 0
    for j in range(i + 1, min(len(texts), i + _REPORT_MAX)):
        if report_owner(texts[j]) is not None or roles[j][0] == "summary" or \
                _PASSED.match(texts[j]) or texts[j].startswith(("[INFO] ", "[WARNING] ")) or \
                (texts[j].startswith("=") and _FAILING_SECTION.match(texts[j])):
            break  # (Maven's own log lines are never part of a test's report; nor is
            # pytest's next section, `=== warnings summary ===`)
        if roles[j][0] == "boiler":
            quiet += 1
            if quiet >= 3:
                break
            continue
        quiet = 0
        end = j
        if texts[j].strip() == "..." and texts[j].startswith(" "):
            break  # the end of a TAP report's YAML diagnostics
    return end


def _owner(lines: tuple[KnownLine, ...], headers: set[int]) -> str:
    for x in lines[:_REPORT_MAX]:
        if x.number in headers:
            return report_owner(_text(x)) or "?"
    return ""


_PASSING_SECTION = re.compile(r"^successes:\s*$|^=+ PASSES =+\s*$")
_FAILING_SECTION = re.compile(r"^failures:\s*$|^=+ [^=]+ =+\s*$")
"""A section of passing tests' output: cargo's ``successes:`` (``--show-output``), pytest's
``=== PASSES ===`` (``-rA``/``-rP``); any other such line (``failures:``, pytest's
``=== FAILURES ===``, ``=== warnings summary ===``) ends it."""


def failure_headers(lines: Sequence[KnownLine]) -> tuple[set[int], set[int]]:
    """Numbers of the lines (in line order) that head a test's failure report, leaving out
    those in a section of passing tests' output: ``cargo test -- --show-output`` prints
    ``---- t stdout ----`` for every passing test between two ``successes:`` lines (the second
    lists their names), and the failures' reports between two ``failures:`` lines; ``pytest
    -rA`` prints ``___ test_x ___`` for each passing test under ``=== PASSES ===``. A header
    is a passing one when the section line above it, or else the next one below it, opens
    passing tests' output (the lines may start inside the section).

    Returns the failure headers and the passing ones (neither starts a failure block, nor is
    joined to the one above)."""
    texts = [_text(x) for x in lines]
    marks = [(i, bool(_PASSING_SECTION.match(t))) for i, t in enumerate(texts)
             if t.startswith(("successes:", "failures:", "=")) and
             (_PASSING_SECTION.match(t) or _FAILING_SECTION.match(t))]
    out: set[int] = set()
    passed: set[int] = set()
    m = 0  # marks[:m] are above line i
    for i, text in enumerate(texts):
        while m < len(marks) and marks[m][0] < i:
            m += 1
        if report_owner(text) is None:
            continue
        if m:
            passing = marks[m - 1][1]
        else:
            passing = marks[m][1] if m < len(marks) else False
        (passed if passing else out).add(lines[i].number)
    return out, passed


_TERMINAL = re.compile(
    r"Process completed with exit code [1-9]|^The command \".*\" (?:exited|failed) with [1-9]|"
    r"marked build as fail|^make(?:\[\d+\])?: \*\*\* .*Error \d+|npm ERR! code ELIFECYCLE|"
    r"process didn't exit successfully|^error: (?:test failed|could not compile)|"
    r"\b(?:exited (?:with )?(?:code |status )?|exit (?:code|status):? )[1-9]\d*\.?\s*$|"
    r"^FAILURE: Build failed|"
    r"\bBUILD FAIL(?:URE|ED)\b|^FAIL(?:ED)?\s*$|^ERROR: Job failed|Command exited with",
    re.I,
)
"""A line that ends a failed step: the lines just above it are that step's last output."""
_COMMAND_ECHO = re.compile(r"^\$ \S|^##\[group\]Run |^\[command\]|^> Task :|^\+ \S|^Run ")
LEAD_UP_LINES = 24
"""Lines above the last line that ends a failed step shown with it (its output's end)."""
_TERMINAL_SCAN = 400


def _ends_failed_step(line: KnownLine) -> bool:
    text = _text(line)
    if _BOILER_START.match(text):
        return False
    if _TERMINAL.search(text):
        return True
    if line.end and text.startswith(("The command ", "Command ")):
        # a long command line cut by the scanner: how it ends says whether it failed
        end = line.end.decode("utf-8", "replace")
        return bool(_TERMINAL.search(_ANSI.sub("", end) if "\x1b" in end else end))
    return False


def _lead_ups(by_no: dict[int, KnownLine]) -> list[Block]:
    """The ends of the first and the last failed steps: the first and the last lines that end
    a failed step (exit code, "marked build as failure", ``make: *** … Error 1``), each with
    the lines above it, up to the command that ran (``$ cmd``, ``##[group]Run``) or
    :data:`LEAD_UP_LINES` lines, whatever their words. (A CI job that goes on after a failed
    step fails once more later: the first failure is often the cause, the last what ended it.)

    A failure need not say "error": ``flag provided but not defined`` is found here because
    it is the last thing the failed command printed."""
    numbers = sorted(by_no)
    late = numbers[-_TERMINAL_SCAN:]
    last = next((n for n in reversed(late) if _ends_failed_step(by_no[n])), None)
    if last is None:
        return []
    first = next(n for n in numbers if n == last or _ends_failed_step(by_no[n]))
    if first >= last - LEAD_UP_LINES:
        first = last
    out = []
    for end in sorted({first, last}):
        lines = [by_no[end]]
        n = end - 1
        while n in by_no and len(lines) <= LEAD_UP_LINES:
            lines.append(by_no[n])
            text = _text(by_no[n])
            if _COMMAND_ECHO.match(text) or report_owner(text) is not None:
                break  # the command that ran, or the first test failure it reported
            n -= 1
        lines.reverse()
        while len(lines) > 1 and not _text(lines[0]).strip():
            lines.pop(0)
        out.append(Block(first=lines[0].number, last=end, label="", severity=3,
                         lines=tuple(lines), ends_step=True))
    return out


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t")) if text.strip() else 0


def _is_sep(text: str) -> bool:
    return bool(re.match(r"^\s*(?:\[\w+\]\s*)?[-=_*]{8,}\s*$", text))


def _owner_above(seg, texts, roles, start: int) -> int:
    """Step up to the line naming the test or target that owns the block (at most 4 lines)."""
    best = start
    for k in range(start - 1, max(-1, start - 5), -1):
        if roles[k][0] == "boiler" and not texts[k].strip():
            continue
        if _OWNER.search(texts[k]):
            best = k
            break
        if roles[k][0] == "cont":
            best = k
            continue
        break
    return best


def _merge(blocks: list[Block], apart: set[int]) -> list[Block]:
    """Overlapping or adjacent blocks as one; a block that starts at a line of ``apart`` (a
    passing test's header) stays on its own."""
    out: list[Block] = []
    for b in blocks:
        if out and b.first <= out[-1].last + 1 and b.first not in apart:
            a = out[-1]
            lines = {x.number: x for x in a.lines + b.lines}
            merged = tuple(lines[n] for n in sorted(lines))
            out[-1] = Block(first=a.first, last=max(a.last, b.last), label="",
                            severity=max(a.severity, b.severity), lines=merged,
                            ends_step=a.ends_step or b.ends_step)
        else:
            out.append(b)
    return out


_LABELS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("python traceback", re.compile(r"Traceback \(most recent call last\)")),
    ("go panic", re.compile(r"^panic:|^goroutine \d+")),
    ("rust panic", re.compile(r"thread '.*'(?: \(\d+\))? panicked at")),  # Rust 1.9x: (id)
    ("java stack trace", re.compile(r"^\s+at [\w$.<>]+\(")),
    ("js stack trace", re.compile(r"^\s+at .*(?:\.[cm]?[jt]sx?|node:\S+|<anonymous>):\d+:\d+\)?$")),
    ("expected/actual", re.compile(r"\b(?:[Ee]xpected|but was|Actual|Received)\b")),
    ("compiler errors", re.compile(r"\.\w+:\[?\d+[,:]\d+\]?:? (?:error|cannot|incompatible)|"
                                   r"COMPILATION ERROR", re.I)),
    ("test failure", re.compile(r"Tests run:.*(?:Failures|Errors): *[1-9]|<<< (?:FAILURE|ERROR)!"
                                r"|\bFAILED\b|--- FAIL:|failing tests|\bFAIL\b|^\s*not ok \d")),
    ("build summary", re.compile(r"BUILD FAIL|Failed to execute goal|What went wrong|"
                                 r"FAILURE: Build failed|exit code [1-9]", re.I)),
)


_BRIDGE_LINES = 6
"""Blocks at most this many lines apart are shown as one window (the gap lines with them)."""


def _bridge(blocks: list[Block], by_no: dict[int, KnownLine], apart: set[int]) -> list[Block]:
    out: list[Block] = []
    for b in blocks:
        if out and b.first not in apart:
            a = out[-1]
            gap = range(a.last + 1, b.first)
            if len(gap) <= _BRIDGE_LINES and all(n in by_no for n in gap):
                lines = a.lines + tuple(by_no[n] for n in gap) + b.lines
                out[-1] = Block(first=a.first, last=b.last, label="",
                                severity=max(a.severity, b.severity), lines=lines,
                                ends_step=a.ends_step or b.ends_step)
                continue
        out.append(b)
    return out


def _label(texts: list[str]) -> str:
    texts = texts[:200] + texts[-50:] if len(texts) > 250 else texts
    found = [name for name, pattern in _LABELS if any(pattern.search(t) for t in texts)]
    return ", ".join(found[:2]) if found else "errors"


_RUNNING = re.compile(r"^(?:\[INFO\] )?Running ([\w$.]+)\s*$")


def in_passing_tests(blocks: list[Block], known: list[KnownLine],
                     ranges: Sequence[tuple[int, int]], classes: Collection[str]) -> list[Block]:
    """``blocks`` with those printed by test classes that passed made weak (``strong=False``:
    shown after every other block): blocks inside a passing class's lines (``ranges``), or
    below the ``Running Class`` line of a class in ``classes`` and above the next such line. A
    block with a test's failure report or a failed step's end is never weakened."""
    if not ranges and not classes:
        return blocks
    running = sorted((k.number, m.group(1)) for k in known
                     if b"Running " in k.raw[:16] and (m := _RUNNING.match(_text(k))))
    out = []
    for b in blocks:
        passed = False
        if b.strong and not b.owner and not b.ends_step:
            passed = any(lo <= b.first and b.last <= hi for lo, hi in ranges)
            if not passed and running:
                above = [(n, c) for n, c in running if n < b.first]
                below = [n for n, _c in running if n > b.first]
                passed = bool(above) and above[-1][1] in classes and \
                    (not below or b.last < below[0])
        out.append(replace(b, strong=False) if passed else b)
    return out


def pick_blocks(blocks: list[Block], total_lines: int) -> list[Block]:
    """Blocks in the order a budget should take them.

    The end of the last failed step (the block with the last "exited with 1", ``make: ***``,
    "marked build as failure" line: what failed the run; blocks after it are usually
    ``after_failure`` dumps and cleanup) first, then the end of the first failed step;
    without one, the last block with an error, exception or failure line. Then by weight: severity, size (a stack trace outweighs a
    one-line notice, up to 40 lines) and closeness to the end of the output (setup noise
    comes first in CI logs).
    """
    if not blocks:
        return []

    def weight(b: Block) -> float:
        late = b.last / max(1, total_lines)
        return b.severity * 10 + min(b.size, 40) + 20 * late

    step = [b for b in blocks if b.ends_step]
    strong = [b for b in blocks if b.severity >= 3]
    reports = [b for b in blocks if b.owner and not (step and b is step[-1])]
    ends = [step[-1], step[0]] if len(step) > 1 else step[-1:] or (strong or blocks)[-1:]
    if reports:  # the tests' failure reports before the first failed step's end
        picked = [r for r in (reports[0], reports[-1]) if r not in ends]
        ends = ends[:1] + list(dict.fromkeys(picked)) + ends[1:]
    # blocks of application log lines alone (a passing test's "ERROR … retrying") come last
    rest = sorted((b for b in blocks if b not in ends),
                  key=lambda b: (not b.strong, -weight(b), -b.last))
    return ends + rest
