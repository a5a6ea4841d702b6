"""Deterministic generators of tool-output shapes for benchmarks and tests (shared; import freely).

Every generator yields byte chunks (so 1 GiB never sits in memory) and is a pure function of
its arguments: the same ``(shape, size_bytes, seed)`` always gives byte-identical output.

Shapes:

* ``short_lines``  log-like lines of ~60-90 bytes, an ``ERROR`` line every ~500 lines;
* ``long_lines``   lines of 2-20 kB (minified-JS-like tokens);
* ``one_line``     no newline at all;
* ``jsonl``        JSON Lines records with nested fields;
* ``binary``       pseudo-random bytes with NULs and invalid UTF-8 (poorly compressible).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

__all__ = ["SHAPES", "generate", "write_file"]

SHAPES = ("short_lines", "long_lines", "one_line", "jsonl", "binary")

_BLOCK = 1 << 20
"""Bytes per yielded chunk (approximately), bytes."""

_WORDS = ("alpha beta gamma delta request worker cache miss hit retry timeout build test "
          "passed failed module compile link fetch parse index token span").split()


def _short_lines(rng: random.Random) -> Iterator[bytes]:
    n = 0
    while True:
        parts = []
        for _ in range(2000):
            n += 1
            level = b"ERROR" if n % 499 == 0 else (b"WARN" if n % 97 == 0 else b"INFO")
            words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 7)))
            parts.append(b"2026-11-29T12:%02d:%02d.%03d %s worker-%d %s id=%d\n" % (
                n // 3600 % 60, n // 60 % 60, n % 1000, level, n % 16, words.encode(), n))
        yield b"".join(parts)


def _long_lines(rng: random.Random) -> Iterator[bytes]:
    while True:
        parts = []
        for _ in range(64):
            length = rng.randint(2_000, 20_000)
            words = []
            size = 0
            while size < length:
                w = rng.choice(_WORDS) + rng.choice(("(", ")", ";", "=", ".", ","))
                words.append(w)
                size += len(w)
            parts.append("".join(words).encode() + b"\n")
        yield b"".join(parts)


def _one_line(rng: random.Random) -> Iterator[bytes]:
    while True:
        yield " ".join(rng.choice(_WORDS) for _ in range(120_000)).encode() + b" "


def _jsonl(rng: random.Random) -> Iterator[bytes]:
    n = 0
    while True:
        parts = []
        for _ in range(2000):
            n += 1
            rec = {"id": n, "level": rng.choice(["info", "warn", "error"]),
                   "msg": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 8))),
                   "tags": [rng.choice(_WORDS) for _ in range(rng.randint(0, 3))],
                   "ctx": {"worker": n % 16, "latency_ms": round(rng.random() * 100, 3)}}
            parts.append(json.dumps(rec, separators=(",", ":")).encode() + b"\n")
        yield b"".join(parts)


def _binary(rng: random.Random) -> Iterator[bytes]:
    while True:
        yield rng.randbytes(_BLOCK)


_GEN = {"short_lines": _short_lines, "long_lines": _long_lines, "one_line": _one_line,
        "jsonl": _jsonl, "binary": _binary}

_POOL_BYTES = 8 << 20
"""Size of the generated material that blocks are cut from, bytes (keeps 1 GiB fast)."""


def _pool(shape: str, rng: random.Random) -> tuple[bytes, list[int]]:
    """Fresh material of ``shape`` and the offsets where its lines start."""
    parts = []
    size = 0
    for block in _GEN[shape](rng):
        parts.append(block)
        size += len(block)
        if size >= _POOL_BYTES:
            break
    pool = b"".join(parts)
    starts = [0]
    if shape not in ("one_line", "binary"):
        pos = pool.find(b"\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = pool.find(b"\n", pos + 1)
        starts.pop()  # the pool ends with a newline; no line starts at its end
    return pool, starts


def generate(shape: str, size_bytes: int, seed: int = 0) -> Iterator[bytes]:
    """Yield exactly ``size_bytes`` bytes of ``shape`` in chunks of about 1 MiB.

    Blocks are cut at line starts from a pool of generated material (random places, so
    consecutive blocks differ), which keeps generation far faster than ingest.
    """
    if shape not in _GEN:
        raise ValueError(f"unknown shape {shape!r}; choose one of {', '.join(SHAPES)}")
    rng = random.Random(f"{shape}:{seed}")
    if shape == "binary":
        blocks = _binary(rng)
    else:
        pool, starts = _pool(shape, rng)

        def cut() -> Iterator[bytes]:
            import bisect

            while True:
                a = starts[rng.randrange(len(starts))] if len(starts) > 1 else \
                    rng.randrange(len(pool) // 2)
                b = a + _BLOCK
                if len(starts) > 1:
                    i = bisect.bisect_left(starts, b)
                    b = starts[i] if i < len(starts) else len(pool)
                yield pool[a:min(b, len(pool))]

        blocks = cut()
    left = size_bytes
    for block in blocks:
        if left <= 0:
            return
        piece = block[:left]
        left -= len(piece)
        yield piece


def write_file(path: Path, shape: str, size_bytes: int, seed: int = 0) -> Path:
    """Write a generated output to ``path`` (reused when it already has the right size)."""
    path = Path(path)
    if path.exists() and path.stat().st_size == size_bytes:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        for piece in generate(shape, size_bytes, seed):
            f.write(piece)
    tmp.replace(path)
    return path
