"""Shared fixtures: a private CTXGATE_HOME per test and no CTXGATE_* leaking in from outside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Strip every CTXGATE_* variable, point CTXGATE_HOME/CTXGATE_CONFIG into tmp_path, and
    keep hooks off the decision daemon (``CTXGATE_NO_DAEMON``)."""
    for key in list(os.environ):
        if key.startswith("CTXGATE_"):
            monkeypatch.delenv(key, raising=False)
    home = tmp_path / "ctxgate-home"
    monkeypatch.setenv("CTXGATE_HOME", str(home))
    monkeypatch.setenv("CTXGATE_CONFIG", str(tmp_path / "no-config.toml"))
    # hook subprocesses decide in-process unless a test starts a daemon (tests/gate/daemon)
    monkeypatch.setenv("CTXGATE_NO_DAEMON", "1")
    return home
