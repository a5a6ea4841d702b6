"""``ctxgate run`` for the common small output: run the command, pass its bytes through.

The hooks wrap every output-producing shell command in ``ctxgate run``, and most outputs are
small: fewer UTF-8 bytes than the digest threshold has tokens (a token is at least one byte,
so they can never be digested). For them the whole firewall — settings, SQLite, zstd, the
tokenizer, the command classifier — is start-up cost and nothing else. :func:`quick_run`
starts the command with only the interpreter's built-in modules (``posix_spawn``, ``poll``,
``_signal``; no ``subprocess``, ``re``, ``enum`` or ``site``) and reads its output into
memory. When the command ends below :func:`threshold_bytes` with no possible secret in it
(:data:`SECRET_HINTS`), the bytes are written to stdout exactly as the command wrote them and
the exit code is the command's. Such an output is not archived: it reaches the model whole.

Everything else continues in the full firewall, in the same process, on the same running
child and pipe (:func:`ctxgate.firewall.run.resume_command`): the bytes already read are fed
to the archive first, then the rest of the stream. That happens as soon as the output reaches
the threshold, a possible secret is seen (the shown-whole redaction then decides), a signal is
forwarded, the command leaves a background process holding the pipe, or it is killed by a
signal (each of which the full path reports in its notes).

:func:`quick_run` returns ``None`` without starting anything when it cannot decide alone: an
option other than ``--tool``, ``--session``, ``--min-tokens``, ``--sandbox``, ``-c``; a
``[firewall]`` or ``[archive]`` setting in the environment or the config file; a platform
other than Linux or macOS. The caller then runs the full command line.

Under ``--sandbox read-only`` the command starts inside the mechanism
:mod:`ctxgate.firewall.quicksandbox` remembered: bwrap is spawned directly; the namespace and
Landlock helpers run in a fork of this process (:mod:`ctxgate.firewall.quickenter`), not in a
second interpreter, when that is safe.

Only the built-in modules are imported at module level (a test holds it so); ``tomllib``,
the sandbox and the firewall load where they are needed.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: this module must not import typing
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SECRET_HINTS", "Child", "quick_run", "threshold_bytes"]

SECRET_HINTS: tuple[bytes, ...] = (
    b"private key",
    b"akia",
    b"asia",
    b"secret",
    b"ghp_",
    b"gho_",
    b"ghu_",
    b"ghs_",
    b"ghr_",
    b"github_pat_",
    b"glpat-",
    b"gldt-",
    b"glrt-",
    b"glptt-",
    b"glcbt-",
    b"gloas-",
    b"xox",
    b"hooks.slack.com",
    b"sk-",
    b"sk_live_",
    b"rk_live_",
    b"sk_test_",
    b"rk_test_",
    b"whsec_",
    b"aiza",
    b"ya29.",
    b"gocspx-",
    b"npm_",
    b"hf_",
    b"sg.",
    b"accountkey=",
    b"sharedaccesskey=",
    b"primarykey=",
    b"secondarykey=",
    b"sig=",
    b"eyj",
    b"authorization",
    b"bearer",
    b"basic",
    b'"auth"',
    b"://",
    b"mysql",
    b"mariadb",
    b"pass",
    b"pwd",
    b"token",
    b"key=",
    b"key:",
    b'key":',
    b"key':",
    b"key =",
    b"key\\",
    b"-key ",
)
"""Lower-case bytes without which no built-in secret kind can match: each kind's literals, or
a part of every one of its anchors (a test derives this from
:data:`ctxgate.archive.secret_kinds.SECRET_KINDS`). An output containing none of them is
shown exactly as written whatever ``redact_verbatim`` says."""

READ_BYTES = 1 << 16
"""Bytes asked for per read while the output is small."""
POLL_MS = 500
"""How often the loop checks whether the command exited, milliseconds."""
SETTINGS_ENV = (
    "CTXGATE_FIREWALL__",
    "CTXGATE_ARCHIVE__",
    "CTXGATE_MIN_TOKENS",
    "CTXGATE_TOKENIZER",
    "CTXGATE_ARCHIVE_BACKEND",
    "CTXGATE_REDIS_URL",
)
"""Environment variables (prefixes, compared upper-case) that change what ``run`` decides; a
test holds them equal to :mod:`ctxgate.settings`."""
DEFAULT_MIN_TOKENS = 2_000
DEFAULT_VERBATIM_MAX_TOKENS = 25_000
"""The defaults of :class:`~ctxgate.firewall.policy.FirewallPolicy` (a test holds them equal)."""
_OPTIONS = {
    "--tool": "tool",
    "--session": "session",
    "--min-tokens": "min_tokens",
    "--sandbox": "sandbox",
    "-c": "shell",
    "--shell": "shell",
}
_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def threshold_bytes(
    min_tokens: int = DEFAULT_MIN_TOKENS, verbatim_max_tokens: int = DEFAULT_VERBATIM_MAX_TOKENS
) -> int:
    """Outputs of fewer UTF-8 bytes than this are never digested: every threshold the
    decision can ask about (``min_tokens``, the ``verbatim_max_tokens`` ceiling) is at least
    this many tokens, and an output has at most one token per byte."""
    return min(min_tokens, verbatim_max_tokens) if verbatim_max_tokens > 0 else min_tokens


class Child:
    """A started process, as much of :class:`subprocess.Popen` as the run loop uses."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """The exit code (``-N`` when killed by signal N) once it exited, else None."""
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        while self.returncode is None:
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                self.returncode = 255  # reaped elsewhere: its status is lost
                break
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass


def _parse(argv: list[str]) -> dict[str, Any] | None:
    """The options ``quick_run`` knows, or None for anything else (``--raw``, ``--help`` …)."""
    opts: dict[str, Any] = {
        "tool": "shell",
        "session": None,
        "min_tokens": None,
        "sandbox": None,
        "shell": None,
        "argv": [],
    }
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            opts["argv"] = argv[i + 1 :]
            break
        if not word.startswith("-"):
            opts["argv"] = argv[i:]
            break
        name, eq, value = word.partition("=")
        dest = _OPTIONS.get(name)
        if dest is None or (eq and name == "-c"):
            return None
        if not eq:
            if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                return None  # `--session -- x`: the full parser refuses a value like that
            value = argv[i + 1]
            i += 1
        opts[dest] = value
        i += 1
    if (opts["shell"] is None) == (not opts["argv"]):
        return None  # neither or both: the full command line says why
    if opts["min_tokens"] is not None:
        try:
            opts["min_tokens"] = int(opts["min_tokens"])
        except ValueError:
            return None
        if opts["min_tokens"] < 0:
            return None
    if opts["sandbox"] is not None and opts["sandbox"] != "read-only":
        return None
    return opts


def _config_path(env: Any) -> str | None:
    """``settings.config_path`` without platformdirs (Linux and macOS), or None elsewhere."""
    if env.get("CTXGATE_CONFIG"):
        return os.path.expanduser(env["CTXGATE_CONFIG"])
    home = os.path.expanduser("~")
    if sys.platform.startswith("linux"):
        base = (env.get("XDG_CONFIG_HOME") or "").strip() or os.path.join(home, ".config")
    elif sys.platform == "darwin":
        base = os.path.join(home, "Library", "Application Support")
    else:
        return None
    return os.path.join(base, "ctxgate", "config.toml")


def _default_settings(env: Any) -> bool:
    """Whether ``run`` decides with the default firewall and archive settings."""
    for key in env:
        upper = key.upper()
        if upper.startswith("CTXGATE_") and upper.startswith(SETTINGS_ENV):
            return False
    path = _config_path(env)
    if path is None:
        return False
    if not os.path.isfile(path):
        return True
    try:
        import tomllib

        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except Exception:  # noqa: BLE001 - unreadable or invalid: the full path reports it
        return False
    return "firewall" not in data and "archive" not in data


def _may_hold_secret(data: bytes | bytearray) -> bool:
    low = data.lower()
    return any(hint in low for hint in SECRET_HINTS)


class _Signals:
    """SIGINT/SIGTERM/SIGHUP while the output is small: forwarded as the full run does."""

    def __init__(self, own_group: bool) -> None:
        import _signal

        self.own_group = own_group
        self.child: Child | None = None
        self.forwarded: int | None = None
        self.killed = False
        self.saved: dict[int, Any] = {}
        self._signal = _signal
        for name in _SIGNALS:
            sig = getattr(_signal, name, None)
            if sig is not None:
                try:
                    self.saved[sig] = _signal.signal(sig, self.on_signal)
                except (ValueError, OSError):
                    pass

    def on_signal(self, signum: int, frame: Any) -> None:
        again = self.forwarded is not None
        self.forwarded = signum
        if again and signum == self._signal.SIGINT:
            self.killed = True
            self.send(self._signal.SIGKILL)
        elif self.own_group or signum != self._signal.SIGINT:
            self.send(signum)

    def send(self, sig: int) -> None:
        if self.child is None:
            return  # not started: resume_command forwards it once it is
        try:
            if self.own_group:
                os.killpg(self.child.pid, sig)
            else:
                self.child.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass

    def restore(self) -> None:
        for sig, handler in self.saved.items():
            if handler is not None:  # None: installed outside Python, nothing to put back
                self._signal.signal(sig, handler)
        self.saved.clear()


def _spawn(args: list[str], own_group: bool) -> tuple[int, int]:
    """Start ``args`` with stdout and stderr on one new pipe; ``(pid, read fd)``."""
    import _signal

    r, w = os.pipe()  # both close-on-exec; dup2 gives the child inheritable copies
    try:
        actions = [(os.POSIX_SPAWN_DUP2, w, 1), (os.POSIX_SPAWN_DUP2, w, 2)]
        # as subprocess's restore_signals: Python ignores SIGPIPE and SIGXFSZ, a shell must not
        sigdef = tuple(getattr(_signal, n) for n in ("SIGPIPE", "SIGXFSZ") if hasattr(_signal, n))
        kwargs: dict[str, Any] = {"file_actions": actions, "setsigdef": sigdef}
        if own_group:
            kwargs["setpgroup"] = 0
        pid = os.posix_spawnp(args[0], args, os.environ, **kwargs)
    except BaseException:
        os.close(r)
        os.close(w)
        raise
    os.close(w)
    return pid, r


def _stdin_is_tty() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def _write(fd: int, data: bytes | bytearray) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except BrokenPipeError:
        pass  # `ctxgate run … | head`: the reader left


def quick_run(argv: list[str], *, environ: Any = None) -> int | None:
    """Run ``ctxgate run ARGV`` (the words after ``run``) on the small-output path.

    Returns the exit code, or ``None`` when nothing was started and the full command line
    must run it (see the module docstring).
    """
    env = os.environ if environ is None else environ
    opts = _parse(argv)
    if opts is None or not hasattr(os, "posix_spawnp") or not _default_settings(env):
        return None
    limit = threshold_bytes(
        DEFAULT_MIN_TOKENS if opts["min_tokens"] is None else opts["min_tokens"]
    )
    if limit <= 0:
        return None
    if opts["shell"] is not None:
        bash = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
        args = [bash, "-c", opts["shell"]]
    else:
        args = list(opts["argv"])
    found = None
    inner = args
    if opts["sandbox"] is not None:
        from ctxgate.firewall.quicksandbox import detected, wrap

        found = detected(env)
        args = wrap(found, args)
    own_group = not _stdin_is_tty()
    import time

    signals = _Signals(own_group)
    try:
        started_child = None
        if found is not None and found.mechanism in ("namespace", "landlock"):
            from ctxgate.firewall.quickenter import fork_enter

            started_child = fork_enter(found.mechanism, inner, own_group)
        pid, fd = started_child or _spawn(args, own_group)
    except OSError:
        signals.restore()
        return None  # not found, not executable: the full path says so, as it always did
    child = Child(pid)
    signals.child = child
    started = time.monotonic()
    buf = bytearray()
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    eof = False
    exited_at: float | None = None
    while not eof and len(buf) < limit and signals.forwarded is None:
        if exited_at is None and child.poll() is not None:
            exited_at = time.monotonic()
            if child.returncode is not None and child.returncode < 0:
                break  # killed by a signal: the full path records why
        elif exited_at is not None and time.monotonic() - exited_at >= 0.2:
            break  # a background process holds the pipe: the full path lingers and says so
        if not poller.poll(50 if exited_at is not None else POLL_MS):
            continue
        data = os.read(fd, READ_BYTES)
        if data:
            buf += data
        else:
            eof = True
    code: int | None = None
    if eof:
        os.close(fd)
        code = child.wait()
    if (
        code is None
        or code < 0
        or signals.forwarded is not None
        or len(buf) >= limit
        or _may_hold_secret(buf)
    ):
        try:
            return _continue(
                child,
                None if eof else fd,
                bytes(buf),
                opts,
                found,
                own_group,
                started,
                signals,
                exited_at,
            )
        finally:
            signals.restore()
    signals.restore()
    _write(1, buf)
    notes = _sandbox_notes(found, buf, code) if found is not None else ()
    if notes:
        _write(2, "".join(f"ctxgate: {note}\n" for note in notes).encode("utf-8"))
    return code


def _sandbox_notes(found: Any, data: bytes | bytearray, code: int) -> tuple[str, ...]:
    """What ``ReadOnlyRun.notes`` says of this run (its write-error watch only on a failure)."""
    from ctxgate.firewall.quicksandbox import not_sandboxed_note

    if found.mechanism is None:
        return (not_sandboxed_note(found),)
    if code == 0:
        return ()
    from ctxgate.sandbox.wrap import ReadOnlyRun

    guard = ReadOnlyRun("read-only", info=found)
    guard.feed(bytes(data))
    return guard.notes(code)


def _continue(
    child: Child,
    fd: int | None,
    head: bytes,
    opts: dict[str, Any],
    found: Any,
    own_group: bool,
    started: float,
    signals: _Signals,
    exited_at: float | None,
) -> int:
    """Hand the running command, its pipe and the bytes read so far to the full firewall."""
    from ctxgate._launch import ensure_site

    ensure_site()  # zstandard, the tokenizer … live in site-packages
    from ctxgate.app.application import App
    from ctxgate.errors import CtxgateError

    try:
        from ctxgate.firewall import memtune
        from ctxgate.firewall.run import resume_command

        memtune.allow()  # ctxgate run's own process: the allocator may be tuned

        app = App(settings={"firewall": {"min_tokens": opts["min_tokens"]}})
        policy = app.config.firewall
    except CtxgateError as exc:  # the command is already running: show its output whole
        from ctxgate.app.errors import cli_message

        sys.stderr.write(cli_message(exc) + "\n")
        sys.stderr.flush()
        return _drain(child, fd, head, signals)
    command = opts["shell"] if opts["shell"] is not None else _join(opts["argv"])
    guard = None
    if found is not None:
        from ctxgate.sandbox.wrap import ReadOnlyRun

        guard = ReadOnlyRun("read-only", info=found)
    with app.open_archive(failsafe=True) as archive:  # a broken archive never blocks the run
        result = resume_command(
            child,
            fd,
            head,
            command=command,
            archive=archive,
            policy=policy,
            tool=opts["tool"],
            session_id=opts["session"],
            guard=guard,
            own_group=own_group,
            started=started,
            forwarded=signals.forwarded,
            killed=signals.killed,
            exited_at=exited_at,
        )
    return result.exit_code


def _drain(child: Child, fd: int | None, head: bytes, signals: _Signals) -> int:
    _write(1, head)
    if fd is not None:
        while data := os.read(fd, READ_BYTES):
            _write(1, data)
        os.close(fd)
    code = child.wait()
    signals.restore()
    return 128 - code if code < 0 else code


def _join(args: list[str]) -> str:
    import shlex

    return shlex.join(args)
