"""Run a command through the firewall: stream its output into the archive, print the result.

:func:`run_command` starts the child with its stdout and stderr on pipes (one pipe, so the
two stay merged in the order they were written, or two on request), and copies every chunk
into an :class:`~ctxgate.firewall.pipeline.OutputPipeline` — archive writer, scanner and
token meter — holding nothing but their bounded buffers. When the child is done it prints the
verbatim output or the digest and returns the child's exit code.

A background process that keeps the output pipe open after the command exited (``cmd &``)
does not hang the run: reading stops :data:`LINGER_SECONDS` later, with a note.

Signals: SIGINT, SIGTERM and SIGHUP are forwarded to the child (its whole process group when
it has its own); a second SIGINT kills it. Either way the output that came is archived and
digested. ``timeout`` sends SIGTERM, then SIGKILL after :data:`KILL_GRACE_SECONDS`; the exit
code is then 124, as with GNU ``timeout``. A child killed by signal N exits 128+N. An entry
whose command was stopped (timeout, a forwarded signal, killed by a signal) records why as its
``interrupted`` metadata and is ``truncated``, and the digest header says so. If ``ctxgate run``
itself is SIGKILLed nothing can be recorded: its upload's lease lapses and the next store
reclaims the chunks.

The archive never blocks the command: if it cannot be opened or fails while storing, the
command runs to its end, its exit code is kept, and the output is shown bounded with a
``not archived (<why>; fix: …)`` note (see :mod:`ctxgate.firewall.pipeline`). While the
command runs, the loop refreshes each upload's lease (:meth:`OutputPipeline.tick`).
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from ctxgate.errors import FirewallError, UsageError
from ctxgate.firewall.pipeline import FirewallResult, OutputPipeline
from ctxgate.firewall.policy import DEFAULT_FIREWALL_POLICY, FirewallPolicy

if TYPE_CHECKING:
    from ctxgate.archive import Archive

__all__ = ["KILL_GRACE_SECONDS", "TIMEOUT_EXIT_CODE", "RunResult", "resume_command", "run_command"]

KILL_GRACE_SECONDS = 3.0
"""Seconds between SIGTERM and SIGKILL when the timeout fires or a stop is forced."""
TIMEOUT_EXIT_CODE = 124
"""Exit code when the timeout killed the command (as GNU ``timeout``)."""
READ_BYTES = 1 << 20
"""Bytes asked for per read from the child's pipe."""
LINGER_SECONDS = 5.0
"""Once the command exited, reading stops after this many seconds without new output: a
background process that keeps the pipe open (``cmd &``) is left running, with a note. Time
spent digesting output already read never counts (a slow chunk is not silence)."""
LINGER_MAX_SECONDS = 60.0
"""Reading stops this long after the command exited even if a background process keeps
writing (it is left running, with the same note)."""
POLL_SECONDS = 0.5
"""How often the loop checks whether the command exited, seconds."""
_PIPE_BYTES = 1 << 20
_F_SETPIPE_SZ = 1031


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """The outcome of :func:`run_command`."""

    exit_code: int
    """The child's exit status; 128+N when killed by signal N; 124 after the timeout."""
    results: tuple[FirewallResult, ...]
    """One result for merged output; ``(stdout, stderr)`` with ``separate_stderr``."""
    command: str = ""
    timed_out: bool = False
    interrupted: int | None = None
    """The signal number that was forwarded to stop the child, if any."""
    duration_seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def result(self) -> FirewallResult:
        """The (first) firewall result."""
        return self.results[0]


