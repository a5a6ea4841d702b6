"""The real Claude Code CLI with the hooks answered by the decision daemon (as installed: on).

Two `claude -p` sessions in a row (the helpers of :mod:`test_claude_code`): the first starts
the daemon and its unrequested ``rm -rf`` is blocked with the directory intact; the second is
served by the same daemon, whose fast path allows ``ls`` in the read-only sandbox.
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path

import pytest

from .test_claude_code import content_text, project, run_claude  # noqa: F401 - the fixture


def _daemon_pids(run_dir: Path) -> list[int]:
    pids = []
    for lock in (run_dir / "ctxgate").glob("g-*.lock"):
        text = lock.read_text().strip()
        if text.isdigit() and Path(f"/proc/{text}").exists():
            pids.append(int(text))
    return pids


@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch):
    path = Path(tempfile.mkdtemp(prefix="cgc", dir="/tmp"))
    os.chmod(path, 0o700)
    monkeypatch.delenv("CTXGATE_NO_DAEMON")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))  # the hooks' socket goes in <it>/ctxgate
    yield path
    for pid in _daemon_pids(path):
        os.kill(pid, signal.SIGKILL)
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def test_sessions_through_the_daemon_block_and_allow(project: Path,  # noqa: F811
                                                     runtime_dir: Path) -> None:
    s = run_claude(project, "What is in the README?", "rm -rf victim")
    assert (project / "victim" / "keep.txt").read_text(encoding="utf-8") == "precious\n"
    text = content_text(s.tool_result)
    assert s.tool_result.get("is_error") is True
    assert "Tool gate:" in text and "not run" in text, text
    [daemon] = _daemon_pids(runtime_dir)
    sockets = list((runtime_dir / "ctxgate").glob("g-*.sock"))
    assert len(sockets) == 1 and sockets[0].stat().st_mode & 0o777 == 0o600
    started = time.monotonic()
    s = run_claude(project, "What files are here?", "ls")
    text = content_text(s.tool_result)
    assert s.tool_result.get("is_error") is False, text
    assert text.split() == ["README.md", "build.sh", "victim"], text
    assert "--sandbox read-only -c ls" in s.debug_log
    assert _daemon_pids(runtime_dir) == [daemon]  # the same daemon answered the second
    print(f"\nsecond session {time.monotonic() - started:.2f} s")
