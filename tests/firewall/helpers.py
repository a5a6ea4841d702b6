"""Generators of tool outputs with a known shape, shared by the firewall tests."""

from __future__ import annotations

import random


def build_log(n_lines: int, *, seed: int = 0, error_at: int | None = None,
              error: str = "src/lib.rs:12:5: error[E0308]: mismatched types") -> str:
    """A compile-like log of ``n_lines`` ordinary lines, one error line at ``error_at`` (1-based)."""
    rnd = random.Random(seed)
    lines = [f"   Compiling crate_{rnd.randint(0, 999)} v0.{i % 10}.{i % 7} (/src/crates/c{i})"
             for i in range(1, n_lines + 1)]
    if error_at is not None:
        lines[error_at - 1] = error
    return "\n".join(lines) + "\n"


def text_of_tokens(n_tokens: int) -> str:
    """Text with exactly ``n_tokens`` o200k_base tokens (``" a"`` is one token)."""
    from ctxgate.tokens import count_tokens

    text = "a" + " a" * (n_tokens - 1)
    assert count_tokens(text).count == n_tokens
    return text
