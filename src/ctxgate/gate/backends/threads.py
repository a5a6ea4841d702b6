"""One thread for the local model's numpy work: BLAS/OpenMP pools pinned to 1 while it runs.

The encoder's matrices are small (two texts of a few dozen tokens), so a BLAS thread pool
only adds hand-offs: on a busy 2-core machine numpy's default pool made decisions 5–10×
slower. Two layers keep the local backend on one thread:

* :func:`pin_environment` sets ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``,
  ``MKL_NUM_THREADS``, ``BLIS_NUM_THREADS``, ``VECLIB_MAXIMUM_THREADS`` and
  ``NUMEXPR_NUM_THREADS`` to ``1`` and ``TOKENIZERS_PARALLELISM`` to ``false`` — only where
  the user has not set them, so an explicit choice wins. BLAS libraries read these when they
  load, so this matters only when it runs before numpy is first imported (the backend calls
  it before importing numpy).
* :func:`single_thread` is a context manager that limits every loaded BLAS/OpenMP pool to one
  thread with threadpoolctl (``pip install 'ctxgate[distill]'`` brings it; the local model itself needs no numpy) and restores the
  previous limits on exit; nested and concurrent uses share one limit (a counter under a
  lock), so a concurrent decision never restores the pool while another is still running.
  Without threadpoolctl it only relies on the environment.

:func:`state` reports what is in force, for tests and ``--explain``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["PINNED_ENV", "pin_environment", "single_thread", "state"]

PINNED_ENV: dict[str, str] = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
"""Environment the local backend sets (with ``setdefault``) before numpy loads."""

_lock = threading.Lock()
_depth = 0
_limiter: Any = None
_controller: Any = None
_controller_loaded = False


def pin_environment() -> None:
    """Set :data:`PINNED_ENV` where unset (an explicit user value is kept)."""
    for key, value in PINNED_ENV.items():
        os.environ.setdefault(key, value)


def _get_controller() -> Any:
    global _controller, _controller_loaded
    if not _controller_loaded:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            _controller = None
        else:
            _controller = ThreadpoolController()
        _controller_loaded = True
    return _controller


@contextmanager
def single_thread() -> Iterator[None]:
    """Run the body with every BLAS/OpenMP pool limited to one thread (see module doc)."""
    global _depth, _limiter
    with _lock:
        if _depth == 0:
            controller = _get_controller()
            _limiter = controller.limit(limits=1) if controller is not None else None
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _limiter is not None:
                _limiter.restore_original_limits()
                _limiter = None


def state() -> dict[str, Any]:
    """What is in force now: the pools' thread counts (threadpoolctl) and the environment."""
    controller = _get_controller()
    pools = []
    if controller is not None:
        controller = type(controller)()  # a fresh look at the libraries loaded now
        pools = [{"api": lib.internal_api, "num_threads": lib.num_threads}
                 for lib in controller.lib_controllers]
    return {"threadpoolctl": controller is not None, "pools": pools,
            "env": {k: os.environ.get(k) for k in PINNED_ENV}}
