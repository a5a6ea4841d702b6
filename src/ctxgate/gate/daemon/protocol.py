"""The daemon's wire protocol, socket location and identity; standard library only.

Where: one directory per user, ``$CTXGATE_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/ctxgate``,
else ``$TMPDIR/ctxgate-<uid>`` (``/tmp`` when unset). It must be a real directory (not a
symlink) owned by this user with mode 0700, and the socket in it a socket owned by this user
with no permission bits for group or others (0600); anything else is refused, and the hook
decides in-process.

Which daemon: a daemon serves exactly one **identity**: the protocol version, the user, the
service (its handlers module), the interpreter and its prefixes, the ctxgate package directory
and version, the ``CTXGATE_*`` environment with ``HOME``/``XDG_CONFIG_HOME``/``XDG_DATA_HOME``
(they decide the home and the config file) and the variables that decide the import path
(``PYTHONPATH``, ``PYTHONHOME``, ``PYTHONNOUSERSITE``, ``PYTHONUSERBASE``, ``PYTHONSAFEPATH``),
and the config file's type, inode, size and modification time. ``sys.path`` itself is not
part of it: a hook started with ``-S`` (no ``site``) has a shorter one than the daemon, which
imports ctxgate from the hook's package directory (see :mod:`.client`). A digest of the identity names the socket, so a changed configuration gets
its own daemon (the old one exits when idle), and the identity itself is compared in every
request: a daemon never answers for a configuration it was not started with.

Frames: an 8-byte big-endian length, then that many bytes. A request is a JSON header frame
then a raw body frame (the hook's stdin, unchanged); a reply is one JSON frame.
"""

from __future__ import annotations

import os
import stat
import sys
import time

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: a hook must not import typing
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_FRAME_BYTES", "NO_DAEMON_ENV", "PROTOCOL_VERSION", "RUNTIME_DIR_ENV",
           "DaemonPaths", "ProtocolError", "check_socket", "config_signature", "daemon_paths",
           "ensure_private_dir", "identity", "identity_key", "recv_frame", "runtime_dir",
           "send_frame"]

PROTOCOL_VERSION = 1
"""Version of the frames and fields; a daemon answering another version is not used."""
RUNTIME_DIR_ENV = "CTXGATE_RUNTIME_DIR"
"""Environment variable naming the directory of the daemon's socket (default: see module)."""
NO_DAEMON_ENV = "CTXGATE_NO_DAEMON"
"""Set to a non-empty value other than ``0`` to make hooks decide in-process, always."""
MAX_FRAME_BYTES = 320 * 1024 * 1024
"""Largest frame read, bytes (a hook payload may be 256 MiB)."""

_IDENTITY_ENV = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "PYTHONPATH", "PYTHONHOME",
                 "PYTHONNOUSERSITE", "PYTHONUSERBASE", "PYTHONSAFEPATH")
_NOT_IDENTITY = frozenset({RUNTIME_DIR_ENV, NO_DAEMON_ENV})


class ProtocolError(Exception):
    """The socket, its directory or a frame is not what this protocol allows."""


def runtime_dir(environ: Any = None) -> str:
    """The directory that holds this user's daemon sockets (not created here)."""
    env = os.environ if environ is None else environ
    explicit = env.get(RUNTIME_DIR_ENV)
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "ctxgate")
    tmp = env.get("TMPDIR") or "/tmp"
    return os.path.join(tmp, f"ctxgate-{os.getuid()}")


def ensure_private_dir(path: str) -> str:
    """Create ``path`` 0700 if missing; raise :class:`ProtocolError` unless it is private.

    Private: a directory (a symlink is refused, whatever it points at), owned by this user,
    with no permission bits for group or others.
    """
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ProtocolError(f"cannot create the daemon directory {path}: {exc.strerror}") from exc
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise ProtocolError(f"cannot read the daemon directory {path}: {exc.strerror}") from exc
    if not stat.S_ISDIR(st.st_mode):
        raise ProtocolError(f"{path} is not a directory (a symlink or file is refused)")
    if st.st_uid != os.getuid():
        raise ProtocolError(f"{path} belongs to uid {st.st_uid}, not this user "
                            f"({os.getuid()}); remove it or set {RUNTIME_DIR_ENV}")
    if st.st_mode & 0o077:
        raise ProtocolError(f"{path} has mode {stat.S_IMODE(st.st_mode):04o}, not 0700; "
                            f"run chmod 700 {path}")
    return path


