"""``--sandbox read-only`` for the small-output run path: the mechanism, remembered per boot.

:func:`ctxgate.sandbox.detect` probes the machine by starting a sandboxed ``true`` (for the
namespace helper, a second interpreter) and imports ``subprocess``, ``shutil`` and ``re``:
more than the rest of a small ``ctxgate run``. Which mechanism works does not change while
the machine is up, so :func:`detected` keeps the answer in this user's private runtime
directory (the decision daemon's, 0700), keyed by the boot, the interpreter, the package's
location, ``PATH`` and ``CTXGATE_SANDBOX_MECHANISMS``, one file per key (:func:`cache_path`):
a new key probes once, and keys sharing the directory do not evict each other.
Where there is no boot id (not Linux) it always probes. :func:`wrap` builds the namespace and
Landlock helpers' argv and bwrap's itself (importing :mod:`ctxgate.sandbox` loads
``subprocess``, ``shutil`` and ``dataclasses``: tens of milliseconds, more than bwrap's own
start); sandbox-exec goes through :mod:`ctxgate.sandbox.wrap`.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CACHE_NAME", "Detected", "cache_path", "cache_suffix", "detected", "not_sandboxed_note", "runtime_dir", "which",
           "wrap"]

CACHE_NAME = "sandbox-mechanism-v1"
"""The cache files' name in the runtime directory, before ``-`` and :func:`cache_suffix`."""
MECHANISMS_ENV = "CTXGATE_SANDBOX_MECHANISMS"
ENTER_SCRIPT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sandbox", "_enter.py"
)
_BOOT_ID = "/proc/sys/kernel/random/boot_id"


class Detected:
    """What :func:`ctxgate.sandbox.detect` said: the mechanism (None: none) and why not."""

    def __init__(self, mechanism: str | None, why_not: str) -> None:
        self.mechanism = mechanism
        self.why_not = why_not


def runtime_dir(env: Any) -> str:
    """``ctxgate.gate.daemon.protocol.runtime_dir`` (a test holds them equal)."""
    explicit = env.get("CTXGATE_RUNTIME_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "ctxgate")
    tmp = env.get("TMPDIR") or "/tmp"
    return os.path.join(tmp, f"ctxgate-{os.getuid()}")


def _key(env: Any) -> str | None:
    try:
        with open(_BOOT_ID, encoding="ascii") as fh:
            boot = fh.read().strip()
    except OSError:
        return None
    parts = (
        boot,
        str(os.getuid()),
        sys.executable,
        ENTER_SCRIPT,
        env.get("PATH", ""),
        env.get(MECHANISMS_ENV, "\0unset"),
    )
    return "\t".join(p.replace("\t", " ").replace("\n", " ") for p in parts)


def cache_suffix(key: str) -> str:
    """Eight hex digits of the key's FNV-1a hash: one cache file per key, so checkouts,
    interpreters and ``PATH`` values that share a runtime directory (the hooks' shell and
    the user's) do not overwrite each other's answer and probe again on every call."""
    h = 0x811C9DC5
    for byte in key.encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


def cache_path(env: Any) -> str | None:
    """Where :func:`detected` keeps this key's answer (None: not remembered here)."""
    key = _key(env)
    if key is None:
        return None
    return os.path.join(runtime_dir(env), f"{CACHE_NAME}-{cache_suffix(key)}")


def _private_dir(path: str) -> bool:
    """Create ``path`` 0700 if missing; whether it is this user's own, private directory."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (
        (st.st_mode & 0o170000) == 0o040000 and st.st_uid == os.getuid() and not st.st_mode & 0o077
    )


def detected(env: Any = None) -> Detected:
    """The read-only sandbox mechanism here: from the cache when it is this boot's, else
    probed by :func:`ctxgate.sandbox.detect` (and remembered)."""
    env = os.environ if env is None else env
    key = _key(env)
    folder = runtime_dir(env)
    path = os.path.join(folder, f"{CACHE_NAME}-{cache_suffix(key or '')}")
    if key is not None:
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
            if len(lines) >= 3 and lines[0] == key and _private_dir(folder):
                return Detected(lines[1] or None, lines[2])
        except OSError:
            pass
    from ctxgate.sandbox.detect import detect

    info = detect()
    found = Detected(info.mechanism, info.why_not)
    if key is not None and _private_dir(folder):
        tmp = f"{path}.{os.getpid()}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(f"{key}\n{found.mechanism or ''}\n{found.why_not.replace(chr(10), ' ')}\n")
            os.replace(tmp, path)
        except OSError:
            pass  # not remembered: the next run probes again
    return found


def wrap(found: Detected, argv: list[str]) -> list[str]:
    """The argv that runs ``argv`` under ``found``'s mechanism (unchanged when there is none)."""
    if found.mechanism is None:
        return list(argv)
    if found.mechanism in ("namespace", "landlock"):
        return [sys.executable, "-I", "-S", ENTER_SCRIPT, found.mechanism, "--", *argv]
    if found.mechanism == "bwrap":  # ctxgate.sandbox.wrap.bwrap_argv without a cwd
        return [which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev",
                "--unshare-pid", "--proc", "/proc", "--die-with-parent", "--", *argv]
    from ctxgate.sandbox.wrap import sandbox_argv

    return sandbox_argv(found.mechanism, argv)


def which(name: str) -> str | None:
    """``shutil.which(name)`` for a bare command name (a test holds them equal): importing
    :mod:`shutil` costs more than the search."""
    path = os.environ.get("PATH")
    if path is None:
        try:
            path = os.confstr("CS_PATH")
        except (AttributeError, ValueError):
            path = os.defpath
    if not path:
        return None  # PATH='' finds nothing (PATH=':' looks in the current directory)
    seen: set[str] = set()
    for folder in path.split(os.pathsep):
        if folder in seen:
            continue
        seen.add(folder)
        candidate = os.path.join(folder, name)
        if (os.path.exists(candidate) and os.access(candidate, os.F_OK | os.X_OK)
                and not os.path.isdir(candidate)):
            return candidate
    return None


def not_sandboxed_note(found: Detected) -> str:
    """The note :class:`ctxgate.sandbox.ReadOnlyRun` gives when there is no mechanism."""
    return f"not sandboxed: {found.why_not}; the command ran with normal permissions"
