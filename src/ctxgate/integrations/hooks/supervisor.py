"""A supervisor for ``ctxgate hook pre`` that cannot fail open: every fault ends in exit 2.

Claude Code and Codex run a tool call unless its ``PreToolUse`` hook exits 2 (or answers
``deny`` in JSON with exit 0); any other status — 1 from a crash, 128+N from a signal — lets
the call through. So the process the harness spawns is a thin supervisor, started before any
heavy import:

1. It installs handlers for SIGTERM, SIGINT, SIGHUP and SIGPIPE that block the call: kill the
   worker, write the reason on stderr, ``os._exit(2)``.
2. It forks a **worker** that does everything else (imports, reading the payload, the gate's
   decision) with its stdout redirected into a pipe to the supervisor.
3. It waits in ``select()`` for the worker's answer, with the ``--deadline`` as the timeout.
   The supervisor runs no Python code while it waits, so it is never stuck behind a worker
   holding the GIL in C code (a long regex, a native model): the deadline fires on time.
4. It passes the answer on only when the worker exited 0 and the answer was written to
   stdout whole; a worker that exited 2 has already written its reason; any other end (a
   crash, a signal, a deadline, an unwritable stdout) blocks with a reason on stderr.

What cannot be covered: a SIGKILL of the supervisor itself (no process can answer that), and a
signal in the first milliseconds of interpreter start-up, before :func:`supervise` runs
(measured in ``tests/integrations/test_hook_faults.py``). Platforms without ``fork`` fall back
to the in-process watchdog thread. Only the standard library is imported here.
"""

from __future__ import annotations

import _signal as signal  # not `signal`: its enum wrappers would be most of this start-up
import errno
import os
import select
import sys
import time

__all__ = ["BLOCK_EXIT", "BLOCK_PREFIX", "BLOCK_SIGNALS", "DEFAULT_DEADLINE_SECONDS",
           "deadline_from_args", "is_worker", "supervise"]

BLOCK_EXIT = 2
"""Exit status that makes Claude Code and Codex block the tool call and show stderr."""
BLOCK_PREFIX = "ctxgate blocked this call: "
"""How every block reason on stderr starts."""
DEFAULT_DEADLINE_SECONDS = 30.0
"""``ctxgate hook pre --deadline`` default, seconds."""
BLOCK_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGPIPE")
                      if hasattr(signal, name))
"""Signals that end the hook by blocking the call."""

_READ_BYTES = 1 << 20
_POLL_SECONDS = 0.2  # how often the worker's status is checked while its pipe stays open

_state: dict[str, int | None] = {"worker": None, "worker_side": 0}


def is_worker() -> bool:
    """Whether this process is the supervised worker (the supervisor enforces the deadline)."""
    return bool(_state["worker_side"])


def deadline_from_args(args: list[str]) -> float:
    """The ``--deadline`` seconds given in ``args``, or the default if absent or unreadable.

    An unreadable value is left to the command-line parser in the worker, which then exits 2
    with a usage error (a block).
    """
    for i, arg in enumerate(args):
        value = None
        if arg == "--deadline" and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--deadline="):
            value = arg.split("=", 1)[1]
        if value is not None:
            try:
                seconds = float(value)
            except ValueError:
                return DEFAULT_DEADLINE_SECONDS
            return seconds if 0 < seconds < 86_400 else DEFAULT_DEADLINE_SECONDS
    return DEFAULT_DEADLINE_SECONDS


def _write_stderr(text: str) -> None:
    data = text.encode("utf-8", "replace")
    try:
        while data:
            data = data[os.write(2, data):]
    except OSError:
        pass  # stderr closed: the exit status still blocks


def _block(reason: str) -> None:
    """Kill the worker, say why on stderr, exit 2. Never returns."""
    pid = _state["worker"]
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    _write_stderr(f"{BLOCK_PREFIX}{reason}\n")
    os._exit(BLOCK_EXIT)


