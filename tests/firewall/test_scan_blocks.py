"""The block-level scanner against plain per-line references, on random inputs.

The scanner never loops over lines in Python: it cuts the output into newline-aligned blocks
where the fed chunks lie, counts newlines once per block, and classifies only the lines a
keyword pass points at. These tests state what that must equal, written the slow way: split
the whole output into lines and look at every one. Blocks are made tiny (``BLOCK_BYTES``
patched) so random inputs cross many block edges, with CRLF, no final newline, invalid
UTF-8 and lines longer than a block.
"""

from __future__ import annotations

import hashlib
import random
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

import ctxgate.firewall.scan as scan_mod
from ctxgate.archive.bytequeue import ByteQueue
from ctxgate.archive.chunks import Chunker
from ctxgate.firewall.errorlines import KEYWORDS, classify_line
from ctxgate.firewall.scan import MAX_CARRY_BYTES, OutputScanner


def feed(data: bytes, sizes: list[int], **kw) -> tuple[OutputScanner, list[tuple[int, int]]]:
    """Scan ``data`` fed in ``sizes`` (cycled); also the (offset, length) of every block."""
    sc = OutputScanner(**kw)
    blocks: list[tuple[int, int]] = []
    real = sc._scan

    def record(block: bytes, analyse: bool = True) -> None:
        blocks.append((sc._offset, len(block)))
        real(block, analyse)

    sc._scan = record  # type: ignore[method-assign]
    pos = k = 0
    while pos < len(data):
        n = sizes[k % len(sizes)] if sizes else len(data)
        sc.feed(data[pos : pos + n])
        pos += n
        k += 1
    return sc, blocks


