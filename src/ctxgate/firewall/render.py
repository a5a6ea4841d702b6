"""Digest value types and the parts every digest form shares: header, warning, drill-down.

:mod:`ctxgate.firewall.digest` builds the forms (lines, chars, JSON, binary) on top of
:class:`Renderer`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from ctxgate.firewall.policy import FirewallPolicy
from ctxgate.firewall.scan import ScanResult

__all__ = ["GREP_MATTERS", "Digest", "DigestContext", "Renderer"]

GREP_MATTERS = "error|fail|exception|traceback|panic|fatal|caused by|warn"
"""The regular expression the digest suggests for finding lines that matter (with ``-i``)."""

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True, kw_only=True, slots=True)
class DigestContext:
    """Facts about the output that are not in its bytes."""

    tool: str
    archive_id: str
    """The id shown to the model (the archive's short id)."""
    expires_at: float | None = None
    """Epoch seconds of expiry; None when pinned (never expires)."""
    command: str | None = None
    exit_code: int | None = None
    tokens: str = ""
    """Token description from the meter (``"3,012 tokens (o200k_base)"``)."""
    reason: str = "digest"
    detail: str = ""
    notes: tuple[str, ...] = ()
    """Extra header lines (``"killed after the 5 s timeout"``)."""
    expand_tool: str = "expand"
    """Name of the MCP expand tool in the tool-call form."""
    group_by_file: bool = False
    """The output is search results (``path:line:text``): list the match count per file."""
    archived: bool = True
    """False when the archive could not store the output (no drill-down is offered)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Digest:
    """A digest and what it left out."""

    text: str
    form: str
    """``lines``, ``chars``, ``json``, ``jsonl``, ``json+trailing`` or ``binary``."""
    archive_id: str
    omitted_lines: tuple[tuple[int, int], ...] = ()
    """Inclusive line ranges not shown at all."""
    hits_shown: int = 0

    @property
    def size_bytes(self) -> int:
        """UTF-8 bytes of :attr:`text`."""
        return len(self.text.encode("utf-8"))


def _size(lines: list[str]) -> int:
    return len("\n".join(lines).encode("utf-8"))


def _clean(text: str) -> str:
    return _CONTROL.sub("\ufffd", _ANSI.sub("", text.replace("\r\n", "\n"))).replace("\r", "")


def _expiry(ts: float | None) -> str:
    if ts is None:
        return "pinned (never expires)"
    return "expires " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts))


class Renderer:
    """Shared parts of every digest form: header, warning, drill-down, cuts."""

    def __init__(self, scan: ScanResult, ctx: DigestContext, policy: FirewallPolicy):
        self.scan = scan
        self.ctx = ctx
        self.policy = policy
        self.id = ctx.archive_id

    # ---------------------------------------------------------------- shared parts

    def header(self, *, binary: bool = False) -> list[str]:
        """Metadata lines: facts, archive id and expiry with the decision, command, notes."""
        s, c = self.scan, self.ctx
        facts = [f"{c.tool} output", f"{s.total_bytes:,} bytes"]
        if binary:
            facts.append("binary")
        else:
            facts.append(f"{s.lines:,} lines")
            if c.tokens:
                facts.append(c.tokens)
        if c.exit_code is not None:
            facts.append(f"exit {c.exit_code}")
        where = (f"archive id {self.id}, {_expiry(c.expires_at)}" if c.archived
                 else "not archived")
        out = ["[ctxgate digest: " + ", ".join(facts) + "]",
               f"[{where}; {c.reason}: {c.detail}]" if c.detail else f"[{where}; {c.reason}]"]
        if c.command:
            out.append("$ " + self.cut(_clean(c.command), 300))
        out.extend(f"[{n}]" for n in c.notes)
        return out

    def warning(self) -> list[str]:
        s = self.scan
        if s.longest_line < self.policy.long_line_bytes:
            return []
        return [f"! longest line: {s.longest_line:,} bytes (line {s.longest_line_number:,}); "
                f"{s.long_lines:,} line(s) of {s.long_line_threshold:,}+ bytes: read them with "
                "--bytes OFFSET:LENGTH (JSON: --json POINTER, --keys)"]

    def drill(self, selectors: list[tuple[str, str]], *, compact: bool) -> list[str]:
        """Drill-down lines: each selector as a CLI line, then all of them as tool calls."""
        if not self.ctx.archived:
            return ["--- no drill down: the output is not archived ---"]
        if compact:
            selectors = selectors[:2]
        out = ["--- drill down ---"]  # the id is in the header and in every command
        out += [f"ctxgate expand {self.id} {cli}" for cli, _ in selectors]
        # the first call whole; the others with the same tool and id written "…" (each
        # repeat cost ~12 tokens), the keyword pattern named from its CLI line (issue 11)
        calls = [f'{self.ctx.expand_tool}(id="{self.id}", {_short_mcp(mcp)})' if k == 0
                 else f"(…, {_short_mcp(mcp)})" for k, (_, mcp) in enumerate(selectors)]
        out.append("MCP: " + " · ".join(calls))
        return out

    def cut(self, text: str, max_bytes: int, full_len: int | None = -1) -> str:
        """``text`` cut to ``max_bytes`` UTF-8 bytes with a marker naming what was cut.

        ``full_len`` is the line's full length in bytes; ``None`` when it is unknown (the
        line runs past what the scanner kept); ``-1`` means ``text`` is the whole line.
        """
        raw = text.encode("utf-8")
        if full_len is not None and full_len < 0:
            full_len = len(raw)
        if full_len is not None and full_len <= max_bytes and len(raw) <= max_bytes:
            return text
        kept = raw[:max_bytes].decode("utf-8", "ignore")
        if full_len is None:
            return f"{kept}…[line continues]"
        return f"{kept}…[+{max(0, full_len - len(kept.encode('utf-8'))):,} bytes]"

    def text_of(self, raw: bytes) -> str:
        return _clean(raw.decode("utf-8", "replace"))


_MCP_GREP = f'grep="{GREP_MATTERS}"'


def _short_mcp(mcp: str) -> str:
    """MCP arguments with the keyword pattern, already spelt on its CLI line just above,
    named instead of repeated (it is the longest part of the drill-down; issue 11)."""
    if _MCP_GREP not in mcp:
        return mcp
    return mcp.replace(_MCP_GREP, "grep=<the --grep pattern above>")
