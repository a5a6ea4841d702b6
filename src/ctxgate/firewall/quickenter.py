"""The fast path's namespace and Landlock sandboxes, entered from a fork of the wrapper.

``ctxgate run --sandbox read-only`` used to start these two mechanisms by spawning a second
interpreter on the stdlib helper (``python -I -S …/sandbox/_enter.py MECHANISM -- ARGV``):
an interpreter start plus ``ctypes`` on every hooked read-only call. :func:`fork_enter` runs
the same helper code instead in a forked child of the wrapper: the helper file is loaded once
by path (never through :mod:`ctxgate.sandbox`, whose imports cost more than the helper), the
child takes the pipe as stdout and stderr, its own process group when asked, the default
disposition of the signals the wrapper handles (as an exec would give it), then calls the helper's ``main`` and leaves with its status through
``os._exit``. The process tree below the wrapper, the mounts, the Landlock ruleset, the
seccomp filter, the dropped capabilities, the exit codes and the ``125`` of a failed setup
(the command not run) are the helper's own: it is the same code in the same order.

It declines (None: the caller spawns the helper interpreter, as before) when forking is not
safe or possible here: no ``fork``, another thread running in this process, or the helper
file cannot be loaded. Only the standard library is imported, and only when called.
"""

from __future__ import annotations

import os
import sys

__all__ = ["MECHANISMS", "SETUP_FAILED", "fork_enter", "load_helper"]

MECHANISMS = ("namespace", "landlock")
"""The mechanisms whose setup is the stdlib helper's (bwrap and sandbox-exec are programs)."""
SETUP_FAILED = 125
"""``_enter.SETUP_FAILED``: the exit status when the sandbox could not be set up."""
_MODULE = "_ctxgate_sandbox_enter"
_HANDLED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
"""Signals the wrapper may handle in Python; the child puts them back to their default."""


def load_helper() -> object:
    """The helper ``_enter.py`` as a module (loaded by path once; bytecode cached as usual)."""
    module = sys.modules.get(_MODULE)
    if module is None:
        from importlib.machinery import SourceFileLoader

        from ctxgate.firewall.quicksandbox import ENTER_SCRIPT

        loader = SourceFileLoader(_MODULE, ENTER_SCRIPT)
        module = type(sys)(_MODULE)
        module.__file__ = ENTER_SCRIPT
        module.__loader__ = loader
        loader.exec_module(module)
        sys.modules[_MODULE] = module
    return module


def _threads_running() -> bool:
    threading = sys.modules.get("threading")
    return threading is not None and threading.active_count() > 1


def fork_enter(mechanism: str, argv: list[str], own_group: bool) -> tuple[int, int] | None:
    """Start ``argv`` under ``mechanism`` with stdout and stderr on one new pipe.

    Returns ``(pid, read fd)`` as the wrapper's spawn does (the pid is the helper's outside
    process, which passes the command's status on), or None when it cannot fork here.
    """
    if mechanism not in MECHANISMS or not hasattr(os, "fork") or _threads_running():
        return None
    try:
        helper = load_helper()
    except Exception:  # noqa: BLE001 - the helper interpreter reports what is wrong
        return None
    import _signal

    handled = {getattr(_signal, n) for n in _HANDLED if hasattr(_signal, n)}
    r, w = os.pipe()  # both close-on-exec
    # blocked across the fork: one that arrives before the child reset the wrapper's handlers
    # stays pending there and then acts as on a new process (its default), not swallowed
    saved = _signal.pthread_sigmask(_signal.SIG_BLOCK, handled)
    try:
        pid = os.fork()
    except OSError:
        _signal.pthread_sigmask(_signal.SIG_SETMASK, saved)
        os.close(r)
        os.close(w)
        return None
    if pid == 0:  # pragma: no cover - the child; its effects are what the tests check
        _child(helper, mechanism, argv, own_group, r, w, saved)
    _signal.pthread_sigmask(_signal.SIG_SETMASK, saved)
    os.close(w)
    if own_group:
        try:
            os.setpgid(pid, pid)  # the child does it too: whichever runs first wins the race
        except OSError:
            pass
    return pid, r


def _child(helper: object, mechanism: str, argv: list[str], own_group: bool, r: int,
           w: int, mask: object) -> None:
    """Become the helper's outside process; never returns (``os._exit`` on every path)."""
    code = SETUP_FAILED
    try:
        import _signal

        for name in _HANDLED:  # the wrapper's handlers: the default, as after an exec
            sig = getattr(_signal, name, None)
            if sig is not None:
                _signal.signal(sig, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)
        # SIGPIPE and SIGXFSZ stay ignored, as in the helper interpreter; its exec resets them
        if own_group:
            os.setpgid(0, 0)
        os.close(r)
        os.dup2(w, 1)
        os.dup2(w, 2)
        os.close(w)
        sys.stdout = sys.stderr = open(  # noqa: SIM115 - left open until os._exit
            2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        code = helper.main([mechanism, "--", *argv])  # type: ignore[attr-defined]
    except BaseException as exc:  # noqa: BLE001 - nothing may return into the wrapper
        try:
            os.write(2, f"ctxgate sandbox: {mechanism} setup failed: {exc!r}; the command "
                        "was not run\n".encode("utf-8", "backslashreplace"))
        except OSError:
            pass
        code = SETUP_FAILED
    finally:
        try:
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
        os._exit(code if isinstance(code, int) and 0 <= code <= 255 else SETUP_FAILED)
