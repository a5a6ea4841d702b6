"""Shared fixtures: a private CTXGATE_HOME per test and no CTXGATE_* leaking in from outside."""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path

import pytest

SESSION_MARK = f"PYTEST_CTXGATE_SESSION={uuid.uuid4().hex}"
"""Inherited by every process the tests start (no CTXGATE_ prefix: env filters keep it)."""
os.environ[SESSION_MARK.split("=")[0]] = SESSION_MARK.split("=")[1]


@pytest.fixture(autouse=True, scope="session")
def no_daemon_outlives_the_session():
    """Stop decision daemons this session's tests started and left to their idle exit."""
    yield
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for entry in proc.iterdir():
        try:
            if not entry.name.isdigit() or b"ctxgate.gate.daemon.server" not in (
                    entry / "cmdline").read_bytes():
                continue
            if SESSION_MARK.encode() in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGTERM)
        except OSError:
            continue


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
