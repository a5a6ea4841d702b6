"""JSON and JSON Lines views: the value at an RFC 6901 pointer, or a structural view (--keys).

An entry is JSON when the whole of it parses (up to ``json_max_bytes``); otherwise it is JSON
Lines when its first non-empty line parses. In JSON Lines the first pointer token is the record
index, 0-based, equal to ``line - 1`` (``/41/name`` is field ``name`` of line 42), so only that
line is read. The structural view lists, per key, the types seen, how many records or items have
it, sizes and a few sample values; for JSON Lines it samples the first :data:`SAMPLE_RECORDS`
records and says so.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from typing import TYPE_CHECKING, Any

from ctxgate.archive.entry import Entry, View
from ctxgate.archive.pages import assemble, next_line_end
from ctxgate.archive.selectors import parse_pointer
from ctxgate.archive.views import Budget, fit_rows
from ctxgate.errors import UsageError

if TYPE_CHECKING:
    from ctxgate.archive.chunks import ChunkReader
    from ctxgate.archive.policy import ArchivePolicy
    from ctxgate.archive.selectors import Selection

__all__ = ["SAMPLE_RECORDS", "render_json", "resolve_pointer", "structure"]

SAMPLE_RECORDS = 1_000
"""JSON Lines records sampled by --keys, records."""
_SAMPLES = 3
_SAMPLE_CHARS = 40


def _type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    if isinstance(v, list):
        return "array"
    return "object"


def resolve_pointer(doc: Any, tokens: list[str], pointer: str) -> Any:
    """Walk ``tokens``; raises UsageError naming the missing part."""
    cur = doc
    walked = ""
    for tok in tokens:
        if isinstance(cur, dict):
            if tok not in cur:
                keys = ", ".join(list(cur)[:10]) + (" ..." if len(cur) > 10 else "")
                raise UsageError(f"--json {pointer!r}: no member {tok!r} at {walked or '/'} "
                                 f"(keys: {keys or 'none'}); try --keys --json '{walked}'")
            cur = cur[tok]
        elif isinstance(cur, list):
            if not tok.isdigit() or (tok != "0" and tok.startswith("0")):
                raise UsageError(f"--json {pointer!r}: {tok!r} at {walked or '/'} is not an "
                                 f"array index (array of {len(cur)})")
            if int(tok) >= len(cur):
                raise UsageError(f"--json {pointer!r}: index {tok} out of range at "
                                 f"{walked or '/'} (array of {len(cur)})")
            cur = cur[int(tok)]
        else:
            raise UsageError(f"--json {pointer!r}: {walked or '/'} is a {_type(cur)}, "
                             f"not an object or array")
        walked += "/" + tok.replace("~", "~0").replace("/", "~1")
    return cur


def _sample(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= _SAMPLE_CHARS else text[: _SAMPLE_CHARS - 1] + "…"


def _size(v: Any) -> str:
    if isinstance(v, (list, dict, str)):
        return f"{len(v)}"
    return ""


def _key_rows(items: list[dict], indent: str = "  ") -> list[str]:
    """Merged key summary over objects."""
    order: dict[str, None] = {}
    types: dict[str, Counter] = {}
    samples: dict[str, list[str]] = {}
    for obj in items:
        for k, v in obj.items():
            order.setdefault(k, None)
            types.setdefault(k, Counter())[_type(v)] += 1
            if _type(v) not in ("object", "array"):
                s = samples.setdefault(k, [])
                sv = _sample(v)
                if len(s) < _SAMPLES and sv not in s:
                    s.append(sv)
    rows = []
    for k in order:
        t = "|".join(name for name, _ in types[k].most_common())
        count = sum(types[k].values())
        ex = f"  e.g. {', '.join(samples[k])}" if samples.get(k) else ""
        rows.append(f"{indent}{json.dumps(k, ensure_ascii=False)}: {t} ({count}/{len(items)}){ex}")
    return rows


def structure(value: Any) -> list[str]:
    """Rows describing a value: type, size, keys with types and samples."""
    t = _type(value)
    if t == "object":
        rows = [f"object with {len(value)} keys:"]
        for k, v in value.items():
            size = _size(v)
            desc = _type(v) + (f"[{size}]" if size else "")
            if isinstance(v, dict):
                desc += " keys: " + ", ".join(list(v)[:8]) + (" ..." if len(v) > 8 else "")
            elif isinstance(v, list) and v:
                desc += " of " + "|".join(n for n, _ in Counter(map(_type, v)).most_common())
            else:
                desc += f" = {_sample(v)}"
            rows.append(f"  {json.dumps(k, ensure_ascii=False)}: {desc}")
        return rows
    if t == "array":
        kinds = Counter(map(_type, value))
        rows = [f"array of {len(value)} items: " +
                ", ".join(f"{n} ({c})" for n, c in kinds.most_common())]
        objs = [v for v in value if isinstance(v, dict)]
        if objs:
            rows.append("  keys of object items:")
            rows += _key_rows(objs, "    ")
        scalars = [v for v in value if not isinstance(v, (dict, list))][:_SAMPLES]
        if scalars:
            rows.append("  e.g. " + ", ".join(_sample(v) for v in scalars))
        return rows
    return [f"{t} = {_sample(value)}"]


def _load_whole(reader: ChunkReader, entry: Entry, policy: ArchivePolicy) -> Any | None:
    if entry.raw_bytes > policy.json_max_bytes:
        return None
    data = reader.read(0, None)
    try:
        return json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        return None


def _record(reader: ChunkReader, entry: Entry, line: int, policy: ArchivePolicy) -> Any:
    start = reader.line_start(line)
    end = next_line_end(reader, start, line)
    if end - start > policy.json_max_bytes:
        raise UsageError(f"line {line} is {end - start} bytes, over archive.json_max_bytes; "
                         f"use --bytes {start}:4096")
    raw = reader.read(start, end - start)
    try:
        return json.loads(raw.decode("utf-8", "replace"))
    except ValueError as exc:
        raise UsageError(f"line {line} is not JSON ({exc}); see --lines {line}:{line}") from exc


def render_json(reader: ChunkReader, entry: Entry, sel: Selection, budget: Budget,
                policy: ArchivePolicy) -> View:
    """The value at a pointer, or the structural view, for JSON or JSON Lines entries."""
    pointer = sel.json_pointer or ""
    tokens = parse_pointer(pointer)
    sid = entry.short_id
    selector = ("--keys " if sel.keys else "") + (f"--json {pointer!r}" if pointer else "")
    doc = _load_whole(reader, entry, policy)
    header_kind = "JSON"
    if doc is None:
        first = _first_record(reader, entry, policy)
        header_kind = "JSON Lines"
        if tokens:
            idx = tokens[0]
            if not idx.isdigit() or int(idx) >= entry.lines:
                raise UsageError(f"--json {pointer!r}: in JSON Lines the first token is the "
                                 f"record index 0..{entry.lines - 1} (line - 1), got {idx!r}")
            value = resolve_pointer(_record(reader, entry, int(idx) + 1, policy), tokens[1:],
                                    pointer)
            header_kind = f"JSON Lines record {idx} (line {int(idx) + 1})"
        elif sel.keys:
            records, scanned = [first], 1
            line = 2
            pos = reader.line_start(2)
            while line <= entry.lines and scanned < SAMPLE_RECORDS:
                end = next_line_end(reader, pos, line)
                raw = reader.read(pos, min(end - pos, policy.json_max_bytes))
                pos, line = end, line + 1
                if not raw.strip():
                    continue
                try:
                    records.append(json.loads(raw.decode("utf-8", "replace")))
                except ValueError:
                    continue
                scanned += 1
            objs = [r for r in records if isinstance(r, dict)]
            rows = [f"{entry.lines} lines; keys over the first {len(records)} records:"]
            rows += _key_rows(objs) if objs else structure(records)[1:]
            return _finish(entry, sid, "JSON Lines", selector, rows, budget, pointer, sel.keys)
        else:
            raise UsageError("this entry is JSON Lines: give a record index first "
                             "(--json /0 is line 1) or use --keys")
    else:
        value = resolve_pointer(doc, tokens, pointer)
    if sel.keys:
        rows = structure(value)
    else:
        rows = json.dumps(value, indent=2, ensure_ascii=False).splitlines()
    return _finish(entry, sid, header_kind, selector, rows, budget, pointer, sel.keys,
                   sel.lines)


def _first_record(reader: ChunkReader, entry: Entry, policy: ArchivePolicy) -> Any:
    line = 1
    while line <= min(entry.lines, 50):
        start = reader.line_start(line)
        end = next_line_end(reader, start, line)
        raw = reader.read(start, min(end - start, policy.json_max_bytes))
        if raw.strip():
            try:
                return json.loads(raw.decode("utf-8", "replace"))
            except ValueError as exc:
                size = "" if entry.raw_bytes <= policy.json_max_bytes else (
                    f" (and it is over archive.json_max_bytes={policy.json_max_bytes} bytes "
                    "to parse whole)")
                raise UsageError(
                    f"entry {entry.short_id} is neither JSON nor JSON Lines{size}: line {line}: "
                    f"{exc}; use --lines or --grep instead"
                ) from exc
        line += 1
    raise UsageError(f"entry {entry.short_id} has no JSON content; use --lines")


def _finish(entry: Entry, sid: str, kind: str, selector: str, rows: list[str], budget: Budget,
            pointer: str, keys: bool, lines: tuple[int | None, int | None] | None = None
            ) -> View:
    """Rows ``lines`` (1-based, of the rendered value) within the budget; a row longer than
    the budget allows is cut with a marker; the ``next:`` hint pages on by rows, exactly."""
    from ctxgate.archive.selectors import resolve_lines

    where = pointer or "/"
    total = len(rows)
    first, last = resolve_lines(lines, total) if lines else (1, total)
    cap = max(200, budget.max_tokens)  # characters: a row never exceeds the budget alone
    page = [r if len(r) <= cap else
            f"{r[:cap]}…[row cut: +{len(r) - cap:,} characters; narrow the pointer]"
            for r in rows[first - 1:last]]
    ptr = f"--json {shlex.quote(pointer)}"

    def build(k: int) -> tuple[str, str | None]:
        notes = []
        hint = None
        if k < len(page):
            a, b = first + k, last
            notes.append(f"note: rows {first:,}-{first + k - 1:,} of {total:,} shown; narrow "
                         f"the pointer (--json '{pointer}/<key or index>') or page on")
            hint = f"{ptr} --lines {a}:{b}" if not keys else None
        span = (f" rows {first:,}-{last:,} of {total:,}" if (first, last) != (1, total)
                else "")
        header = f"[{sid}] {kind} {'keys at' if keys else 'value at'} {where}{span}:"
        return assemble(header, page[:k], notes, hint), hint

    k = fit_rows(lambda k: build(k)[0], max(1, len(page)), budget)
    text, hint = build(k)
    return View(text=text, entry=entry, selector=selector.strip() or "--json ''",
                next_hint=hint, truncated=k < len(page) or first > 1 or last < total,
                notes=tuple(line for line in text.splitlines() if line.startswith("note: ")))
