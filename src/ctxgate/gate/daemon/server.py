"""The daemon process: one per identity, serving requests one at a time until idle.

Started by a client (``main(["--service", MODULE, "--key", KEY])``, with ctxgate imported
from the client's package directory, which replaces ``sys.path[0]``) in its own session, with
the client's environment and working directory:

1. It computes its own identity and exits unless its key is ``KEY`` (the client and the
   daemon must agree on what they are), then leaves the working directory for ``/``.
2. It takes an exclusive ``flock`` on the key's lock file, waiting up to
   :data:`LOCK_WAIT_SECONDS` (a predecessor may be handing over); without it, another daemon
   serves and this one exits. Holding the lock, a socket file left behind is stale (its
   daemon died) and is removed.
3. It binds the socket with umask 0177 (so it is 0600 from its first instant): from here on
   hooks queue on it rather than waiting for a socket to appear.
4. It starts the service (``MODULE.start(identity)``): a service that cannot start, or whose
   configuration turns the daemon off (it writes the ``.off`` marker), answers the queued
   requests with that status (the hooks decide in-process) and the daemon exits. Otherwise
   it warms the service (imports, the decision model) while requests queue, and serves: each connection's peer must be this user
   (``SO_PEERCRED``), its request must name this protocol version and this identity, and the
   service must not be stale (code or config file changed since start), else it gets a
   status saying why and the client decides in-process.
5. After ``idle_seconds`` without a request (or when stale, or on SIGTERM/SIGINT/SIGHUP) it
   unlinks the socket first, so new clients start a successor, serves the connections
   already queued, and exits, releasing the lock.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import time
from typing import Any

from ctxgate.gate.daemon.protocol import (
    PROTOCOL_VERSION,
    DaemonPaths,
    ProtocolError,
    daemon_paths,
    ensure_private_dir,
    identity,
    identity_key,
    recv_frame,
    send_frame,
)

__all__ = ["LOCK_WAIT_SECONDS", "REQUEST_READ_SECONDS", "main", "peer_credentials", "serve"]

LOCK_WAIT_SECONDS = 5.0
"""How long a starting daemon waits for the lock a predecessor still holds."""
REQUEST_READ_SECONDS = 10.0
"""How long a connection may take to send its request."""


class _Stop(BaseException):
    """A signal asked the daemon to exit (a BaseException: no handler may turn it into an
    answer)."""


def peer_credentials(sock: Any) -> tuple[int, int] | None:
    """``(pid, uid)`` of the process at the other end of a Unix socket, or ``None`` where the
    platform has no ``SO_PEERCRED``."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:  # pragma: no cover - macOS: the 0700 directory is the guard
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, option, 12)
    return int.from_bytes(raw[0:4], sys.byteorder), int.from_bytes(raw[4:8], sys.byteorder)


def _log(message: str) -> None:
    sys.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} ctxgate daemon[{os.getpid()}]: "
                     f"{message}\n")
    sys.stderr.flush()


def _take_lock(paths: DaemonPaths) -> int | None:
    import fcntl

    fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    waited_until = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > waited_until:
                os.close(fd)
                return None
            time.sleep(0.01)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _bind(path: str) -> socket.socket:
    try:
        os.unlink(path)  # we hold the lock: a socket file here is a dead daemon's
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


def _unlink_if_ours(path: str, inode: int) -> None:
    try:
        if os.lstat(path).st_ino == inode:
            os.unlink(path)
    except OSError:
        pass


def serve(service_name: str, key: str) -> int:
    """Run the daemon for ``service_name`` (see the module); returns the exit status."""
    import importlib

    ident = identity(service_name)
    if identity_key(ident) != key:
        _log(f"identity {identity_key(ident)} is not the requested {key}; the client's "
             "environment or import path differs from this process's; not serving")
        return 3
    paths = daemon_paths(ident)
    try:
        ensure_private_dir(paths.directory)
    except ProtocolError as exc:
        _log(str(exc))
        return 3
    os.chdir("/")  # requests change directory; nothing is imported from any of them
    lock = _take_lock(paths)
    if lock is None:
        return 0  # another daemon serves this identity
    try:
        listener = _bind(paths.socket)  # first: hooks queue here instead of giving up
        inode = os.lstat(paths.socket).st_ino
        try:
            service = importlib.import_module(service_name).start(ident)
        except Exception as exc:  # noqa: BLE001 - the queued hooks decide in-process
            _log(f"the service could not start: {type(exc).__name__}: {exc}")
            _refuse_queued(listener, paths.socket, inode, "unavailable", str(exc))
            return 1
        if not service.enabled:
            with open(paths.off, "w", encoding="utf-8") as fh:
                fh.write("[daemon] enabled = false in this configuration\n")
            _refuse_queued(listener, paths.socket, inode, "disabled",
                           "[daemon] enabled = false")
            return 0
        return _serve_loop(listener, inode, paths, ident, service)
    finally:
        os.close(lock)