def run_command(
    argv: Sequence[str] | None = None,
    *,
    shell: str | None = None,
    archive: Archive,
    policy: FirewallPolicy = DEFAULT_FIREWALL_POLICY,
    tool: str = "shell",
    raw: bool = False,
    inline: bool = False,
    timeout: float | None = None,
    separate_stderr: bool = False,
    stdout: IO[bytes] | None = None,
    stderr: IO[bytes] | None = None,
    session_id: str | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    stdin: Any = subprocess.DEVNULL,
    expand_tool: str = "expand",
    sandbox: str | None = None,
) -> RunResult:
    """Run ``argv`` (or ``bash -c shell``) through the firewall and print what the model gets.

    Args:
        argv: program and arguments (exclusive with ``shell``).
        shell: a shell command string run with ``bash -c`` (``/bin/sh`` if bash is missing).
        archive: where the output is stored.
        policy: the firewall policy.
        tool: the tool name recorded and used for the decision.
        raw: deliver the output verbatim, live, never digested (still archived).
        inline: deliver verbatim up to ``inline_max_bytes``.
        timeout: seconds before the command is stopped (None: no limit).
        separate_stderr: archive and decide stdout and stderr separately (stdout's result
            goes to ``stdout``, stderr's to ``stderr``); default merged in write order.
        stdout, stderr: where results are written (default this process's binary streams).
        session_id, cwd, env: recorded with the entry / passed to the child.
        stdin: the child's standard input, as for :class:`subprocess.Popen`; default
            ``DEVNULL`` so a library caller's own stdin (an MCP stdio channel) is never
            read by the command; ``None`` inherits it (the CLI does).
        expand_tool: the MCP expand tool's name in drill-down calls.
        sandbox: ``"read-only"`` runs the command where it cannot write
            (:mod:`ctxgate.sandbox`); unsandboxed with a note when this machine has none.

    Raises:
        UsageError: no command, both ``argv`` and ``shell``, or a timeout <= 0.
        FirewallError: the command could not be started (not found, not executable).
    """
    if (argv is None) == (shell is None) or (argv is not None and not argv):
        raise UsageError("give a command: either argv ('ctxgate run -- CMD ARGS') or a shell "
                         "string ('ctxgate run -c \"CMD | CMD\"'), not both")
    if timeout is not None and timeout <= 0:
        raise UsageError(f"--timeout must be > 0 seconds, got {timeout!r}")
    out = stdout if stdout is not None else sys.stdout.buffer
    err = stderr if stderr is not None else sys.stderr.buffer
    if shell is not None:
        bash = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
        args: list[str] = [bash, "-c", shell]
        command = shell
    else:
        args = list(argv or [])
        command = subprocess.list2cmdline(args) if os.name == "nt" else _join(args)
    guard = None
    if sandbox is not None:  # the one hook point of ctxgate.sandbox
        from ctxgate.sandbox import ReadOnlyRun

        guard = ReadOnlyRun(sandbox)
        args = guard.wrap(args, cwd)
    own_group = not _stdin_is_tty()
    stopper = _Stopper(None, own_group)
    with stopper.handling_signals():  # from before the start: a signal is never lost
        try:
            proc = subprocess.Popen(
                args, stdin=stdin, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE if separate_stderr else subprocess.STDOUT,
                cwd=cwd, env=env, bufsize=0, process_group=0 if own_group else None,
            )
        except OSError as exc:
            raise FirewallError(f"cannot run {args[0]!r}: {exc.strerror or exc}; check the "
                                "program name and PATH") from exc
        stopper.attach(proc)
        started = time.monotonic()
        streams = [proc.stdout] + ([proc.stderr] if separate_stderr else [])
        return _drive(proc, streams, stopper, guard, started, command=command,
                      archive=archive, policy=policy, tool=tool, raw=raw, inline=inline,
                      timeout=timeout, separate_stderr=separate_stderr, out=out, err=err,
                      session_id=session_id, expand_tool=expand_tool)


def resume_command(
    child: Any,
    fd: int | None,
    head: bytes,
    *,
    command: str,
    archive: Archive,
    policy: FirewallPolicy = DEFAULT_FIREWALL_POLICY,
    tool: str = "shell",
    session_id: str | None = None,
    guard: Any = None,
    own_group: bool = True,
    started: float,
    forwarded: int | None = None,
    killed: bool = False,
    exited_at: float | None = None,
) -> RunResult:
    """Go on with a command :mod:`ctxgate.firewall.passthrough` started, as :func:`run_command`
    would have: ``head`` (the bytes already read from its merged output) goes to the archive
    first, then the rest of ``fd`` (None: already at its end).

    Args:
        child: the running (or exited) command, a :class:`~ctxgate.firewall.passthrough.Child`.
        fd: the read end of its stdout+stderr pipe, closed here; None when at EOF.
        head: every byte read from it so far.
        command: the command as recorded (the shell string, or the joined argv).
        guard: the ``--sandbox`` :class:`~ctxgate.sandbox.ReadOnlyRun` it was started under.
        started: :func:`time.monotonic` when it started.
        forwarded, killed: a signal already forwarded to it, and whether SIGKILL followed.
        exited_at: :func:`time.monotonic` when it was seen to exit, if it was.
    """
    stopper = _Stopper(child, own_group)
    stopper.forwarded = forwarded
    stopper.killed = killed
    if forwarded is not None:
        stopper.kill_at = time.monotonic() + KILL_GRACE_SECONDS * 3
    streams = [_Fd(fd)] if fd is not None else []
    with stopper.handling_signals():
        return _drive(child, streams, stopper, guard, started, command=command,
                      archive=archive, policy=policy, tool=tool, raw=False, inline=False,
                      timeout=None, separate_stderr=False, out=sys.stdout.buffer,
                      err=sys.stderr.buffer, session_id=session_id, expand_tool="expand",
                      head=head, exited_at=exited_at)


