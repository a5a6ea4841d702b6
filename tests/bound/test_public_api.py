"""The bound package's table of contents, and its cold-start import cost."""

from __future__ import annotations

import subprocess
import sys

import ctxgate.bound as bound


def test_all_is_sorted_and_resolvable() -> None:
    assert bound.__all__ == sorted(bound.__all__)
    for name in bound.__all__:
        assert getattr(bound, name) is not None


def test_import_pulls_in_no_heavy_modules() -> None:
    code = ("import sys, ctxgate.bound; "
            "print(sorted(m for m in ('typer', 'pydantic', 'sqlite3', 'zstandard', "
            "'ctxgate.archive.archive') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"