def check_socket(path: str) -> None:
    """Raise :class:`ProtocolError` unless ``path`` is a socket of this user, mode 0600 or less."""
    st = os.lstat(path)  # FileNotFoundError passes through: no daemon there
    if not stat.S_ISSOCK(st.st_mode):
        raise ProtocolError(f"{path} is not a socket")
    if st.st_uid != os.getuid():
        raise ProtocolError(f"the socket {path} belongs to uid {st.st_uid}, not this user")
    if st.st_mode & 0o177:
        raise ProtocolError(f"the socket {path} has mode {stat.S_IMODE(st.st_mode):04o}, "
                            "not 0600")


def _config_file(env: Any) -> str:
    """The config file :func:`ctxgate.settings.config_path` reads (a test holds them equal)."""
    explicit = env.get("CTXGATE_CONFIG")
    if explicit:
        return os.path.expanduser(explicit)
    if sys.platform in ("darwin", "win32"):  # pragma: no cover - platformdirs knows these
        import platformdirs

        return os.path.join(platformdirs.user_config_dir("ctxgate", appauthor=False),
                            "config.toml")
    base = env.get("XDG_CONFIG_HOME", "")
    if not base.strip():
        base = os.path.expanduser("~/.config")
    return os.path.join(base, "ctxgate", "config.toml")


def config_signature(path: str) -> list[Any]:
    """What identifies one version of the config file: type, inode, size, mtime (or absence)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return [path, "absent"]
    except OSError as exc:
        return [path, f"unreadable {exc.errno}"]
    return [path, stat.S_IFMT(st.st_mode), st.st_ino, st.st_size, st.st_mtime_ns]


def identity(service: str, environ: Any = None) -> dict[str, Any]:
    """The identity a daemon for ``service`` must have to answer this process (see module)."""
    import ctxgate

    env = os.environ if environ is None else environ
    names = sorted(k for k in env if (k.startswith("CTXGATE_") and k not in _NOT_IDENTITY)
                   or k in _IDENTITY_ENV)
    return {
        "protocol": PROTOCOL_VERSION, "uid": os.getuid(), "service": service,
        "python": [sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix],
        "ctxgate": [os.path.dirname(os.path.abspath(ctxgate.__file__)), ctxgate.__version__],
        "env": [[k, env[k]] for k in names],
        "config": config_signature(_config_file(env)),
    }


def identity_key(ident: dict[str, Any]) -> str:
    """16 hex digits naming the identity's socket (the handshake compares the identity whole)."""
    import zlib

    from ctxgate._jsonc import dumps  # json.dumps, without importing re in every hook

    raw = dumps(ident, sort_keys=True, ensure_ascii=True).encode("ascii")
    return f"{zlib.crc32(raw):08x}{zlib.adler32(raw[::-1]):08x}"


class DaemonPaths:
    """The files of one daemon in the runtime directory."""

    def __init__(self, directory: str, key: str):
        self.directory = directory
        self.key = key
        self.socket = os.path.join(directory, f"g-{key}.sock")
        """The listening socket (0600)."""
        self.lock = os.path.join(directory, f"g-{key}.lock")
        """Held (flock) by the live daemon; holds its pid."""
        self.off = os.path.join(directory, f"g-{key}.off")
        """Written by a daemon whose configuration says ``[daemon] enabled = false``."""
        self.log = os.path.join(directory, f"g-{key}.log")
        """The daemon's stderr (start-up failures)."""


def daemon_paths(ident: dict[str, Any], environ: Any = None) -> DaemonPaths:
    """The paths of the daemon for ``ident`` (the directory is not created here)."""
    return DaemonPaths(runtime_dir(environ), identity_key(ident))


def send_frame(sock: Any, data: bytes) -> None:
    """Write one frame (length, then ``data``)."""
    sock.sendall(len(data).to_bytes(8, "big") + data)


def _recv_exact(sock: Any, size: int, deadline: float | None) -> bytes:
    buf = bytearray()
    while len(buf) < size:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the frame did not arrive in time")
            sock.settimeout(remaining)
        chunk = sock.recv(min(size - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("the peer closed the connection mid-frame" if buf else
                           "the peer closed the connection")
        buf += chunk
    return bytes(buf)


def recv_frame(sock: Any, deadline: float | None = None) -> bytes:
    """Read one frame; ``deadline`` is a ``time.monotonic()`` instant (``None``: no limit).

    Raises:
        TimeoutError: the deadline passed. EOFError: the peer closed the connection.
        ProtocolError: the announced length is over :data:`MAX_FRAME_BYTES`.
    """
    size = int.from_bytes(_recv_exact(sock, 8, deadline), "big")
    if size > MAX_FRAME_BYTES:
        raise ProtocolError(f"a frame of {size:,} bytes is over the {MAX_FRAME_BYTES:,}-byte "
                            "limit")
    return _recv_exact(sock, size, deadline)
