"""Firewall fixtures: a real SQLite archive in tmp_path and small output generators."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.archive import Archive, ArchivePolicy


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    """A real SQLite archive (redaction on, as by default)."""
    a = Archive.open(tmp_path / "fw-home", ArchivePolicy())
    yield a
    a.close()


@pytest.fixture
def mem_archive() -> Archive:
    """An in-process archive for unit tests of digest logic."""
    return Archive()
