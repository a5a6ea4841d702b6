"""Which read-only sandbox this machine offers, and why the others are not used.

:func:`detect` checks the mechanisms in order of preference and stops at the first that works
(``probe_all=True`` checks every one, for ``ctxgate doctor``). A check is real where a cheap
one exists: ``bwrap`` and the namespace helper are started once on ``true`` (a few to some tens
of milliseconds), Landlock is asked for its ABI version in-process. Results are cached per
process.

The environment variable :data:`MECHANISMS_ENV` (comma-separated names, empty for none)
limits and orders the candidates, e.g. to pin one mechanism in a test or turn the sandbox off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ENTER_SCRIPT", "LINUX_MECHANISMS", "MACOS_MECHANISMS", "MECHANISMS_ENV",
           "MechanismStatus", "SandboxInfo", "detect", "landlock_abi"]

MECHANISMS_ENV = "CTXGATE_SANDBOX_MECHANISMS"
"""Comma-separated mechanism names to consider, in order (empty: none); unset: all."""
LINUX_MECHANISMS = ("bwrap", "namespace", "landlock")
"""Linux mechanisms in order of preference."""
MACOS_MECHANISMS = ("sandbox-exec",)
ENTER_SCRIPT = Path(__file__).with_name("_enter.py")
"""The stdlib-only helper that enters the namespace and Landlock sandboxes."""
_PROBE_SECONDS = 10.0


@dataclass(frozen=True)
class MechanismStatus:
    """One mechanism on this machine: usable or not, and why."""

    name: str
    available: bool
    why: str
    """For an available one, what it does; otherwise what is missing."""

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "available": self.available, "why": self.why}


@dataclass(frozen=True)
class SandboxInfo:
    """The outcome of :func:`detect`: the mechanism to use (None: none) and every check."""

    mechanism: str | None
    checked: tuple[MechanismStatus, ...] = field(default_factory=tuple)
    platform: str = sys.platform

    @property
    def available(self) -> bool:
        return self.mechanism is not None

    @property
    def why_not(self) -> str:
        """One sentence: why nothing is available (empty when something is)."""
        if self.mechanism is not None:
            return ""
        if not self.checked:
            return f"no read-only sandbox is known for platform {self.platform!r}"
        return "; ".join(f"{s.name}: {s.why}" for s in self.checked)

    def status(self, name: str) -> MechanismStatus | None:
        return next((s for s in self.checked if s.name == name), None)

    def to_dict(self) -> dict[str, object]:
        return {"mechanism": self.mechanism, "platform": self.platform,
                "why_not": self.why_not, "checked": [s.to_dict() for s in self.checked]}


_CACHE: dict[tuple[bool, str | None], SandboxInfo] = {}


def detect(*, probe_all: bool = False) -> SandboxInfo:
    """The read-only sandbox available here (cached per process and environment setting).

    Args:
        probe_all: check every mechanism, not only up to the first that works.
    """
    key = (probe_all, os.environ.get(MECHANISMS_ENV))
    if key not in _CACHE:
        _CACHE[key] = _detect(probe_all)
    return _CACHE[key]


def _candidates() -> tuple[tuple[str, ...], str]:
    if sys.platform.startswith("linux"):
        known = LINUX_MECHANISMS
    elif sys.platform == "darwin":
        known = MACOS_MECHANISMS
    else:
        return (), ""
    chosen = os.environ.get(MECHANISMS_ENV)
    if chosen is None:
        return known, ""
    names = tuple(n.strip() for n in chosen.split(",") if n.strip())
    return tuple(n for n in names if n in known), f"not selected by {MECHANISMS_ENV}={chosen!r}"


def _detect(probe_all: bool) -> SandboxInfo:
    order, skipped_why = _candidates()
    known = (LINUX_MECHANISMS if sys.platform.startswith("linux")
             else MACOS_MECHANISMS if sys.platform == "darwin" else ())
    checked: list[MechanismStatus] = []
    chosen: str | None = None
    for name in order:
        if chosen is not None and not probe_all:
            break
        status = _CHECKS[name]()
        checked.append(status)
        if status.available and chosen is None:
            chosen = name
    for name in known:
        if name not in order:
            checked.append(MechanismStatus(name, False, skipped_why))
    return SandboxInfo(mechanism=chosen, checked=tuple(checked))


def _probe(argv: list[str]) -> str:
    """Run a sandboxed ``true``; '' when it worked, else why not."""
    try:
        out = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                             timeout=_PROBE_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"probe failed: {exc}"
    if out.returncode == 0:
        return ""
    detail = out.stderr.decode("utf-8", "replace").strip().splitlines()
    return f"probe exited {out.returncode}: {detail[-1] if detail else 'no message'}"


def _check_bwrap() -> MechanismStatus:
    from ctxgate.sandbox.wrap import bwrap_argv

    exe = shutil.which("bwrap")
    if exe is None:
        return MechanismStatus("bwrap", False, "bwrap is not installed (Debian/Ubuntu: apt-get "
                               "install bubblewrap)")
    failed = _probe(bwrap_argv(exe, None, ["true"]))
    if failed:
        return MechanismStatus("bwrap", False, f"{exe} cannot create its namespaces: {failed}")
    return MechanismStatus("bwrap", True, f"{exe}: read-only bind of /, private /dev and /proc")


def _check_namespace() -> MechanismStatus:
    if not hasattr(os, "fork"):
        return MechanismStatus("namespace", False, "no fork() on this platform")
    failed = _probe([sys.executable, "-I", "-S", str(ENTER_SCRIPT), "namespace", "--", "true"])
    if failed:
        return MechanismStatus("namespace", False,
                               f"mount/user namespaces are not usable here: {failed}")
    who = "root: capabilities dropped" if os.geteuid() == 0 else "user namespace"
    return MechanismStatus("namespace", True,
                           f"private mount + PID namespace, every mount read-only ({who})")


def _check_landlock() -> MechanismStatus:
    abi = landlock_abi()
    if abi < 1:
        return MechanismStatus("landlock", False, "Landlock is not enabled in this kernel "
                               "(needs Linux >= 5.13 with lsm=landlock)")
    return MechanismStatus("landlock", True, f"Landlock ABI {abi}: every write right denied "
                           "but /dev/null and terminals")


def _check_sandbox_exec() -> MechanismStatus:
    exe = shutil.which("sandbox-exec") or ("/usr/bin/sandbox-exec"
                                           if os.path.exists("/usr/bin/sandbox-exec") else None)
    if exe is None:
        return MechanismStatus("sandbox-exec", False, "sandbox-exec is not on this Mac")
    from ctxgate.sandbox.wrap import sandbox_exec_argv

    failed = _probe(sandbox_exec_argv(exe, ["true"]))
    if failed:
        return MechanismStatus("sandbox-exec", False, failed)
    return MechanismStatus("sandbox-exec", True, f"{exe} with a deny-file-write profile")


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when absent (asked through the raw syscall)."""
    if not sys.platform.startswith("linux"):
        return 0
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        return max(0, int(libc.syscall(444, None, 0, 1)))
    except (OSError, AttributeError):
        return 0


_CHECKS = {"bwrap": _check_bwrap, "namespace": _check_namespace, "landlock": _check_landlock,
           "sandbox-exec": _check_sandbox_exec}
