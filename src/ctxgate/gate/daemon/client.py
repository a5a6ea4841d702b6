"""Ask the decision daemon, starting it on demand; say when the caller must decide itself.

:func:`call` ends in one of three ways, and never in an allow it did not get from a daemon:

- the daemon's result (a dict the service returned);
- :class:`DaemonUnavailable`: no answer was obtained and none can be: switched off
  (``CTXGATE_NO_DAEMON``, ``[daemon] enabled = false``), a directory or socket that is not
  private, a peer that is not this user, a daemon of another protocol version or identity, one
  that could not be started within :data:`START_WAIT_SECONDS`. The caller decides in-process;
- :class:`DaemonFailed`: the daemon took the request and did not answer it (it died, hung past
  the deadline, or failed): the pre-tool hook blocks. A daemon that hung is killed, so the
  next call starts a fresh one.

Standard library only, and only what a hook needs (``_socket``, not ``socket``): this runs in a
process started for one tool call.
"""

from __future__ import annotations

import os
import sys
import time

from ctxgate import _jsonc as jsonc  # json without re: this runs in every hook
from ctxgate.gate.daemon.protocol import (
    NO_DAEMON_ENV,
    PROTOCOL_VERSION,
    DaemonPaths,
    ProtocolError,
    check_socket,
    daemon_paths,
    ensure_private_dir,
    identity,
    recv_frame,
    send_frame,
)

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: a hook must not import typing
if TYPE_CHECKING:
    from typing import Any

__all__ = ["START_WAIT_SECONDS", "DaemonFailed", "DaemonUnavailable", "call", "disabled"]

START_WAIT_SECONDS = 5.0
"""How long a hook waits for a daemon it started to listen before deciding in-process."""


_LAUNCH = ("import sys; sys.path[0] = sys.argv.pop(1); "
           "from ctxgate.gate.daemon.server import main; sys.exit(main())")
"""The daemon's start: it imports ctxgate from the directory this hook imported it from."""


class DaemonUnavailable(Exception):
    """No daemon answer can be had; decide in-process."""


class DaemonFailed(Exception):
    """The daemon took the request and did not answer it; the message says how."""


def disabled(environ: Any = None) -> bool:
    """Whether ``CTXGATE_NO_DAEMON`` switches the daemon off (any value but empty or 0)."""
    value = (os.environ if environ is None else environ).get(NO_DAEMON_ENV, "")
    return value.strip() not in ("", "0")


def _peer(sock: Any) -> tuple[int, int] | None:
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:  # pragma: no cover - no peer credentials: the 0700 directory guards
        return None
    raw = sock.getsockopt(_socket.SOL_SOCKET, option, 12)
    return int.from_bytes(raw[0:4], sys.byteorder), int.from_bytes(raw[4:8], sys.byteorder)


def _connect(paths: DaemonPaths, deadline: float) -> tuple[Any, int] | None:
    """A connection to a daemon of this user and its pid, or ``None`` when none listens."""
    import _socket

    try:
        check_socket(paths.socket)
    except FileNotFoundError:
        return None
    except (ProtocolError, OSError) as exc:
        raise DaemonUnavailable(str(exc)) from exc
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        sock.connect(paths.socket)
        creds = _peer(sock)
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None  # a stale socket file: its daemon is gone
    except OSError as exc:
        sock.close()
        raise DaemonUnavailable(f"cannot connect to {paths.socket}: {exc}") from exc
    if creds is not None and creds[1] != os.getuid():
        sock.close()
        raise DaemonUnavailable(f"the daemon on {paths.socket} runs as uid {creds[1]}, not "
                                "this user; nothing was sent to it")
    return sock, (creds[0] if creds else 0)


def _spawn(service: str, paths: DaemonPaths) -> Any:
    import subprocess

    import ctxgate

    log = os.open(paths.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(ctxgate.__file__)))
    try:
        return subprocess.Popen(
            [sys.executable, "-c", _LAUNCH, package_parent, "--service", service,
             "--key", paths.key],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            start_new_session=True, close_fds=True)
    finally:
        os.close(log)


