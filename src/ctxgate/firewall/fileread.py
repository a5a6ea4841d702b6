"""Explicit file reads: a file's text, never digested, paged under a token ceiling.

:func:`read_file` is what the MCP ``read`` tool and ``ctxgate read`` call. A read asked for by
name is the content itself (not archived, not redacted, never a digest), but one page never
brings in more than ``max_tokens`` o200k_base tokens (default
:data:`~ctxgate.firewall.policy.FirewallPolicy.verbatim_max_tokens`, 25,000, about what a
harness's own read tool lets one call bring in); the page ends at a line boundary and says
which lines come next. Lines are 1-based and inclusive (``"A:B"``, ``"A:"``, ``"-50:"``,
``"N"``), as for ``expand``.

The file is read as a stream, one line at a time up to the page, so a 10 GB log costs only
its page (plus one pass counting its lines, capped at :data:`COUNT_MAX_BYTES`). Lines are
tokenized one by one only once the page's bytes could exceed the ceiling (every token is at
least one byte); the header gives the page's o200k_base count. A directory, a missing path, a permission error and a binary file are clear errors
(:class:`~ctxgate.errors.UsageError`) saying what to do instead; text in a legacy 8-bit
encoding is shown decoded (cp1252) with a note.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ctxgate.errors import UsageError

__all__ = ["COUNT_MAX_BYTES", "FileView", "read_file"]

COUNT_MAX_BYTES = 1 << 30
"""Bytes of a file whose lines are counted for the header; past it the total is a lower bound."""
_SNIFF = 8192
_LINE_MAX_BYTES = 64 * 1024
"""A line longer than this is cut in the page (the rest: read with a narrower tool)."""


@dataclass(frozen=True, kw_only=True)
class FileView:
    """One page of a file."""

    path: str
    text: str
    """The header line, the lines as they are in the file, and the ``next:`` line if any."""
    first: int
    """First line shown (1-based); ``last < first`` for an empty page."""
    last: int
    total_lines: int
    total_exact: bool
    tokens: int
    """o200k_base tokens of the lines shown (bytes when that already bounds them)."""
    next_lines: str | None = None
    """The ``lines`` argument of the next page, when the page stopped early."""
    notes: tuple[str, ...] = field(default_factory=tuple)


def read_file(path: str, *, lines: str | None = None, max_tokens: int = 25_000,
              tokenizer: str = "o200k_base", tool: str = "read", cli: bool = False) -> FileView:
    """Read a page of a text file (see the module docstring).

    ``tool`` names the MCP tool in the ``next:`` hint; ``cli`` writes it as a
    ``ctxgate read`` command instead.

    Raises:
        UsageError: missing path, a directory, no permission, a binary file, a bad line range
            or ``max_tokens < 1``.
    """
    from ctxgate.archive.selectors import parse_line_range, resolve_lines

    if max_tokens < 1:
        raise UsageError(f"{tool}: max_tokens must be >= 1, got {max_tokens}")
    rng = parse_line_range(lines) if lines is not None and str(lines).strip() else (None, None)
    f = _open(path, tool)
    with f:
        head = f.read(_SNIFF)
        legacy = _classify(head, path, tool)
        total, exact = _count_lines(f, head)
        first, last = resolve_lines(rng, total)
        f.seek(0)
        body, shown_last, tokens, cut_lines = _page(f, first, last, max_tokens, tokenizer)
    encoding = "cp1252" if legacy else "utf-8"
    text_lines = [b.decode(encoding, "replace") for b in body]
    notes: list[str] = []
    if legacy:
        notes.append("not UTF-8: shown decoded as cp1252 (Latin-1)")
    if cut_lines:
        notes.append(f"{cut_lines} line(s) longer than {_LINE_MAX_BYTES:,} bytes cut")
    more = shown_last < last
    next_lines = f"{shown_last + 1}:{'' if rng[1] is None else last}" if more else None
    of = f"{total:,}" if exact else f"at least {total:,}"
    if first > last:
        rows = f"no lines in {lines!r}"
    else:
        rows = f"lines {first:,}-{shown_last:,} of {of}"
    header = f"[{tool} {path}: {rows}; {tokens:,} tokens ({tokenizer})" + (
        "; " + "; ".join(notes) if notes else "") + "]"
    parts = [header, "".join(text_lines).rstrip("\n")] if text_lines else [header]
    if next_lines is not None:
        follow = (f"ctxgate read {_shell_quote(path)} --lines {next_lines}" if cli
                  else f"{tool}(path={_quote(path)}, lines=\"{next_lines}\")")
        parts.append(f"next: {follow} — this page stopped at the {max_tokens:,}-token ceiling")
    return FileView(path=path, text="\n".join(parts) + "\n", first=first, last=shown_last,
                    total_lines=total, total_exact=exact, tokens=tokens,
                    next_lines=next_lines, notes=tuple(notes))


def _shell_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _quote(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


def _open(path: str, tool: str):
    if not isinstance(path, str) or not path:
        raise UsageError(f"{tool}: 'path' is required (a file to read)")
    try:
        if os.path.isdir(path):
            raise UsageError(f"{tool}: {path} is a directory, not a file; list it with "
                             f"run(command=\"ls -la {path}\") and read one of its files")
        return open(path, "rb")  # noqa: SIM115 - closed by the caller's with
    except FileNotFoundError:
        raise UsageError(f"{tool}: {path}: no such file; check the path (relative paths start "
                         f"at {os.getcwd()})") from None
    except PermissionError:
        raise UsageError(f"{tool}: {path}: permission denied; this process cannot read it "
                         "(ask the user to change its permissions)") from None
    except IsADirectoryError:
        raise UsageError(f"{tool}: {path} is a directory, not a file") from None
    except OSError as exc:
        raise UsageError(f"{tool}: {path}: cannot open ({exc.strerror or exc})") from None


def _classify(head: bytes, path: str, tool: str) -> bool:
    """True for legacy 8-bit text; raises for binary content."""
    from ctxgate.firewall.scan import _legacy_8bit, _looks_binary

    if not _looks_binary(head):
        return False
    if _legacy_8bit(head):
        return True
    raise UsageError(f"{tool}: {path} is a binary file (NUL bytes or invalid UTF-8 in its "
                     "first 8 KiB), not text; inspect it with run(command=\"xxd FILE | head\") "
                     "or run(command=\"file FILE\")")


def _count_lines(f, head: bytes) -> tuple[int, bool]:
    seen = len(head)
    newlines = head.count(b"\n")
    last = head[-1:]
    while seen < COUNT_MAX_BYTES:
        block = f.read(1 << 20)
        if not block:
            return newlines + (1 if seen and last != b"\n" else 0), True
        newlines += block.count(b"\n")
        seen += len(block)
        last = block[-1:]
    return newlines, False


def _page(f, first: int, last: int, max_tokens: int,
          tokenizer: str) -> tuple[list[bytes], int, int, int]:
    """Lines ``first..`` up to ``last`` or the token ceiling: (lines, last shown, tokens, cut)."""
    out: list[bytes] = []
    n = 0
    used_bytes = 0
    counted = 0  # tokens of out[:counted_lines]
    counted_lines = 0
    cut = 0
    counter = None
    shown = first - 1
    for raw, was_cut in _lines(f):
        n += 1
        if n < first:
            continue
        if n > last:
            break
        cut += was_cut
        if used_bytes + len(raw) > max_tokens:  # bytes no longer bound the tokens: count
            if counter is None:
                counter = _counter(tokenizer)
            counted += sum(counter(x.decode("utf-8", "replace"))
                           for x in out[counted_lines:])
            counted_lines = len(out)
            cost = counter(raw.decode("utf-8", "replace"))
            if counted + cost > max_tokens and out:
                break
            counted += cost
            counted_lines += 1
        out.append(raw)
        used_bytes += len(raw)
        shown = n
        if counter is not None and counted >= max_tokens:
            break
    if counter is None:
        tokens = used_bytes  # every token is at least one byte: a bound, and small
        if out:
            tokens = _counter(tokenizer)(b"".join(out).decode("utf-8", "replace"))
    else:
        tokens = counted + sum(counter(x.decode("utf-8", "replace"))
                               for x in out[counted_lines:])
    return out, shown, tokens, cut


def _lines(f):
    """``(line, cut)`` for each line, in bounded memory: a line longer than
    :data:`_LINE_MAX_BYTES` is cut there (and the rest of it skipped)."""
    while True:
        raw = f.readline(_LINE_MAX_BYTES + 1)
        if not raw:
            return
        if len(raw) <= _LINE_MAX_BYTES or raw.endswith(b"\n"):
            yield raw, False
            continue
        rest = raw
        while rest and not rest.endswith(b"\n"):  # skip to the end of the long line
            rest = f.readline(1 << 20)
        yield raw[:_LINE_MAX_BYTES] + b"\n", True


def _counter(tokenizer: str):
    from ctxgate.tokens import get_encoder

    try:
        return get_encoder(tokenizer)
    except (ImportError, ValueError):
        return lambda text: len(text.encode("utf-8"))
