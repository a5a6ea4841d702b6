"""The pre-token bound: never above the real token count, and it spares the tokenizer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxgate.firewall.meter import TokenMeter, pretoken_bound
from ctxgate.tokens import _load_encoding

# digits of other scripts (², ٣, ൬, ５) between ASCII digits, Unicode spaces that split
# runs (U+0085, U+00A0, U+2003) and a control that does not (U+001C), letters, marks,
# punctuation, and what pre-tokenizers treat specially (contractions, special-token text)
_PIECES = st.sampled_from([
    "0", "12", "345", "2026-11-29T12:06:19.748", "²", "٣", "൬", "５", "a", "Zz", "é", "中文",
    "e\u0301", "'s", "'LL", "<|endoftext|>", "--", "::", ".", "/", "=", "\ufffd",
    " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2003",
])


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=60))
def test_the_bound_never_exceeds_the_real_count(name: str, pieces: list[str]) -> None:
    text = "".join(pieces)
    real = len(_load_encoding(name).encode(text, disallowed_special=()))
    assert pretoken_bound(text.encode("utf-8"), 10**9) <= real


@pytest.mark.parametrize("text", [
    "\xa0 \xa0",  # found by hypothesis: runs of Unicode spaces are no pre-tokens of their own
    "\u2003 \u2003", "a \xa0 b", "\xa0a\xa0 \xa0", "1\xa02 ３", "\x85 \x85 x",
])
@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_unicode_spaces_between_ascii_spaces_are_not_counted(name: str, text: str) -> None:
    real = len(_load_encoding(name).encode(text, disallowed_special=()))
    assert pretoken_bound(text.encode("utf-8"), 10**9) <= real


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=400))
def test_the_bound_holds_for_bytes_that_are_not_utf8(data: bytes) -> None:
    text = data.decode("utf-8", "replace")  # what the meter tokenizes
    real = len(_load_encoding("o200k_base").encode(text, disallowed_special=()))
    assert pretoken_bound(data, 10**9) <= real


def test_the_bound_is_counted_in_pieces_cut_at_whitespace() -> None:
    line = b"2026-11-29T12:06:19.748 INFO worker-12 id=22748\n"
    data = line * 5_000  # 240 KB: several 64 KiB pieces
    assert pretoken_bound(data, 10**9) == pretoken_bound(line, 10**9) * 5_000
    assert pretoken_bound(data, 100) < pretoken_bound(data, 10**9)  # stops early
    digits = b"1234567" * 20_000  # one run without whitespace: never cut inside it
    assert pretoken_bound(digits, 10**9) == len(digits) // 3 + 1


def test_a_held_output_over_the_limit_is_decided_without_the_tokenizer() -> None:
    line = b"2026-11-29T12:06:19.748 INFO worker-12 parse alpha id=22748\n"
    meter = TokenMeter("o200k_base", 2_000, defer_bytes=2_000, hold_bytes=2_000 * 128)
    for _ in range(300):  # 18 KB: the byte bound (>= bytes / 128) cannot decide
        meter.feed(line)
    meter.close()
    assert meter._counter is None and meter.counted == 0
    assert meter.bound >= 2_000 and meter.reaches(2_000)
    assert meter.describe().startswith(f">={meter.bound:,} tokens (o200k_base pre-token bound")
    assert meter.count().count >= meter.bound and not meter.exact


def test_prose_under_the_bound_is_still_counted_exactly() -> None:
    text = b"word " * 1_000  # 1,000 words: the bound stays under the 2,000 limit
    meter = TokenMeter("o200k_base", 2_000, defer_bytes=2_000, hold_bytes=2_000 * 128)
    meter.feed(text)
    meter.close()
    real = len(_load_encoding("o200k_base").encode(text.decode()))
    assert meter.bound == 0 and meter.exact and meter.count().count == real