def _refuse_queued(listener: socket.socket, path: str, inode: int, status: str,
                   reason: str) -> None:
    """Unlink the socket, then answer every queued request with ``status`` (not served)."""
    _unlink_if_ours(path, inode)
    listener.setblocking(False)
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            break
        try:
            conn.setblocking(True)
            deadline = time.monotonic() + REQUEST_READ_SECONDS
            recv_frame(conn, deadline)
            recv_frame(conn, deadline)
            send_frame(conn, json.dumps({"status": status, "reason": reason}).encode())
        except (OSError, EOFError, ProtocolError) as exc:
            _log(f"dropped a queued connection: {exc}")
        finally:
            conn.close()
    listener.close()


def _serve_loop(listener: socket.socket, inode: int, paths: DaemonPaths, ident: dict,
                service: Any) -> int:
    def stop(signum: int, _frame: object) -> None:
        raise _Stop(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    service.warm()  # requests wait on the socket meanwhile
    _log(f"serving {paths.socket} (idle exit after {service.idle_seconds:g} s)")
    last = time.monotonic()
    why = "idle"
    try:
        while True:
            remaining = service.idle_seconds - (time.monotonic() - last)
            if remaining <= 0:
                break
            ready, _, _ = select.select([listener], [], [], remaining)
            if not ready:
                continue
            conn, _ = listener.accept()
            if _serve_one(conn, ident, service, paths.socket, inode) == "stale":
                why = "stale"
                break
            last = time.monotonic()
    except _Stop as exc:
        why = str(exc)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # finish the hand-over
        _unlink_if_ours(paths.socket, inode)
        _drain(listener, ident, service)
        listener.close()
    _log(f"exiting ({why})")
    return 0


def _drain(listener: socket.socket, ident: dict, service: Any) -> None:
    """Serve the connections queued before the socket was unlinked (they sent a request)."""
    listener.setblocking(False)
    while True:
        try:
            conn, _ = listener.accept()
        except (BlockingIOError, OSError):
            return
        conn.setblocking(True)
        _serve_one(conn, ident, service, None, 0)


def _serve_one(conn: socket.socket, ident: dict, service: Any, path: str | None,
               inode: int) -> str:
    """Answer one connection; returns its status."""
    status = "closed"
    try:
        creds = peer_credentials(conn)
        if creds is not None and creds[1] != os.getuid():
            _log(f"refused a connection from uid {creds[1]}")
            return "refused"
        deadline = time.monotonic() + REQUEST_READ_SECONDS
        header = json.loads(recv_frame(conn, deadline))
        body = recv_frame(conn, deadline)
        conn.settimeout(None)
        reply: dict[str, Any]
        if not isinstance(header, dict) or header.get("protocol") != PROTOCOL_VERSION:
            reply = {"status": "protocol", "protocol": PROTOCOL_VERSION}
        elif header.get("identity") != ident:
            reply = {"status": "identity"}
        else:
            stale = service.stale()
            if stale is not None:
                if path is not None:
                    _unlink_if_ours(path, inode)  # before answering: the retry starts anew
                reply = {"status": "stale", "reason": stale}
            else:
                try:
                    reply = {"status": "ok", "result": service.handle(
                        str(header.get("op")), header, body)}
                except Exception as exc:  # noqa: BLE001 - the client blocks on this
                    _log(f"request failed: {type(exc).__name__}: {exc}")
                    reply = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
        status = reply["status"]
        send_frame(conn, json.dumps(reply, ensure_ascii=False).encode("utf-8",
                                                                      "surrogatepass"))
    except (OSError, EOFError, ValueError, ProtocolError) as exc:
        _log(f"dropped a connection: {type(exc).__name__}: {exc}")
    finally:
        conn.close()
    return status


def main(argv: list[str] | None = None) -> int:
    """``--service MODULE --key KEY`` (see the module)."""
    import argparse

    parser = argparse.ArgumentParser(prog="ctxgate-daemon",
                                     description="The warm local decision daemon (started "
                                     "by hooks on demand; not meant to be run by hand).")
    parser.add_argument("--service", required=True)
    parser.add_argument("--key", required=True)
    ns = parser.parse_args(argv)
    return serve(ns.service, ns.key)


if __name__ == "__main__":
    sys.exit(main())
