"""The deterministic digest that replaces a large output, under a hard byte budget.

Layout, top to bottom (metadata first, so a client that cuts the tail still sees it):

1. header: tool, bytes, lines, tokens (tokenizer named, or a labelled estimate), exit code,
   archive id, expiry, decision reason, the command, and notes (timeout, interrupt);
2. the excerpt that fits the shape — binary (type, sha256, hex, strings); a structural JSON
   preview (JSON, JSON Lines, JSON + trailing noise); head and tail characters for a few very
   long lines; otherwise head and tail lines, each line cut with its own ``…[+N bytes]``
   marker, and between them the omission map: the omitted line range and the lines that
   matter inside it (errors, failures, tracebacks, warnings) with their numbers, capped,
   plus how many more;
3. a warning when the longest line makes line paging useless;
4. drill-down commands keyed on the archive id, as ``ctxgate expand`` command lines and as
   expand tool calls (MCP), with the exact selectors that reach the omitted parts.

No input shape exceeds ``digest_max_bytes``: sections shrink (fewer lines, then fewer
characters) until the digest fits, and a last hard cut at a UTF-8 boundary guarantees it.
The digest is a pure function of its inputs: the same output and context give the same bytes.
"""

from __future__ import annotations

import re

from ctxgate.firewall.binary import detect_type, hex_view, printable_strings
from ctxgate.firewall.blocks import last_lines
from ctxgate.firewall.errorlines import select_hits
from ctxgate.firewall.jsonpreview import JsonPreview, json_preview, jsonl_preview_from_lines
from ctxgate.firewall.policy import FirewallPolicy
from ctxgate.firewall.render import (
    GREP_MATTERS,
    Digest,
    DigestContext,
    Renderer,
    _clean,
    _size,
)
from ctxgate.firewall.scan import ScanResult

__all__ = ["GREP_MATTERS", "Digest", "DigestContext", "build_digest"]

_FEW_LINES = 4
_SEARCH_LINE = re.compile(rb"^([^:\n]{1,512}?):(?:\d+[:-])?")
_LEGACY_NOTE = ("text is not UTF-8 (reads as Latin-1/cp1252): bytes that are not UTF-8 are "
                "shown as \ufffd; the archive keeps the exact bytes")
_CUT_MARK = "\n…[digest cut at {n} bytes: the budget]"


def build_digest(
    scan: ScanResult,
    ctx: DigestContext,
    policy: FirewallPolicy,
) -> Digest:
    """Render the digest of a scanned output within ``policy.digest_max_bytes``.

    The scan should be of the bytes as archived, i.e. already redacted (the pipeline scans
    the redactor's output), so excerpts are cut from redacted text, never redacted one line at
    a time, and their line numbers are the archive's. (A pass over the rendered digest would
    be wrong: it sees line-number gutters as text, ``5| `` after a BEGIN line as key body.)

    Args:
        scan: the streaming scan of the (redacted) output.
        ctx: archive id, tool, command, exit code, tokens, decision.
        policy: budgets and caps.

    The header's command line and notes are shown as given: the pipeline redacts them.
    """
    budget = policy.digest_max_bytes
    from dataclasses import replace

    if scan.legacy_8bit:
        ctx = replace(ctx, notes=(*ctx.notes, _LEGACY_NOTE))
    r = _Renderer(scan, ctx, policy)
    if scan.binary:
        digest = r.binary(budget)
    else:
        digest = r.json(budget) or (r.chars(budget) if scan.lines <= _FEW_LINES
                                    else r.lines(budget))
    return _hard_cap(digest, budget)


def _hard_cap(d: Digest, budget: int) -> Digest:
    raw = d.text.encode("utf-8")
    if len(raw) <= budget:
        return d
    mark = _CUT_MARK.format(n=budget).encode("utf-8")
    text = raw[: budget - len(mark)].decode("utf-8", "ignore") + mark.decode("utf-8")
    return Digest(text=text, form=d.form, archive_id=d.archive_id,
                  omitted_lines=d.omitted_lines, hits_shown=d.hits_shown)


