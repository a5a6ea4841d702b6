"""ctxgate.firewall.scanproc: a large output's scan in a forked child gives the same result."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from ctxgate.firewall import scanproc
from ctxgate.firewall.scan import OutputScanner

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _gen import generate  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux")


def _data() -> bytes:
    return (b"".join(generate("short_lines", 3_000_000)) + b"Traceback (most recent call last)\n"
            + b"".join(generate("jsonl", 3_000_000)) + b"no newline at the end")


def _feed(sink, data: bytes, step: int = 300_007) -> None:
    for i in range(0, len(data), step):
        sink.feed(data[i:i + step])


def test_the_forked_scan_equals_the_in_process_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXGATE_SCAN_FORK", "1")
    monkeypatch.setattr(scanproc, "FORK_AFTER_BYTES", 1_000_000)
    data = _data()
    plain = OutputScanner(keep_bytes=65_536)
    _feed(plain, data)
    sink = scanproc.ScanSink(OutputScanner(keep_bytes=65_536))
    _feed(sink, data)
    assert sink._child is not None  # it did fork
    assert not sink.holds_all and sink.total_bytes == len(data)
    got = sink.close()
    assert got == plain.close() and sink.lost is None
    sink2 = scanproc.ScanSink(OutputScanner(keep_bytes=65_536))
    _feed(sink2, data)
    assert sink2.close(analyse=False).lines == data.count(b"\n") + 1


def test_small_outputs_and_the_default_never_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXGATE_SCAN_FORK", "1")
    sink = scanproc.ScanSink(OutputScanner())
    _feed(sink, b"x\n" * 1000)
    assert sink._child is None
    monkeypatch.delenv("CTXGATE_SCAN_FORK")
    monkeypatch.setattr(scanproc, "FORK_AFTER_BYTES", 10)
    sink = scanproc.ScanSink(OutputScanner())
    _feed(sink, _data())
    assert sink._child is None


def test_a_dead_child_is_replaced_by_scanning_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXGATE_SCAN_FORK", "1")
    monkeypatch.setattr(scanproc, "FORK_AFTER_BYTES", 1_000_000)
    data = _data()
    sink = scanproc.ScanSink(OutputScanner(keep_bytes=65_536))
    half = len(data) // 2
    _feed(sink, data[:half])
    child = sink._child
    assert child is not None
    os.kill(child.pid, signal.SIGKILL)
    os.waitpid(child.pid, 0)
    child.pid = os.getpid() + 10_000_000  # already reaped: _reap must not wait for it again
    _feed(sink, data[half:])
    result = sink.close()
    assert sink.lost is not None and sink.lost[0] >= 1_000_000
    assert result.total_bytes == len(data)  # byte counts stay true
    assert result.lines < data.count(b"\n") + 1  # the lost newlines are not counted
