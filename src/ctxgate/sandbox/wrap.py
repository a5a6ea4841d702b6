"""Put a command inside the read-only sandbox, and tell the model when a write failed there.

:func:`sandbox_argv` returns the argv that runs a command under a mechanism (a prefix: bwrap,
the stdlib helper ``_enter.py``, or ``sandbox-exec``). :class:`ReadOnlyRun` is what
``ctxgate run --sandbox read-only`` holds: the wrapped argv, a watch over the output for
read-only / permission errors, and the notes for the model (one ``not sandboxed: why`` when no
mechanism is available; one line about the failed write when the command failed with such an
error).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["MODES", "WRITE_FAILED_NOTE", "ReadOnlyRun", "bwrap_argv", "sandbox_argv",
           "sandbox_exec_argv"]

MODES = ("read-only",)
"""Values of ``ctxgate run --sandbox``."""

WRITE_FAILED_NOTE = (
    "this command ran in a read-only sandbox ({mechanism}; fast path); a write failed: the "
    "gate allowed it without a model call because it looked read-only, so nothing can be "
    "written. To change files, run a command that does so openly; the decision model will "
    "judge it")
"""The note added when a sandboxed command failed with a read-only/permission error."""

_WRITE_ERROR = re.compile(
    rb"read-only file system|permission denied|operation not permitted|\bEROFS\b|\bEACCES\b"
    rb"|\bEPERM\b|errno 30\b|errno 13\b|errno 1\b", re.IGNORECASE)
_TAIL = 64
"""Bytes of the previous chunk kept so a message split between two reads is still seen."""

_MACOS_PROFILE = """(version 1)
(allow default)
(deny file-write*)
(allow file-write-data
  (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty")
  (regex #"^/dev/ttys[0-9]+$") (regex #"^/dev/fd/[0-9]+$"))
"""
"""sandbox-exec profile: everything allowed but writing files (devices above excepted)."""


def bwrap_argv(exe: str, cwd: str | None, argv: Sequence[str]) -> list[str]:
    """bwrap: / bound read-only, a private /dev (device nodes only) and a /proc of a new PID
    namespace (so /proc/PID/cwd of a process outside cannot reach a writable mount). The
    network is shared: the sandbox stops file writes, not writes through sockets. Without
    ``cwd`` bwrap keeps the directory it was started in."""
    chdir = ["--chdir", os.path.abspath(cwd)] if cwd is not None else []
    return [exe, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc",
            "--die-with-parent", *chdir, "--", *argv]


def sandbox_exec_argv(exe: str, argv: Sequence[str]) -> list[str]:
    """macOS ``sandbox-exec`` with a deny-file-write profile (not tested on this project's CI,
    which is Linux)."""
    return [exe, "-p", _MACOS_PROFILE, *argv]


def sandbox_argv(mechanism: str, argv: Sequence[str], *, cwd: str | None = None) -> list[str]:
    """The argv that runs ``argv`` under ``mechanism`` (a name from :func:`detect`).

    The sandboxed command starts in the directory the returned argv is started in, or in
    ``cwd`` when given (bwrap changes to it itself).
    """
    import shutil

    from ctxgate.sandbox.detect import ENTER_SCRIPT

    if mechanism == "bwrap":
        return bwrap_argv(shutil.which("bwrap") or "bwrap", cwd, argv)
    if mechanism in ("namespace", "landlock"):
        return [sys.executable, "-I", "-S", str(ENTER_SCRIPT), mechanism, "--", *argv]
    if mechanism == "sandbox-exec":
        return sandbox_exec_argv(shutil.which("sandbox-exec") or "/usr/bin/sandbox-exec", argv)
    raise ValueError(f"unknown sandbox mechanism {mechanism!r}")


class ReadOnlyRun:
    """One ``ctxgate run --sandbox read-only``: wraps the argv, watches the output, adds notes.

    Use: ``args = guard.wrap(args, cwd)``; ``pipes = [guard.watch(p) for p in pipes]``;
    after the command exited, ``guard.notes(exit_code)``.
    """

    def __init__(self, mode: str = "read-only", *, info: Any = None):
        from ctxgate.errors import UsageError
        from ctxgate.sandbox.detect import detect

        if mode not in MODES:
            raise UsageError(f"--sandbox {mode!r}: the only sandbox is 'read-only'")
        self.info = info if info is not None else detect()
        self.mechanism: str | None = self.info.mechanism
        self.saw_write_error = False
        self._tail = b""

    def wrap(self, argv: Sequence[str], cwd: str | None = None) -> list[str]:
        if self.mechanism is None:
            return list(argv)
        return sandbox_argv(self.mechanism, argv, cwd=cwd)

    def feed(self, data: bytes) -> None:
        if self.saw_write_error or self.mechanism is None:
            return
        window = self._tail + data
        if _WRITE_ERROR.search(window):
            self.saw_write_error = True
        self._tail = window[-_TAIL:]

    def watch(self, pipe: Any) -> Any:
        """A stand-in for an output pipeline that lets this watch see every chunk."""
        return _Watched(pipe, self)

    def notes(self, exit_code: int) -> tuple[str, ...]:
        if self.mechanism is None:
            return (f"not sandboxed: {self.info.why_not}; the command ran with normal "
                    "permissions",)
        if exit_code != 0 and self.saw_write_error:
            return (WRITE_FAILED_NOTE.format(mechanism=self.mechanism),)
        return ()


class _Watched:
    def __init__(self, pipe: Any, guard: ReadOnlyRun):
        self._pipe = pipe
        self._guard = guard

    def feed(self, data: bytes) -> None:
        self._guard.feed(data)
        self._pipe.feed(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pipe, name)