def _wait_for_daemon(service: str, paths: DaemonPaths, until: float) -> tuple[Any, int]:
    try:
        proc = _spawn(service, paths)
    except OSError as exc:
        raise DaemonUnavailable(f"the daemon could not be started: {exc}") from exc
    pause = 0.002
    while True:
        found = _connect(paths, until)
        if found is not None:
            return found
        if os.path.exists(paths.off):
            raise DaemonUnavailable("[daemon] enabled = false in this configuration")
        code = proc.poll()
        if code not in (None, 0):
            raise DaemonUnavailable(f"the daemon exited with status {code} at start "
                                    f"(see {paths.log})")
        if time.monotonic() + pause > until:
            raise DaemonUnavailable(f"the daemon did not listen within {START_WAIT_SECONDS:g} s")
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def _kill(pid: int) -> None:
    if pid > 0:
        import signal

        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _exchange(sock: Any, pid: int, header: bytes, body: bytes,
              deadline: float) -> dict[str, Any]:
    try:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        send_frame(sock, header)
        send_frame(sock, body)
    except OSError as exc:
        sock.close()
        raise DaemonUnavailable(f"the daemon did not take the request: {exc}") from exc
    try:
        raw = recv_frame(sock, deadline)
    except TimeoutError as exc:
        _kill(pid)  # hung: the next call starts a fresh daemon
        raise DaemonFailed("the decision daemon did not answer in time; it was stopped, "
                           "retry the call") from exc
    except (EOFError, OSError, ProtocolError) as exc:
        raise DaemonFailed(f"the decision daemon ended before it answered ({exc}); retry "
                           "the call") from exc
    finally:
        sock.close()
    try:
        reply = jsonc.loads(raw.decode("utf-8", "surrogatepass"))
    except ValueError as exc:
        raise DaemonUnavailable(f"the daemon's reply is not JSON: {exc}") from exc
    if not isinstance(reply, dict):
        raise DaemonUnavailable("the daemon's reply is not an object")
    return reply


def call(service: str, op: str, fields: dict[str, Any], body: bytes, *,
         timeout: float, start: bool = True) -> dict[str, Any]:
    """Send ``op`` with ``fields`` and ``body`` to the daemon of ``service``; its result.

    Args:
        timeout: seconds for everything (start, request, answer).
        start: start a daemon when none listens.

    Raises:
        DaemonUnavailable: decide in-process. DaemonFailed: block (see the module).
    """
    if disabled():
        raise DaemonUnavailable(f"{NO_DAEMON_ENV} is set")
    deadline = time.monotonic() + timeout
    ident = identity(service)
    paths = daemon_paths(ident)
    try:
        ensure_private_dir(paths.directory)
    except ProtocolError as exc:
        raise DaemonUnavailable(str(exc)) from exc
    if os.path.exists(paths.off):
        raise DaemonUnavailable("[daemon] enabled = false in this configuration")
    header = jsonc.dumps({"protocol": PROTOCOL_VERSION, "identity": ident, "op": op, **fields},
                         ensure_ascii=True).encode("ascii")
    why = ""
    for _attempt in range(2):
        found = _connect(paths, deadline)
        if found is None:
            if not start:
                raise DaemonUnavailable("no daemon listens")
            found = _wait_for_daemon(service, paths,
                                     min(deadline, time.monotonic() + START_WAIT_SECONDS))
        reply = _exchange(*found, header, body, deadline)
        status = reply.get("status")
        if status == "ok":
            result = reply.get("result")
            if not isinstance(result, dict):
                raise DaemonUnavailable("the daemon's result is not an object")
            if "unavailable" in result:
                raise DaemonUnavailable(str(result["unavailable"]))
            return result
        if status == "error":
            raise DaemonFailed(f"the decision daemon failed: {reply.get('error')}")
        why = f"the daemon answered {status!r}" + (
            f" ({reply['reason']})" if reply.get("reason") else "")
        if status != "stale":  # another protocol or identity: do not use it
            break
    raise DaemonUnavailable(why)