class _Renderer(Renderer):
    """The digest forms: lines, chars, JSON, binary."""

    # ---------------------------------------------------------------- forms

    def lines(self, budget: int) -> Digest:
        from ctxgate.firewall.blockview import render_blocks

        if not self.ctx.group_by_file:
            blocks = render_blocks(self, budget)
            if blocks is not None:
                return blocks
        p = self.policy
        head = self._head_lines(p.digest_head_lines)
        tail = self._tail_lines(p.digest_tail_lines, after=head[-1][0] if head else 0)
        h, t, e = len(head), len(tail), p.digest_error_lines
        width = p.digest_line_max_bytes
        compact = budget < 2_500
        while True:
            out, omitted, shown = self._lines_body(head[:h], tail[len(tail) - t:], e, width)
            text = self._assemble(out, omitted, compact)
            if len(text.encode("utf-8")) <= budget or (h + t + e == 0 and width <= 32):
                return Digest(text=text, form="lines", archive_id=self.id,
                              omitted_lines=omitted, hits_shown=shown)
            if h + t + e == 0:
                width = max(32, width // 2)
                continue
            # shrink the largest section by a quarter (the head keeps a slight priority)
            sizes = {"h": h * 0.8, "t": t, "e": e}
            big = max(sizes, key=lambda k: (sizes[k], k == "e"))
            if big == "h":
                h -= max(1, h // 4)
            elif big == "t":
                t -= max(1, t // 4)
            else:
                e -= max(1, e // 4)
            if h + t + e <= 6 and width > 120:
                width = 120

    def _lines_body(self, head, tail, e, width):
        s = self.scan
        gutter = len(f"{s.lines:,}".replace(",", ""))
        fmt = f"{{:>{max(gutter, 4)}}}| {{}}"
        out: list[str] = []
        last_head = head[-1][0] if head else 0
        first_tail = tail[0][0] if tail else s.lines + 1
        if first_tail - last_head <= 1:
            out.append(f"--- lines 1-{s.lines:,} (all lines; long lines cut) ---")
            out += [fmt.format(n, self.cut(txt, width, ln)) for n, txt, ln in head + tail]
            return out, (), 0
        omitted = ((last_head + 1, first_tail - 1),)
        a, b = omitted[0]
        if head:
            out.append(f"--- head: lines 1-{last_head:,} ---")
            out += [fmt.format(n, self.cut(txt, width, ln)) for n, txt, ln in head]
        out.append(f"--- omitted: lines {a:,}-{b:,} ({b - a + 1:,} lines) ---")
        inside = [h for h in s.hits if a <= h.number <= b]
        hits = select_hits(inside, limit=e)
        in_range = len(inside) if s.hits_exact else None
        total = sum(s.hit_counts.values())
        if inside or total:
            kinds = ", ".join(f"{k} {v:,}" for k, v in s.hit_counts.items())
            counted = (f"{len(inside):,} in this range" if in_range is not None
                       else f"{len(inside):,}+ in this range")
            line = f"lines that matter: {total:,} in the output ({kinds}); {counted}"
            if hits:
                line += f"; {len(hits)} shown:"
            out.append(line)
            out += [fmt.format(h.number, self.cut(self.text_of(h.text.encode("utf-8")),
                                                  width, h.length)) for h in hits]
            more = len(inside) - len(hits)
            if more > 0 or not s.hits_exact:
                where = f"--lines {a}:{b} " if b - a + 1 < s.lines else ""
                out.append(f"  … {more:,} more here: ctxgate expand {self.id} {where}"
                           f"--grep '{GREP_MATTERS}' -i")
            if not s.hits_exact:
                out.append(f"  ({s.unclassified_note})")
        elif not self.ctx.group_by_file:
            out.append("no error, failure, exception or warning keywords in the omitted range"
                       + _shapes_note(s))
        out += self._per_file(e)
        if tail:
            out.append(f"--- tail: lines {first_tail:,}-{s.lines:,} ---")
            out += [fmt.format(n, self.cut(txt, width, ln)) for n, txt, ln in tail]
        return out, omitted, len(hits)

    def _per_file(self, limit: int) -> list[str]:
        """Match counts per file for search output (so a sample is not taken for the whole)."""
        s = self.scan
        if not self.ctx.group_by_file or not s.complete:
            return []
        counts: dict[str, int] = {}
        total = 0
        for raw in s.prefix.split(b"\n"):
            if not raw:
                continue
            total += 1
            m = _SEARCH_LINE.match(raw)
            if m:
                name = m.group(1).decode("utf-8", "replace")
                counts[name] = counts.get(name, 0) + 1
        if not counts or sum(counts.values()) < total * 0.8:
            return []
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        keep = ranked[: max(limit, 3)]
        listed = ", ".join(f"{self.cut(_clean(name), 120)} ({n:,})" for name, n in keep)
        more = len(ranked) - len(keep)
        tail = f", … {more:,} more files" if more > 0 else ""
        return [f"matches per file ({len(ranked):,} files, {sum(counts.values()):,} matching "
                f"lines): {listed}{tail}"]

    def _assemble(self, body: list[str], omitted, compact: bool) -> str:
        sel: list[tuple[str, str]] = []
        if omitted:
            a, b = omitted[0]
            end = min(b, a + 199)
            sel.append((f"--lines {a}:{end}", f'lines="{a}:{end}"'))
            first = next((h.number for h in self.scan.hits if a <= h.number <= b), None)
            if first is not None:
                lo, hi = max(a, first - 5), min(b, first + 40)
                sel.append((f"--lines {lo}:{hi}", f'lines="{lo}:{hi}"'))
        sel.append((f"--grep '{GREP_MATTERS}' -i -C 2",
                    f'grep="{GREP_MATTERS}", ignore_case=true, context=2'))
        if self.scan.longest_line >= self.policy.long_line_bytes:
            sel.append(("--bytes 0:4096", 'bytes="0:4096"'))
        lines = self.header() + body + self.warning() + self.drill(sel, compact=compact)
        return "\n".join(lines)

    def chars(self, budget: int) -> Digest:
        s = self.scan
        fixed = self.header() + self.warning()
        sel = [("--bytes 0:4096", 'bytes="0:4096"'),
               (f"--grep '{GREP_MATTERS}' -i", f'grep="{GREP_MATTERS}", ignore_case=true')]
        if s.prefix.lstrip()[:1] in (b"{", b"["):  # JSON cut short of a preview
            sel.append(("--keys", "keys=true"))
        drill = self.drill(sel, compact=budget < 2_500)
        room = budget - _size(fixed) - _size(drill) - 200
        head_n = max(0, int(room * 0.6))
        tail_n = max(0, room - head_n)
        while True:
            head = self.text_of(s.prefix[:head_n])
            start_tail = max(head_n, s.total_bytes - tail_n)
            tail_raw = s.suffix[len(s.suffix) - (s.total_bytes - start_tail):] \
                if s.total_bytes - start_tail <= len(s.suffix) else s.suffix
            tail = self.text_of(tail_raw)
            omitted = start_tail - head_n
            body = [f"--- first {len(head.encode('utf-8')):,} bytes ---", head]
            if omitted > 0:
                body.append(f"--- omitted: bytes {head_n:,}-{start_tail - 1:,} "
                            f"({omitted:,} bytes) ---")
                if s.hit_counts:
                    kinds = ", ".join(f"{k} {v:,}" for k, v in s.hit_counts.items())
                    body.append(f"lines that matter: {kinds} (find them with --grep)")
                nxt = min(4096, omitted)
                sel[0] = (f"--bytes {head_n}:{nxt}", f'bytes="{head_n}:{nxt}"')
                drill = self.drill(sel, compact=budget < 2_500)
            if tail:
                body += [f"--- last {len(tail_raw):,} bytes ---", tail]
            text = "\n".join(self.header() + body + self.warning() + drill)
            if len(text.encode("utf-8")) <= budget or head_n + tail_n == 0:
                return Digest(text=text, form="chars", archive_id=self.id)
            over = len(text.encode("utf-8")) - budget
            shrink = max(over, (head_n + tail_n) // 8, 16)
            head_n = max(0, head_n - shrink * 6 // 10)
            tail_n = max(0, tail_n - shrink * 4 // 10 - 1)

    def json(self, budget: int) -> Digest | None:
        s, p = self.scan, self.policy
        fixed = self.header()
        room = budget - _size(fixed) - 900
        if room < 200:
            return None
        preview: JsonPreview | None = None
        if s.complete and s.total_bytes <= p.json_preview_max_bytes:
            text = s.prefix.decode("utf-8", "replace")
            preview = json_preview(text, max_bytes=room)
        elif s.lines > _FEW_LINES:
            preview = self._jsonl_sample(room)
        if preview is None:
            return None
        label = {"json": "JSON structural preview (valid JSON; whole document archived)",
                 "json+trailing": "JSON structural preview (valid JSON; trailing text noted)",
                 "jsonl": f"JSON Lines structural preview (valid JSON; {preview.records:,} "
                          "records archived)"}[preview.format]
        ptr = "/0" if preview.format == "jsonl" else _first_pointer(preview)
        sel = [("--keys", "keys=true")]
        if ptr:
            sel.append((f"--json {ptr}", f'json="{ptr}"'))
        sel.append(("--lines 1:50", 'lines="1:50"') if preview.format == "jsonl"
                   else ("--bytes 0:4096", 'bytes="0:4096"'))
        body = [f"--- {label} ---", preview.text]
        if preview.format == "jsonl":  # a lone odd record among thousands (issue 11)
            from ctxgate.firewall.blockview import rare_lines

            body += rare_lines(self, 6)
        text = "\n".join(fixed + body + self.warning() + self.drill(sel, compact=budget < 2_500))
        return Digest(text=text, form=preview.format, archive_id=self.id)

    def _jsonl_sample(self, room: int) -> JsonPreview | None:
        import json as _json

        s = self.scan
        n = 256  # split only as far as 50 non-empty lines need (the prefix is up to 8 MiB)
        while True:
            parts = s.prefix.split(b"\n", n)
            lines = [ln for ln in parts[:-1] if ln.strip()][:50]
            if len(lines) >= 50 or len(parts) <= n:
                break
            n *= 8
        tail = [ln for ln in s.suffix.split(b"\n")[1:] if ln.strip()][-5:]
        if len(lines) < 2:
            return None
        try:
            records = [_json.loads(ln) for ln in lines + tail]
        except (ValueError, RecursionError):
            return None
        return jsonl_preview_from_lines(records, total_records=s.lines, max_bytes=room)

    def binary(self, budget: int) -> Digest:
        s = self.scan
        kind = detect_type(s.prefix[:512])
        head = self.header(binary=True)
        head.insert(1, f"[binary: {kind}; sha256 {s.sha256 or 'unknown'}]")
        hexes = hex_view(s.prefix, max_bytes=64)
        strings, n = printable_strings(s.prefix[:65_536], limit=8)
        body = [f"--- hex: first {min(64, s.total_bytes)} of {s.total_bytes:,} bytes ---", *hexes]
        if strings:
            body.append(f"--- printable strings in the first 64 KiB: {len(strings)} of {n:,} ---")
            body += [_clean(x) for x in strings]
        sel = [("--bytes 0:4096", 'bytes="0:4096"')]
        text = "\n".join(head + body + self.drill(sel, compact=False))
        return Digest(text=text, form="binary", archive_id=self.id)

    # ---------------------------------------------------------------- line sources

    def _head_lines(self, n: int) -> list[tuple[int, str, int | None]]:
        s = self.scan
        parts = s.prefix.split(b"\n")
        out = []
        for i, raw in enumerate(parts[:n]):
            last = i == len(parts) - 1
            if last and not raw and (s.complete or i >= s.lines):
                break
            full = len(raw) if (not last or s.complete) else None
            out.append((i + 1, self.text_of(raw[:4096]), full))
            if i + 1 >= s.lines:
                break
        return out

    def _tail_lines(self, n: int, *, after: int) -> list[tuple[int, str, int | None]]:
        s = self.scan
        if n <= 0:
            return []
        return [(k.number, self.text_of(k.raw), k.length)
                for k in last_lines(s.suffix, s.total_bytes, s.lines, n=n, keep=4096,
                                    after=after)]


def _shapes_note(s: ScanResult) -> str:
    """What the line-shape miner says about the output (never a bare "no errors")."""
    shapes = s.shapes
    if shapes is None:
        return ""
    if shapes.exact:
        return f"; {shapes.distinct:,} line shape(s), none rare"
    return (f"; line shapes checked in {shapes.mined + shapes.checked:,} of {shapes.lines:,} "
            "lines (sampled): outliers elsewhere are not ruled out")


def _first_pointer(preview: JsonPreview) -> str | None:
    """A JSON pointer worth suggesting: the largest top-level field, or the first item."""
    import json as _json

    try:
        doc = _json.loads(preview.text)
    except ValueError:
        return None
    root = doc.get("root") or {}
    if root.get("type") == "array" and root.get("items"):
        return "/0"
    fields = root.get("fields") or {}
    if not fields:
        return None

    def weight(shape: dict) -> int:
        return int(shape.get("chars") or shape.get("items") or shape.get("keys") or 0)

    key = max(fields, key=lambda k: weight(fields[k]))  # first wins among equals
    return "/" + key.replace("~", "~0").replace("/", "~1")
