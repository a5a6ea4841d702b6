"""Invariants over arbitrary input: bytes round-trip, pages cover an entry without gaps, grep
equals a per-line reference, line slices equal Python's own splitting."""

from __future__ import annotations

import hashlib
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxgate.archive import Archive, ArchivePolicy
from ctxgate.archive.stores.memory import MemoryStore

SMALL_CHUNKS = ArchivePolicy(chunk_bytes=64, redact=False, tokenizer="estimate",
                             exact_tokens_max_bytes=0)
settings.register_profile("archive", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("archive")

lines_text = st.lists(
    st.one_of(st.text(max_size=40), st.binary(max_size=30).map(lambda b: b.decode("latin-1")),
              st.sampled_from(["", "ERROR x", "€uro ünï", "\r", "a\x00b", "x" * 300])),
    max_size=40,
).map(lambda ls: "\n".join(ls))


def _new() -> Archive:
    return Archive(MemoryStore(), SMALL_CHUNKS)


@given(data=st.binary(max_size=2000), split=st.integers(1, 300))
def test_any_bytes_roundtrip(data: bytes, split: int) -> None:
    a = _new()
    with a.writer() as w:
        for i in range(0, len(data), split):
            w.write(data[i:i + split])
    e = w.entry
    assert e.id == hashlib.sha256(data).hexdigest()
    assert a.read(e.id) == data
    assert e.lines == data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    if data:
        off = split % len(data)
        assert a.read(e.id, off, 50) == data[off:off + 50]


@given(text=lines_text, binary=st.binary(max_size=200), tokens=st.integers(100, 300))
def test_pages_cover_the_entry_without_gaps(text: str, binary: bytes, tokens: int) -> None:
    data = text.encode("utf-8", "surrogatepass") + binary
    a = _new()
    e = a.put(data)
    view = a.expand(e.id, max_tokens=tokens)
    pos = 0
    for _ in range(10_000):
        if view.byte_range is not None and view.byte_range != (0, 0):
            assert view.byte_range[0] == pos, (view.selector, view.byte_range, pos)
            pos = view.byte_range[1]
        if view.next_hint is None:
            break
        flag, value = view.next_hint.split(" ", 1)
        kwargs = {"lines": value} if flag == "--lines" else {"byte_range": value}
        view = a.expand(e.id, max_tokens=tokens, **kwargs)
    assert pos == len(data)


@given(text=lines_text, pattern=st.sampled_from(["ERROR", "^a", "b$", r"\d", "x{3}", "[^\n]z",
                                                  r"\s\S", "€", ".", "a.*b", r"\bx", "ü$"]),
       ignore_case=st.booleans())
def test_grep_equals_per_line_reference(text: str, pattern: str, ignore_case: bool) -> None:
    data = text.encode("utf-8", "surrogatepass")
    a = _new()
    e = a.put(data)
    view = a.expand(e.id, grep=pattern, ignore_case=ignore_case, max_matches=1000,
                    max_tokens=100_000)
    rx = re.compile(pattern.encode(), re.IGNORECASE if ignore_case else 0)
    want = [i + 1 for i, line in enumerate(data.split(b"\n"))
            if (i < e.lines) and rx.search(line)]
    assert view.matches == len(want)
    shown = [int(ln.split(":")[0]) for ln in view.text.splitlines()[1:]
             if re.match(r"^\s*\d+:", ln)]
    assert shown == want
    # Past max_matches the rest is only counted (by a faster path): same total.
    assert a.expand(e.id, grep=pattern, ignore_case=ignore_case, max_matches=1).matches == \
        len(want)


@given(text=lines_text, a=st.integers(-50, 50), b=st.integers(-50, 50))
def test_line_slices_match_splitlines(text: str, a: int, b: int) -> None:
    data = text.encode("utf-8", "surrogatepass")
    arch = _new()
    e = arch.put(data)
    if a == 0 or b == 0:
        return
    lines = data.split(b"\n")
    if data.endswith(b"\n") or not data:
        lines = lines[:-1]
    n = len(lines)
    first = a if a > 0 else n + a + 1
    last = b if b > 0 else n + b + 1
    if (a > 0) == (b > 0) and a > b:
        return
    first, last = max(1, first), min(n, last)
    view = arch.expand(e.id, lines=f"{a}:{b}", max_tokens=100_000)
    if first > last:
        assert view.line_range is None
        return
    assert view.line_range == (first, last)
    start = sum(len(x) + 1 for x in lines[:first - 1])
    end = min(len(data), sum(len(x) + 1 for x in lines[:last]))
    assert view.byte_range == (start, end)


@settings(max_examples=25)
@given(data=st.binary(max_size=3000), redact=st.booleans())
def test_any_bytes_roundtrip_through_sqlite(data: bytes, redact: bool) -> None:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as home:
        policy = ArchivePolicy(chunk_bytes=256, redact=redact, tokenizer="estimate")
        with Archive.open(Path(home), policy) as a:
            e = a.put(data)
            stored = a.read(e.short_id)
            assert e.id == hashlib.sha256(stored).hexdigest()  # the id is the stored bytes'
            if not redact:
                assert stored == data
            assert a.put(stored).id == e.id or redact  # same bytes: same entry


@settings(max_examples=40)
@given(n=st.integers(0, 400), every=st.integers(1, 9), page=st.integers(1, 30),
       context=st.integers(0, 2))
def test_grep_pages_visit_every_match_once(n: int, every: int, page: int, context: int) -> None:
    a = _new()
    data = b"".join(b"%d %s\n" % (i, b"HIT" if i % every == 0 else b"miss")
                    for i in range(1, n + 1))
    e = a.put(data)
    want = [i for i in range(1, n + 1) if i % every == 0]
    seen: list[int] = []
    kwargs: dict = {"grep": "HIT", "max_matches": page, "context": context}
    for _ in range(1000):
        view = a.expand(e.id, **kwargs)
        seen += [int(ln.split(":")[0]) for ln in view.text.splitlines()[1:]
                 if re.match(r"^\s*\d+:", ln)]
        if view.next_hint is None:
            break
        kwargs["lines"] = view.next_hint.rsplit("--lines ", 1)[1]
    assert seen == want
