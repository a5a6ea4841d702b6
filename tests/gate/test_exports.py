"""The gate package's public surface: sorted, complete, lazy."""

from __future__ import annotations

import subprocess
import sys

import ctxgate.gate as gate
import ctxgate.gate.backends as backends


def test_all_is_sorted_and_resolves():
    for pkg in (gate, backends):
        assert pkg.__all__ == sorted(pkg.__all__)
        for name in pkg.__all__:
            assert getattr(pkg, name) is not None


def test_importing_the_gate_loads_nothing_heavy():
    code = ("import sys, ctxgate.gate, ctxgate.gate.policy; "
            "print(sorted(m for m in ('bashlex', 'sqlite3', 'typer', 'numpy', 'httpx', "
            "'ctxgate.gate.gate') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
