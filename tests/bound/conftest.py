"""Fixtures for the record-bound tests."""

from __future__ import annotations

import pytest

from .helpers import RecordingArchive


@pytest.fixture
def recording_archive() -> RecordingArchive:
    return RecordingArchive()