class _Fd:
    """A pipe's read end as the run loop uses a stream (``fileno``, ``close``)."""

    def __init__(self, fd: int):
        self.fd = fd

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _drive(proc: Any, streams: list[Any], stopper: _Stopper, guard: Any, started: float, *,
           command: str, archive: Archive, policy: FirewallPolicy, tool: str, raw: bool,
           inline: bool, timeout: float | None, separate_stderr: bool, out: IO[bytes],
           err: IO[bytes], session_id: str | None, expand_tool: str, head: bytes = b"",
           exited_at: float | None = None) -> RunResult:
    """Copy the running command's output through the firewall, then print what the model gets."""
    names = ("stdout", "stderr") if separate_stderr else ("output",)
    pipes = [OutputPipeline(archive=archive, tool=tool, policy=policy, command=command,
                            raw=raw, inline=inline, session_id=session_id,
                            extra={"stream": name}, expand_tool=expand_tool)
             for name in names]
    if guard is not None:
        pipes = [guard.watch(p) for p in pipes]
    live = [out, err] if raw else None
    if head:
        pipes[0].feed(head)
    _pump(streams, pipes, live, stopper, timeout, started, exited_at)
    code = proc.wait()
    duration = time.monotonic() - started
    exit_code = TIMEOUT_EXIT_CODE if stopper.timed_out else (128 - code if code < 0 else code)
    notes = stopper.notes(timeout) + (guard.notes(exit_code) if guard is not None else ())
    interrupted = stopper.interruption(timeout, code)
    if interrupted is not None and not stopper.timed_out and stopper.forwarded is None:
        notes = (f"interrupted: {interrupted}", *notes)  # killed from outside
    results = tuple(p.finish(exit_code=exit_code, notes=notes, truncated=stopper.lingered,
                             streamed=raw, interrupted=interrupted) for p in pipes)
    for result, sink in zip(results, (out, err), strict=False):
        if result.text is None:
            continue  # already delivered live (raw)
        if result.digested:
            data = result.text.encode("utf-8") + b"\n"
        else:  # verbatim: the bytes exactly as the command wrote them, when kept
            data = result.data if result.data is not None else result.text.encode("utf-8")
        try:
            sink.write(data)
            sink.flush()
        except BrokenPipeError:
            pass  # `ctxgate run … | head`: the reader left; the output is archived anyway
    # A digest carries the notes in its header; verbatim output gets them on stderr, and so
    # does a verbatim stream's own "not archived" note.
    said = [] if any(r.digested for r in results) else list(notes)
    for r in results:
        if not r.digested:
            said += [n for n in r.notes if n not in notes and n not in said]
    if said:
        try:
            err.write("".join(f"ctxgate: {note}\n" for note in said).encode("utf-8"))
            err.flush()
        except BrokenPipeError:
            pass
    return RunResult(exit_code=exit_code, results=results, command=command,
                     timed_out=stopper.timed_out, interrupted=stopper.forwarded,
                     duration_seconds=duration, notes=notes)


def _pump(streams: list[Any], pipes: list[OutputPipeline],
          live: list[IO[bytes] | None] | None,
          stopper: _Stopper, timeout: float | None, started: float,
          exited_at: float | None = None) -> None:
    """Copy every pipe into its pipeline until all are at EOF (the child's writers closed)."""
    sel = selectors.DefaultSelector()
    for k, stream in enumerate(streams):
        _grow_pipe(stream.fileno())
        sel.register(stream.fileno(), selectors.EVENT_READ, k)
    try:
        open_fds = len(streams)
        last_read = time.monotonic()
        while open_fds:
            now = time.monotonic()
            if exited_at is None and stopper.proc.poll() is not None:
                exited_at = now
            if exited_at is not None and (
                    now - max(exited_at, last_read) >= LINGER_SECONDS
                    or now - exited_at >= LINGER_MAX_SECONDS):
                stopper.lingered = True  # a background process still holds the pipe open
                break
            deadlines = [POLL_SECONDS]
            if timeout is not None and not stopper.timed_out:
                deadlines.append(started + timeout - now)
            if stopper.kill_at is not None:
                deadlines.append(stopper.kill_at - now)
            events = sel.select(max(0.0, min(deadlines)))
            for pipe in pipes:
                pipe.tick()  # the uploads' leases (one clock read unless one is due)
            if not events:
                if timeout is not None and not stopper.timed_out \
                        and time.monotonic() >= started + timeout:
                    stopper.stop_for_timeout()
                stopper.maybe_kill()
                continue
            for key, _ in events:
                k = key.data
                try:
                    data = os.read(key.fd, READ_BYTES)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(key.fd)
                    open_fds -= 1
                    continue
                pipes[k].feed(data)
                last_read = time.monotonic()
                if live is not None and live[k] is not None:
                    try:
                        live[k].write(data)
                        live[k].flush()
                    except (BrokenPipeError, ValueError):
                        live[k] = None  # the reader went away: keep archiving, stop echoing
            stopper.maybe_kill()
    finally:
        sel.close()
        for stream in streams:
            stream.close()


