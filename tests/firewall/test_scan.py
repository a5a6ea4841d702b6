"""The streaming scanner: same result for any chunking, exact counts, bounded memory."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxgate.firewall.meter import TokenMeter
from ctxgate.firewall.scan import OutputScanner

from .helpers import build_log


def scan_chunks(data: bytes, sizes: list[int], **kw):
    sc = OutputScanner(**kw)
    pos = 0
    k = 0
    while pos < len(data):
        n = sizes[k % len(sizes)] if sizes else len(data)
        sc.feed(data[pos:pos + n])
        pos += n
        k += 1
    return sc.close()


def test_counts_and_hits_with_line_numbers() -> None:
    log = build_log(5_000, error_at=2_500).encode()
    r = scan_chunks(log, [65_536])
    assert r.total_bytes == len(log)
    assert r.lines == 5_000
    assert [(h.number, h.kind) for h in r.hits] == [(2_500, "error")]
    assert r.hit_counts == {"error": 1}
    assert r.hits_exact


def test_final_line_without_newline_counts() -> None:
    assert scan_chunks(b"a\nb", [1]).lines == 2
    assert scan_chunks(b"a\nb\n", [1]).lines == 2
    assert scan_chunks(b"", [1]).lines == 0
    assert scan_chunks(b"no newline", [3]).lines == 1


def test_long_lines_measured_exactly_across_chunks() -> None:
    data = b"short\n" + b"x" * 10_000 + b"\nshort\n" + b"y" * 5_000_000 + b"\nend"
    r = scan_chunks(data, [777_777], long_line_bytes=4096)
    assert r.longest_line == 5_000_000
    assert r.longest_line_number == 4
    assert r.long_lines == 2


def test_memory_is_bounded() -> None:
    sc = OutputScanner(keep_bytes=100_000, tail_keep_bytes=10_000)
    block = build_log(20_000).encode()
    for _ in range(20):
        sc.feed(block)
    r = sc.close()
    assert len(r.prefix) == 100_000 and len(r.suffix) == 10_000
    assert r.total_bytes == 20 * len(block)
    assert r.suffix == (block * 2)[-10_000:]


def test_flood_of_error_lines_switches_to_counting() -> None:
    data = ("error: x\n" * 50_000).encode()
    r = scan_chunks(data, [1 << 20], hits_per_kind=10)
    assert [h.number for h in r.hits[:10]] == list(range(1, 11))  # the first ten
    assert len(r.hits) == 20  # and the last ten classified before counting took over
    assert not r.hits_exact
    assert r.hits_counted_to >= 10
    assert r.hit_counts["error"] + r.uncounted_occurrences >= 50_000 - 1


def test_after_a_flood_the_last_error_still_shows() -> None:
    data = ("warning: noisy\n" * 200_000 + "ok\n" * 10 + "error: the real one\n").encode()
    r = scan_chunks(data, [1 << 20])
    assert not r.hits_exact
    assert r.hits[-1].number == 200_011 and r.hits[-1].text == "error: the real one"


def test_last_hits_are_kept_past_the_cap() -> None:
    lines = [f"warning: noise {i}" for i in range(1, 1_501)] + ["error: the real one"]
    r = scan_chunks(("\n".join(lines) + "\n").encode(), [4096], hits_per_kind=8)
    assert r.hits[-1].number == 1_501 and r.hits[-1].kind == "error"
    assert [h.number for h in r.hits if h.kind == "warning"][-1] == 1_500  # the last ones too
    assert r.hit_counts == {"error": 1, "warning": 1_500}
    assert r.hits_exact


def test_binary_detection_and_sha() -> None:
    import hashlib

    data = bytes(range(256)) * 100
    r = scan_chunks(data, [1000])
    assert r.binary
    assert r.sha256 == hashlib.sha256(data).hexdigest()
    assert not scan_chunks(build_log(100).encode(), [10]).binary
    assert not scan_chunks("héllo wörld ✓\n".encode() * 1000, [7]).binary


_pieces = st.lists(st.sampled_from([
    b"ok line\n", b"error: failed\n", b"warning: x\n", b"\n", b"x" * 5000, b"\xff\xfe",
    b"Traceback (most recent call last):\n", "ünï ✓\n".encode(), b"tail",
]), max_size=60)


@settings(max_examples=60, deadline=None)
@given(pieces=_pieces, sizes=st.lists(st.integers(1, 9_000), min_size=1, max_size=5))
def test_chunking_never_changes_the_result(pieces: list[bytes], sizes: list[int]) -> None:
    data = b"".join(pieces)
    whole = scan_chunks(data, [], long_line_bytes=4096)
    parts = scan_chunks(data, sizes, long_line_bytes=4096)
    assert parts == whole
    assert whole.lines == data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    exact = max((len(x) for x in data.split(b"\n")), default=0)
    if exact >= 4096:
        assert whole.longest_line == exact


def test_meter_exact_for_small_outputs() -> None:
    m = TokenMeter("o200k_base", 2_000)
    for piece in (b"hello ", b"world\n") * 10:
        m.feed(piece)
    m.close()
    assert m.exact and m.count().tokenizer == "o200k_base"
    assert m.describe().endswith("(o200k_base)")


def test_meter_handles_split_utf8() -> None:
    text = "ünïcødé ✓ " * 3000
    data = text.encode()
    m = TokenMeter("o200k_base", 10**9)
    for i in range(0, len(data), 7):
        m.feed(data[i:i + 7])
    m.close()
    from ctxgate.tokens import count_tokens

    assert abs(m.count().count - count_tokens(text).count) <= 10


_LINES = st.sampled_from([
    b"ok all good", b"ERROR: disk full", b"warning: deprecated", b"Traceback (most recent",
    b"  File x.py line 3", b"exit status 2", b"Caused by: io", b"nothing here", b"fail fail",
    b"permission denied", b"", b"x" * 300 + b" error at the end",
])


@settings(max_examples=60, deadline=None)
@given(st.lists(_LINES, max_size=400))
def test_one_pass_keyword_search_equals_the_per_keyword_fallback(lines: list[bytes]) -> None:
    import ctxgate.firewall.scan as scan

    data = b"\n".join(lines) + b"\n"

    def run() -> object:
        s = OutputScanner(keep_bytes=1024, long_line_bytes=128, line_max_bytes=80)
        s.feed(data)
        return s.close()

    fast = run()
    saved = list(scan._FINDER)
    scan._FINDER[:] = [None]
    try:
        slow = run()
    finally:
        scan._FINDER[:] = saved
    assert scan._keyword_finder() is not None  # the fast path was really exercised
    assert fast == slow


def test_meter_holding_bytes_counts_as_streaming_and_never_past_the_bound() -> None:
    import random

    rng = random.Random(7)
    words = ["alpha", "beta", "ünï", "✓", "x" * 40, "\n", "  "]
    data = "".join(rng.choice(words) + " " for _ in range(60_000)).encode()
    limit = 200_000  # over the pre-token bound (about 60,000), so both really count
    streamed = TokenMeter("o200k_base", limit, defer_bytes=2_000)
    held = TokenMeter("o200k_base", limit, defer_bytes=2_000, hold_bytes=limit * 128)
    for i in range(0, len(data), 65_537):
        streamed.feed(data[i:i + 65_537])
        held.feed(data[i:i + 65_537])
    streamed.close()
    held.close()
    assert held.counted == streamed.counted and held.count() == streamed.count()
    assert held.describe() == streamed.describe()
    assert held.total_bytes == streamed.total_bytes == len(data)
    # past limit * MAX_TOKEN_BYTES the bytes decide: the tokenizer is never used
    big = TokenMeter("o200k_base", 100, hold_bytes=100 * 128)
    for _ in range(20):
        big.feed(b"word " * 1_000)
    big.close()
    assert big.counted == 0 and big.total_bytes == 100_000 and big._counter is None
    assert big.reaches(100) and big.count().tokenizer == "estimate"
    assert big.describe() == "~25,000 tokens (estimate)"
    small = TokenMeter("o200k_base", 2_000, defer_bytes=2_000, hold_bytes=2_000 * 128)
    small.feed(b"tiny")
    small.close()
    assert small.counted == 0 and small.total_bytes == 4 and not small.reaches(5)


def test_blocks_and_so_the_scan_do_not_depend_on_how_the_output_was_fed() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from _gen import generate

    # a flood of keyword lines (the classify budget runs out mid-output) and long lines
    data = b"".join(generate("short_lines", 6_000_000)) + b"x" * 5_000_000 + b"\nend\n" + \
        b"".join(generate("long_lines", 2_000_000))
    whole = scan_chunks(data, [len(data)])
    assert not whole.hits_exact  # the flood case, where block edges used to matter
    for sizes in ([1 << 20], [65_536], [999_983, 4_096, 3_000_001], [(1 << 20) - 32_768]):
        assert scan_chunks(data, sizes) == whole, sizes
