"""Full-text search across archived outputs, bounded, naming the id and line of each match.

:func:`search` finds the lines holding every word of a query (case-insensitive substrings,
ASCII case folding) in the archive's live entries, newest used first, and returns at most
``limit`` of them with their entry id and 1-based line number, so ``expand(id, lines=…)``
can follow. Only stored bytes are searched, and those are redacted: a secret the archive
never kept cannot be found.

How the entries are searched depends on the store:

- **SQLite**: an FTS5 trigram index (:mod:`ctxgate.archive.stores.sqlite_fts`) names the
  chunks that hold every word of three characters or more; only those are decompressed and
  matched line by line. The index is brought up to date here, lazily, at most
  ``index_budget_bytes`` per call (ingest never pays for it); entries not yet indexed are
  scanned like a store without an index.
- **Redis and memory** (no index): a scan of the entries' chunks, newest entries first, stopping
  at ``max_entries`` entries or ``max_scan_bytes`` bytes; the result says what was left out.

A line that crosses a 1 MiB chunk boundary is matched in two pieces (a word cut by the
boundary is not found); the limits below and that are stated in the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxgate.errors import UsageError

if TYPE_CHECKING:
    from ctxgate.archive.archive import Archive
    from ctxgate.archive.entry import Entry

__all__ = ["MAX_LIMIT", "SearchHit", "SearchResult", "render_list", "render_search", "search"]

MAX_LIMIT = 200
"""Most matches one call returns."""
LINE_SHOW_BYTES = 240
"""Bytes shown of each matching line."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    entry_id: str
    short_id: str
    line: int
    text: str


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    query: str
    hits: tuple[SearchHit, ...]
    more: bool
    """More matches exist than were returned (``limit`` reached)."""
    entries_searched: int
    entries_total: int
    bytes_searched: int
    method: str
    notes: tuple[str, ...] = field(default_factory=tuple)
    entries: dict[str, Entry] = field(default_factory=dict)


def search(archive: Archive, query: str, *, limit: int = 20, max_entries: int = 500,
           max_scan_bytes: int = 512 << 20, index_budget_bytes: int = 32 << 20) -> SearchResult:
    """Search the archive (see the module docstring).

    Raises:
        UsageError: an empty query, or ``limit`` outside 1..:data:`MAX_LIMIT`.
    """
    words = [w for w in (query or "").split() if w]
    if not words:
        raise UsageError("search: give a query (one or more words; a line must hold all of them)")
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"search: limit must be 1..{MAX_LIMIT}, got {limit}")
    needles = [w.encode("utf-8").lower() for w in words]
    entries = archive.list()
    total = len(entries)
    entries = entries[:max_entries]
    index = _index(archive)
    notes: list[str] = []
    indexed: set[str] = set()
    candidates: dict[str, set[int]] | None = None
    terms = [w for w in words if index is not None and len(w) >= index.min_term_chars]
    if index is not None:
        indexed = _update_index(archive, index, entries, index_budget_bytes)
        if terms:
            candidates = index.candidates(terms)
        else:
            notes.append(f"every word is shorter than {index.min_term_chars} characters: "
                         "the index cannot help, entries were scanned")
    hits: list[SearchHit] = []
    more = False
    scanned = searched = 0
    shown: dict[str, Any] = {}
    for entry in entries:
        use_index = candidates is not None and entry.id in indexed
        if use_index and entry.id not in candidates:
            searched += 1
            continue
        if not use_index and scanned + entry.raw_bytes > max_scan_bytes and searched:
            notes.append(f"stopped scanning at {max_scan_bytes:,} bytes: "
                         f"{len(entries) - searched} entries not searched")
            break
        record = archive._resolve(entry.id)
        reader = archive._reader(record)
        chunks = sorted(candidates[entry.id]) if use_index else range(len(reader.index.rows))
        for i in chunks:
            if i < 0 or i >= len(reader.index.rows):
                continue
            data = reader.chunk(i)
            if not use_index:
                scanned += len(data)
            for line, text in _matching_lines(data, needles):
                if len(hits) >= limit:
                    more = True
                    break
                hits.append(SearchHit(entry.id, entry.short_id,
                                      reader.index.newlines_before[i] + line, text))
                shown[entry.id] = entry
            if more:
                break
        searched += 1
        if more:
            break
    if total > max_entries:
        notes.append(f"only the {max_entries} most recently used of {total} entries searched")
    method = "scan" if index is None else index.kind + (
        f" + scan of {len(entries) - len(indexed & {e.id for e in entries})} unindexed"
        if len(indexed) < len(entries) else "")
    return SearchResult(query=query, hits=tuple(hits), more=more, entries_searched=searched,
                        entries_total=total, bytes_searched=scanned, method=method,
                        notes=tuple(notes), entries=shown)