def reference_blocks(data: bytes, block_bytes: int) -> list[tuple[int, int]]:
    """The documented cut rule on the whole buffer: each block ends at the last newline
    before the next multiple of ``block_bytes``, or (a line crossing it) at that line's end,
    or ``MAX_CARRY_BYTES`` on; the rest is the last block."""
    out = []
    offset, grid = 0, block_bytes
    while len(data) >= grid:
        cut = data.rfind(b"\n", offset, grid) + 1
        if cut <= offset:
            nl = data.find(b"\n", grid, offset + MAX_CARRY_BYTES)
            if nl != -1:
                cut = nl + 1
            elif len(data) - offset >= MAX_CARRY_BYTES:
                cut = offset + MAX_CARRY_BYTES
            else:
                break
        out.append((offset, cut - offset))
        offset = cut
        grid = max(grid + block_bytes, (offset // block_bytes + 1) * block_bytes)
    if offset < len(data):
        out.append((offset, len(data) - offset))
    return out


def reference_hits(data: bytes, line_max_bytes: int = 240) -> list[tuple[int, str, str, int]]:
    """(line number, kind, text, length) of every line a keyword makes a candidate and
    :func:`classify_line` keeps, looked at one line at a time."""
    out = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        low = raw.lower()
        first = min((p for p in (low.find(k) for k in KEYWORDS) if p != -1), default=-1)
        if first == -1 or first > scan_mod._LINE_WINDOW:
            continue
        kind = classify_line(raw[:4096].decode("utf-8", "replace"))
        if kind is not None:
            text = raw[:line_max_bytes].decode("utf-8", "ignore").rstrip("\r")
            out.append((number, kind, text, len(raw)))
    return out


_LINES = st.sampled_from(
    [
        b"ok line",
        b"error: it failed",
        b"warning: deprecated call",
        b"",
        b"x" * 300,
        b"\xff\xfe bad utf-8 error",
        b"Traceback (most recent call last):",
        "ünï ✓".encode(),
        b'  File "a.py", line 3, in f',
        b"ValueError: bad",
        b"ok\r",
        b"ERROR: crlf\r",
        b"Failures: 0, Errors: 0",
        b"exit code 2",
        b"-Werror is a flag",
        b"1 failed, 2 passed",
    ]
)


@st.composite
def outputs(draw) -> bytes:
    lines = draw(st.lists(_LINES, max_size=120))
    data = b"\n".join(lines)
    if draw(st.booleans()):
        data += b"\n"  # else: no final newline
    return data


TINY = 128


def tiny_blocks():
    """Blocks of :data:`TINY` bytes, so short inputs cross many block edges."""
    return mock.patch.object(scan_mod, "BLOCK_BYTES", TINY)


@settings(max_examples=150, deadline=None)
@given(data=outputs(), sizes=st.lists(st.integers(1, 700), min_size=1, max_size=4))
def test_blocks_fall_where_the_rule_says_whatever_the_chunks(data, sizes) -> None:
    with tiny_blocks():
        sc, blocks = feed(data, sizes)
        result = sc.close()
    assert blocks == reference_blocks(data, TINY)
    assert b"".join(data[o : o + n] for o, n in blocks) == data  # every byte, once, in order
    assert result.total_bytes == len(data)


@settings(max_examples=150, deadline=None)
@given(data=outputs(), sizes=st.lists(st.integers(1, 700), min_size=1, max_size=4))
def test_block_scanner_finds_the_lines_a_per_line_scan_finds(data, sizes) -> None:
    with tiny_blocks():
        sc, _ = feed(data, sizes, hits_per_kind=10_000, long_line_bytes=64)
        r = sc.close()
    assert [(h.number, h.kind, h.text, h.length) for h in r.hits] == reference_hits(data)
    assert r.hits_exact
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    assert r.lines == len(lines)
    assert r.long_lines == sum(1 for x in lines if len(x) >= 64)
    if r.long_lines:
        longest = max(len(x) for x in lines)
        assert r.longest_line == longest
        assert len(lines[r.longest_line_number - 1]) == longest
    assert r.hit_counts == {
        k: sum(1 for h in reference_hits(data) if h[1] == k)
        for k in sorted({h[1] for h in reference_hits(data)})
    }


def test_a_line_longer_than_the_carry_is_cut_and_still_measured() -> None:
    line = b"y" * 10 + b" error: early\t" + b"z" * (MAX_CARRY_BYTES + 500_000)
    data = b"head\n" + line + b"\nfatal error: after it\n"
    for sizes in ([len(data)], [1 << 20], [65_537, 3_000_000]):
        sc, blocks = feed(data, sizes, long_line_bytes=4096)
        r = sc.close()
        assert blocks == reference_blocks(data, scan_mod.BLOCK_BYTES)
        assert r.lines == 3
        assert r.longest_line == len(line) and r.longest_line_number == 2
        assert [h.number for h in r.hits] == [2, 3]


def test_a_keyword_far_into_a_giant_line_is_data_not_a_message() -> None:
    data = b"a" * 200_000 + b" error: inside minified code\nok\n"
    r = feed(data, [1 << 20])[0].close()
    assert r.hits == () and r.lines == 2


def test_after_a_flood_the_estimate_stays_close_to_the_count() -> None:
    rng = random.Random(5)
    lines = [f"{rng.choice(['error', 'fail', 'ok', 'exception'])} {i}\n" for i in range(4_000_000)]
    data = "".join(lines).encode()
    r = feed(data, [1 << 20])[0].close()
    assert not r.hits_exact and r.uncounted_estimated_bytes > 0
    tail = b"\n".join(data.split(b"\n")[r.hits_counted_to :])
    true = sum(tail.count(k) for k in (b"error", b"fail", b"exception"))
    assert abs(r.uncounted_occurrences - true) <= true * 0.005


@settings(max_examples=200, deadline=None)
@given(
    writes=st.lists(
        st.binary(max_size=3000)
        | st.integers(65_536, 200_000).map(
            lambda n: bytes(random.Random(n).getrandbits(8) for _ in range(8)) * (n // 8)
        )
    ),
    takes=st.lists(st.integers(0, 300_000), max_size=20),
)
def test_byte_queue_gives_back_the_stream_in_order(writes: list[bytes], takes: list[int]) -> None:
    q = ByteQueue()
    got = []
    for k, w in enumerate(writes):
        q.append(w)
        if k < len(takes):
            got.append(q.take(takes[k]))
    got.append(q.take(q.held))
    assert b"".join(got) == b"".join(writes) and q.held == 0
    assert all(type(g) is bytes for g in got)


def test_byte_queue_never_copies_a_write_that_is_a_whole_piece() -> None:
    q = ByteQueue()
    big = b"x" * 100_000
    q.append(big)
    assert q.take(100_000) is big


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 300_000), min_size=1, max_size=8), total=st.integers(0, 900_000)
)
def test_chunker_hash_and_chunks_do_not_depend_on_the_writes(sizes: list[int], total: int) -> None:
    data = random.Random(total).randbytes(total // 2) + b"line\n" * (total // 10)
    c = Chunker(chunk_bytes=65_536)
    out = []
    pos = k = 0
    while pos < len(data):
        n = sizes[k % len(sizes)]
        out += c.feed(data[pos : pos + n])
        pos += n
        k += 1
    out += c.close()
    assert c.digest == hashlib.sha256(data).hexdigest()
    assert [r[0] for r in c.rows] == [
        min(65_536, len(data) - i) for i in range(0, len(data), 65_536)
    ]
    assert sum(r[2] for r in c.rows) == data.count(b"\n") and len(out) == len(c.rows)
    import zstandard

    d = zstandard.ZstdDecompressor()
    assert b"".join(d.decompress(x) for x in out) == data


def test_a_line_with_the_same_separators_in_another_order_is_a_rare_shape() -> None:
    from ctxgate.firewall.shapes import ShapeMiner

    lines = [b"alpha %d:%d omega" % (i, i * 7) for i in range(10_001, 30_001)]
    lines[15_000 - 1] = b"x:alpha 12345 omega"  # both literal anchors, separators reordered
    data = b"\n".join(lines) + b"\n"
    miner = ShapeMiner()
    miner.feed(data, 1, newlines=data.count(b"\n"))
    shapes = miner.result(len(lines))
    assert [r.number for r in shapes.rare] == [15_000]
    assert shapes.exact


def test_the_heap_is_kept_once_per_process_where_glibc_allows() -> None:
    """Only a process that allowed it (``ctxgate run``'s own) is tuned: the MCP server and
    framework adapters run the same pipeline inside processes that are not ours."""
    import platform
    import subprocess
    import sys

    code = ("from ctxgate.firewall import memtune\n"
            "before = memtune.keep_heap()\n"
            "memtune.allow()\n"
            "first = memtune.keep_heap()\n"
            "print(before, first, memtune.keep_heap() is first)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    on_glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert out == ["False", str(on_glibc), "True"]


def test_the_digest_says_how_much_of_a_flood_count_is_estimated(tmp_path) -> None:
    """Review finding: 7 of 8 blocks after a flood are estimated, and the digest showed the
    estimate as a count; it now names the bytes estimated."""
    import os
    import re
    import subprocess
    import sys

    gen = "import sys\nfor i in range(1_200_000): sys.stdout.write(f'error: step {i} failed\\n')"
    env = dict(os.environ, CTXGATE_HOME=str(tmp_path / "home"))
    out = subprocess.run([sys.executable, "-m", "ctxgate", "run", "--", sys.executable, "-c", gen],
                         capture_output=True, text=True, env=env, timeout=300).stdout
    m = re.search(r"~([\d,]+) more keyword occurrences after it, ([\d,]+) bytes of it "
                  r"estimated from sampled blocks", out)
    assert m, out[-3000:]
    assert int(m.group(2).replace(",", "")) > 1_000_000
