"""Run a command where it cannot write: the enforcement behind the gate's read-only fast path.

The gate's fast path allows shell commands it proves read-only without asking the decision
model; ``ctxgate run --sandbox read-only`` (which the hooks use for those calls) runs them in
a sandbox so that a proof that was wrong cannot change files anyway. On Linux, in order of
preference: ``bwrap`` when installed, a private mount namespace with every mount read-only,
Landlock; on macOS ``sandbox-exec``. :func:`detect` says which one this machine has and why
the others are not used; :func:`sandbox_argv` wraps a command; :class:`ReadOnlyRun` does both
for one run and writes the notes the model reads.

What it does not stop: writes through sockets and the network (a database, a daemon, an HTTP
API), signals to the user's other processes under Landlock, and writes to file descriptors the
command inherited already open for writing. It is a second line behind the fast path's proof,
not a replacement for it.

Core module: imports nothing from the CLI, MCP or agent frameworks.
"""

from __future__ import annotations

from ctxgate.sandbox.detect import (
    MECHANISMS_ENV,
    MechanismStatus,
    SandboxInfo,
    detect,
    landlock_abi,
)
from ctxgate.sandbox.wrap import MODES, WRITE_FAILED_NOTE, ReadOnlyRun, sandbox_argv

__all__ = ["MECHANISMS_ENV", "MODES", "WRITE_FAILED_NOTE", "MechanismStatus", "ReadOnlyRun",
           "SandboxInfo", "detect", "landlock_abi", "sandbox_argv"]