class _Stopper:
    """Forwards signals to the child and enforces the timeout and the kill grace period."""

    def __init__(self, proc: subprocess.Popen | None, own_group: bool):
        self.proc: Any = proc
        self.own_group = own_group
        self.forwarded: int | None = None
        self.timed_out = False
        self.kill_at: float | None = None
        self.killed = False
        self.lingered = False
        self._lock = threading.Lock()

    def attach(self, proc: subprocess.Popen) -> None:
        """The child started: forward a signal that came while it was starting."""
        self.proc = proc
        if self.forwarded is not None:
            self.send(self.forwarded)
            if self.kill_at is None:
                self.kill_at = time.monotonic() + KILL_GRACE_SECONDS * 3

    def send(self, sig: int) -> None:
        if self.proc is None:
            return  # not started yet: attach() forwards it
        if self.proc.poll() is not None and not self.own_group:
            return
        try:
            if self.own_group:
                os.killpg(self.proc.pid, sig)
            else:
                self.proc.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass

    def on_signal(self, signum: int, frame: Any) -> None:
        with self._lock:
            again = self.forwarded is not None
            self.forwarded = signum
        if again and signum == signal.SIGINT:
            self.kill_now()
            return
        # with a shared process group the terminal already sent SIGINT to the child
        if self.own_group or signum != signal.SIGINT:
            self.send(signum)
        if self.kill_at is None:
            self.kill_at = time.monotonic() + KILL_GRACE_SECONDS * 3

    def stop_for_timeout(self) -> None:
        self.timed_out = True
        self.send(signal.SIGTERM)
        self.kill_at = time.monotonic() + KILL_GRACE_SECONDS

    def maybe_kill(self) -> None:
        if self.kill_at is not None and not self.killed and time.monotonic() >= self.kill_at:
            self.kill_now()

    def kill_now(self) -> None:
        self.killed = True
        self.send(signal.SIGKILL)

    def notes(self, timeout: float | None) -> tuple[str, ...]:
        out = []
        if self.timed_out:
            out.append(f"interrupted: stopped after the {timeout:g} s timeout"
                       + (" (SIGKILL)" if self.killed else " (SIGTERM)"))
        elif self.forwarded is not None:
            name = signal.Signals(self.forwarded).name
            out.append(f"interrupted: {name} forwarded to the command"
                       + ("; then SIGKILL" if self.killed else ""))
        if self.lingered:
            out.append(f"stopped reading {LINGER_SECONDS:g} s after the command exited: a "
                       "background process still holds its output open")
        return tuple(out)

    def interruption(self, timeout: float | None, code: int) -> str | None:
        """Why the command was stopped before it ended (the entry's ``interrupted``), or None."""
        if self.timed_out:
            return (f"timeout after {timeout:g} s ("
                    + ("SIGTERM, then SIGKILL)" if self.killed else "SIGTERM)"))
        if self.forwarded is not None:
            return (f"{signal.Signals(self.forwarded).name} forwarded to the command"
                    + ("; then SIGKILL" if self.killed else ""))
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the command was killed by {name}"
        return None

    def handling_signals(self):
        return _SignalScope(self)


class _SignalScope:
    _SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self, stopper: _Stopper):
        self.stopper = stopper
        self.saved: dict[int, Any] = {}

    def __enter__(self) -> _SignalScope:
        if threading.current_thread() is threading.main_thread():
            for sig in self._SIGNALS:
                try:
                    self.saved[sig] = signal.signal(sig, self.stopper.on_signal)
                except (ValueError, OSError):
                    pass
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)


def _grow_pipe(fd: int) -> None:
    """Ask Linux for a 1 MiB pipe buffer (fewer, larger reads); harmless where unsupported."""
    try:
        import fcntl

        fcntl.fcntl(fd, _F_SETPIPE_SZ, _PIPE_BYTES)
    except (ImportError, OSError):
        pass


def _stdin_is_tty() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def _join(args: list[str]) -> str:
    import shlex

    return shlex.join(args)