def _index(archive: Archive) -> Any:
    opener = getattr(archive.store, "text_index", None)
    return opener() if callable(opener) else None


def _update_index(archive: Archive, index: Any, entries: list[Entry], budget: int) -> set[str]:
    """Index entries not yet indexed (newest first, ``budget`` raw bytes); returns the
    indexed ids among ``entries``."""
    done = index.indexed()
    index.prune({e.id for e in archive.list()})
    spent = 0
    for entry in entries:
        if entry.id in done:
            continue
        if spent + entry.raw_bytes > budget and spent:
            break
        reader = archive._reader(archive._resolve(entry.id))
        rows = [(i, reader.chunk(i).decode("utf-8", "replace"))
                for i in range(len(reader.index.rows))]
        index.add(entry.id, rows)
        spent += entry.raw_bytes
        done.add(entry.id)
    return done & {e.id for e in entries}


def _matching_lines(data: bytes, needles: list[bytes]):
    """``(1-based line within data, shown text)`` of each line holding every needle."""
    low = data.lower()
    first = max(needles, key=len)
    rest = [n for n in needles if n is not first]
    pos = low.find(first)
    while pos != -1:
        start = low.rfind(b"\n", 0, pos) + 1
        end = low.find(b"\n", pos)
        end = len(low) if end == -1 else end
        line = low[start:end]
        if all(n in line for n in rest):
            raw = data[start:min(end, start + LINE_SHOW_BYTES)].rstrip(b"\r")
            text = raw.decode("utf-8", "replace")
            if end - start > LINE_SHOW_BYTES:
                text += f" … ({end - start:,} bytes)"
            yield data.count(b"\n", 0, start) + 1, text
        pos = low.find(first, end + 1)


def render_search(result: SearchResult, *, tool: str = "expand", cli: bool = False) -> str:
    """The text a model or a person reads: one block per entry, then what was left out."""
    head = (f"[search {result.query!r}: {len(result.hits)}{'+' if result.more else ''} "
            f"matching line(s) in {len({h.entry_id for h in result.hits})} of "
            f"{result.entries_searched} entries searched ({result.entries_total} in the archive;"
            f" {result.method})]")
    out = [head]
    last = None
    for h in result.hits:
        if h.entry_id != last:
            e = result.entries.get(h.entry_id)
            what = (e.command or e.source or "") if e is not None else ""
            what = what if len(what) <= 80 else what[:79] + "…"
            tool_name = (e.tool if e is not None else None) or "-"
            out.append(f"--- {h.short_id} ({tool_name}{': ' + what if what else ''}) ---")
            last = h.entry_id
        out.append(f"{h.line:>7}| {h.text}")
    if not result.hits:
        out.append("no matching lines")
    if result.hits:
        h = result.hits[0]
        lo, hi = max(1, h.line - 10), h.line + 10
        follow = (f"ctxgate expand {h.short_id} --lines {lo}:{hi}" if cli
                  else f'{tool}(id="{h.short_id}", lines="{lo}:{hi}")')
        out.append(f"read around a match: {follow}")
    if result.more:
        out.append(f"more matches than the {len(result.hits)} shown: add words to the query, "
                   "or grep one entry with " + ("ctxgate expand ID --grep WORD"
                                                if cli else f'{tool}(id=…, grep="…")'))
    out.extend(f"note: {n}" for n in result.notes)
    return "\n".join(out) + "\n"


def render_list(entries: list[Entry], total: int, now: float) -> str:
    """One line per entry: id, tool, bytes, lines, age, command (the ``list`` tool)."""
    out = [f"[archive: {len(entries)} of {total} entries, most recently used first]"]
    for e in entries:
        what = e.command or e.source or ""
        what = what if len(what) <= 80 else what[:79] + "…"
        age = int(max(0, now - e.created_at))
        out.append(f"{e.short_id}  {(e.tool or '-')[:16]:<16} {e.raw_bytes:>12,} B "
                   f"{e.lines:>9,} lines  {_age(age)} ago  {what}")
    if len(entries) < total:
        out.append(f"{total - len(entries)} more: raise limit (at most {MAX_LIMIT})")
    return "\n".join(out) + "\n"


def _age(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
