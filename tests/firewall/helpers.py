"""Generators of tool outputs with a known shape, shared by the firewall tests."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path


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


def cargo_test(root: Path, lib_rs: str, *test_args: str,
               backtrace: str = "0") -> subprocess.CompletedProcess[str]:
    """Real ``cargo test --offline -q [-- TEST_ARGS]`` of a one-file library crate at ``root``
    (std only, its own target directory)."""
    import pytest

    if shutil.which("cargo") is None:
        pytest.fail("cargo is needed (rustup)")
    (root / "src").mkdir()
    (root / "Cargo.toml").write_text('[package]\nname = "demo"\nversion = "0.1.0"\n'
                                     'edition = "2021"\n', encoding="utf-8")
    (root / "src" / "lib.rs").write_text(lib_rs, encoding="utf-8")
    env = dict(os.environ, RUST_BACKTRACE=backtrace, CARGO_TARGET_DIR=str(root / "target"))
    argv = ["cargo", "test", "--offline", "-q", *(["--", *test_args] if test_args else [])]
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)