def _signal_name(signum: int) -> str:
    """``SIGTERM`` for 15 (the ``signal`` module's enum loads only for unusual signals)."""
    for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGPIPE", "SIGKILL", "SIGSEGV", "SIGABRT",
                 "SIGBUS", "SIGQUIT"):
        if getattr(signal, name, None) == signum:
            return name
    import signal as full

    try:
        return full.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _on_signal(signum: int, _frame: object) -> None:
    name = _signal_name(signum)
    if signum == getattr(signal, "SIGPIPE", None):
        _block(f"{name}: the harness closed the hook's output before the answer was written; "
               "retry the call")
    _block(f"the hook was interrupted by {name} before it answered; retry the call, or ask "
           "the user")


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"was killed by {_signal_name(os.WTERMSIG(status))}"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"


def supervise(deadline: float) -> None:
    """Become the supervisor; return only in the worker process.

    In the supervisor this never returns: it exits with the worker's status when that is 0 or
    2 (after forwarding the worker's stdout), and with 2 on any fault.
    """
    for sig in BLOCK_SIGNALS:
        signal.signal(sig, _on_signal)
    if not hasattr(os, "fork"):  # pragma: no cover - Windows: the in-process watchdog applies
        return
    try:
        read_end, write_end = os.pipe()
        pid = os.fork()
    except OSError as exc:
        _block(f"the hook could not start its worker ({exc}); retry the call")
    if pid == 0:  # worker: ordinary signal behaviour, stdout into the pipe
        _state["worker_side"] = 1
        for sig in BLOCK_SIGNALS:
            signal.signal(sig, signal.SIG_IGN if sig == getattr(signal, "SIGPIPE", None)
                          else signal.default_int_handler if sig == signal.SIGINT
                          else signal.SIG_DFL)
        os.close(read_end)
        os.dup2(write_end, 1)
        os.close(write_end)
        return
    _state["worker"] = pid
    os.close(write_end)
    _supervise_worker(pid, read_end, deadline)


def _supervise_worker(pid: int, read_end: int, deadline: float) -> None:
    started = time.monotonic()
    due = started + deadline
    chunks: list[bytes] = []
    eof = False
    status = None
    while status is None:
        remaining = due - time.monotonic()
        if remaining <= 0:
            _block(f"the gate did not decide within {deadline:g} s (a hung decision model or "
                   "a slow start); retry, or ask the user")
        if not eof:
            ready, _, _ = select.select([read_end], [], [], min(remaining, _POLL_SECONDS))
            if ready:
                data = os.read(read_end, _READ_BYTES)
                if data:
                    chunks.append(data)
                    continue
                eof = True
        else:
            time.sleep(min(remaining, 0.002))
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            status = wait_status
    _state["worker"] = None
    while not eof:  # the worker has exited; take what is left in the pipe without waiting
        ready, _, _ = select.select([read_end], [], [], 0)
        data = os.read(read_end, _READ_BYTES) if ready else b""
        eof = not data
        chunks.append(data)
    os.close(read_end)
    code = os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None
    if code == BLOCK_EXIT:
        os._exit(BLOCK_EXIT)  # the worker blocked and wrote its reason
    if code != 0:
        _block(f"the gate's worker {_ended(status)} before it decided; retry the call")
    _forward(b"".join(chunks))
    os._exit(0)


def _forward(answer: bytes) -> None:
    """Write the worker's answer to stdout whole, or block."""
    view = memoryview(answer)
    try:
        while view:
            view = view[os.write(1, view):]
    except OSError as exc:
        reason = ("the harness closed the hook's output" if exc.errno == errno.EPIPE
                  else f"the answer could not be written ({exc.strerror})")
        _block(f"{reason}; retry the call")


def main_guard(args: list[str]) -> None:
    """Supervise when ``args`` (``sys.argv[1:]``) is a ``hook pre`` run; else do nothing."""
    if len(args) >= 2 and args[0] == "hook" and args[1] == "pre" and not (
            {"--help", "-h"} & set(args[2:])):
        supervise(deadline_from_args(args[2:]))


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use `ctxgate hook pre`")
