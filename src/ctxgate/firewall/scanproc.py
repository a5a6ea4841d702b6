"""The scan of a large output on the other core: the scanner, forked into a child process.

The streaming scan (:mod:`ctxgate.firewall.scan`) is pure-Python work that holds the GIL,
while hashing and compression run on a worker thread; on a 100 MB output the scan is the
longest of the three. :class:`ScanSink` scans in-process until the output passes
:data:`FORK_AFTER_BYTES`, then forks: the child inherits the scanner exactly as it is and
scans the rest from a pipe while the parent redacts, hashes and compresses, and at the end it
sends back the :class:`~ctxgate.firewall.scan.ScanResult` (pickled). The result is the one
the in-process scanner would give (the child runs the same object on the same bytes).

Forking is opt-in (``CTXGATE_SCAN_FORK=1``) and used only where it is safe: on Linux, from
the main thread (the ``ctxgate run`` process; never inside a threaded server). It is off by
default because on the loaded 2-core machine it was measured on (load 7-11) it cost about
10 % more CPU (the pipe copy, copy-on-write faults, the pickled result) and no wall time: with
no idle core, a second process only adds work. It is meant for machines with a free core. The child ignores the run's signals (the parent forwards them to the command, and
the child ends when its pipe closes) and leaves with ``os._exit``. If the child cannot be
started or dies, the parent scans on in-process from where the child's pipe broke: the
archive is complete either way, and the digest then says which bytes its scan missed.
"""

from __future__ import annotations

import os
import struct
import sys
import threading

from ctxgate.firewall.scan import OutputScanner, ScanResult

__all__ = ["FORK_AFTER_BYTES", "ScanSink"]

FORK_AFTER_BYTES = 16 << 20
"""Outputs larger than this are scanned by a forked child (smaller ones never fork), bytes."""
_HEADER = struct.Struct("!cQ")
_PIPE_BYTES = 1 << 20


class ScanSink:
    """An :class:`OutputScanner` that moves to a child process once the output is large."""

    def __init__(self, scanner: OutputScanner) -> None:
        self.scanner = scanner
        self._child: _Child | None = None
        self._may_fork = _fork_allowed()
        self._lost: tuple[int, int] | None = None

    @property
    def keep_bytes(self) -> int:
        return self.scanner.keep_bytes

    @property
    def total_bytes(self) -> int:
        return self._child.total if self._child is not None else self.scanner.total_bytes

    @property
    def holds_all(self) -> bool:
        """Whether the kept prefix is the whole output (never once forked: the fork comes
        after more bytes than the prefix keeps)."""
        return self._child is None and self._lost is None and self.scanner.holds_all

    @property
    def lost(self) -> tuple[int, int] | None:
        """``(start, end)`` of the bytes a dead child took with it, or None."""
        return self._lost

    def feed(self, data: bytes) -> None:
        child = self._child
        if child is not None:
            if child.send(data):
                return
            self._fall_back(child)  # then this chunk is scanned here
        self.scanner.feed(data)
        if self._may_fork and self.scanner.total_bytes > max(FORK_AFTER_BYTES,
                                                             self.scanner.keep_bytes):
            self._may_fork = False
            self._child = _Child.start(self.scanner)

    def close(self, *, analyse: bool = True) -> ScanResult:
        child = self._child
        if child is not None:
            result = child.finish(analyse)
            if result is not None:
                return result
            self._fall_back(child)
        return self.scanner.close(analyse=analyse)

    def _fall_back(self, child: _Child) -> None:
        """The child died: scan on here; the bytes it had taken are lost to the scan."""
        self._child = None
        start = self.scanner.total_bytes
        self._lost = (start, child.total)
        self.scanner.skip(child.total - start)
        child.kill()


def _fork_allowed() -> bool:
    if os.environ.get("CTXGATE_SCAN_FORK", "0") != "1":
        return False  # opt-in: see the module docstring for why it is off by default
    return (sys.platform.startswith("linux") and hasattr(os, "fork")
            and threading.current_thread() is threading.main_thread())


class _Child:
    """The forked scanner and the two pipes to it."""

    def __init__(self, pid: int, out_fd: int, in_fd: int, total: int) -> None:
        self.pid = pid
        self.out_fd = out_fd
        self.in_fd = in_fd
        self.total = total

    @classmethod
    def start(cls, scanner: OutputScanner) -> _Child | None:
        import pickle  # noqa: F401 - imported before the fork: the child never imports

        try:
            data_r, data_w = os.pipe()
            res_r, res_w = os.pipe()
        except OSError:
            return None
        import signal

        _grow(data_w)
        stops = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        # no run signal may reach the child before it ignores them (the parent forwards them)
        saved = signal.pthread_sigmask(signal.SIG_BLOCK, stops)
        try:
            pid = os.fork()
        except OSError:
            signal.pthread_sigmask(signal.SIG_SETMASK, saved)
            for fd in (data_r, data_w, res_r, res_w):
                os.close(fd)
            return None
        if pid == 0:  # the child: scan what the pipe brings, send the result, leave
            code = 1
            try:
                for sig in stops:
                    signal.signal(sig, signal.SIG_IGN)
                signal.pthread_sigmask(signal.SIG_SETMASK, saved)
                os.close(data_w)
                os.close(res_r)
                _child_main(scanner, data_r, res_w)
                code = 0
            finally:
                os._exit(code)
        signal.pthread_sigmask(signal.SIG_SETMASK, saved)
        os.close(data_r)
        os.close(res_w)
        return cls(pid, data_w, res_r, scanner.total_bytes)

    def send(self, data: bytes) -> bool:
        try:
            _write_all(self.out_fd, _HEADER.pack(b"D", len(data)), data)
        except OSError:
            return False
        self.total += len(data)
        return True

    def finish(self, analyse: bool) -> ScanResult | None:
        import pickle

        try:
            _write_all(self.out_fd, _HEADER.pack(b"C", 1 if analyse else 0), b"")
            os.close(self.out_fd)
            self.out_fd = -1
            chunks = []
            while True:
                got = os.read(self.in_fd, 1 << 20)
                if not got:
                    break
                chunks.append(got)
            result = pickle.loads(b"".join(chunks)) if chunks else None
        except Exception:  # noqa: BLE001 - the child died or sent garbage: scan here
            result = None
        finally:
            self._reap()
        return result if isinstance(result, ScanResult) else None

    def kill(self) -> None:
        import signal

        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        self._reap()

    def _reap(self) -> None:
        for fd in (self.out_fd, self.in_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.out_fd = self.in_fd = -1
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _child_main(scanner: OutputScanner, data_fd: int, result_fd: int) -> None:
    import pickle

    reader = os.fdopen(data_fd, "rb", buffering=_PIPE_BYTES)
    analyse = True
    while True:
        header = reader.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return  # the parent went away without a close: nothing to send
        kind, n = _HEADER.unpack(header)
        if kind == b"C":
            analyse = bool(n)
            break
        data = reader.read(n)
        if len(data) < n:
            return
        scanner.feed(data)
    payload = pickle.dumps(scanner.close(analyse=analyse), protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(result_fd, payload, b"")


def _write_all(fd: int, head: bytes, body: bytes) -> None:
    view = memoryview(head + body) if len(body) < 65_536 else None
    if view is None:
        _write_view(fd, memoryview(head))
        _write_view(fd, memoryview(body))
    else:
        _write_view(fd, view)


def _write_view(fd: int, view: memoryview) -> None:
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _grow(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, 1031, _PIPE_BYTES)  # F_SETPIPE_SZ: fewer, larger writes
    except (ImportError, OSError):
        pass
