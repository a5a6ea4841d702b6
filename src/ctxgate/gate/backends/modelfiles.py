"""The local model's shipped files, read only after their SHA-256 matches the pinned value.

Every file the offline default reads (the static token embeddings and the three heads) ships
inside the ctxgate package under ``ctxgate/gate/backends/heads/`` and is pinned by SHA-256 in
:mod:`ctxgate.gate.backends.pins` (written by ``scripts/build_static_model.py`` and
``scripts/train_heads.py``, never by hand). :func:`read_verified` refuses a file that is
missing or whose hash differs — a damaged install or a tampered file fails closed with
:class:`ModelFileError`, which the gate turns into a denial that says so.
"""

from __future__ import annotations

import hashlib
from importlib import resources

from ctxgate.errors import GateError
from ctxgate.gate.backends.pins import PINNED_SHA256

__all__ = ["MODEL_PACKAGE", "ModelFileError", "read_verified", "status"]

MODEL_PACKAGE = "ctxgate.gate.backends.heads"
"""Package directory holding the model files."""
REINSTALL = "reinstall ctxgate (pip install --force-reinstall --no-deps ctxgate)"


class ModelFileError(GateError):
    """A shipped model file is missing, unreadable or differs from its pinned SHA-256."""


def read_verified(name: str) -> bytes:
    """The bytes of model file ``name``, checked against :data:`PINNED_SHA256`.

    Raises:
        ModelFileError: unknown name, missing or unreadable file, or a hash mismatch.
    """
    pinned = PINNED_SHA256.get(name)
    if pinned is None:
        raise ModelFileError(f"{name!r} is not a pinned local model file "
                             f"(known: {', '.join(sorted(PINNED_SHA256))})")
    path = resources.files(MODEL_PACKAGE).joinpath(name)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFileError(f"the local decision model file {path} cannot be read "
                             f"({exc.strerror or exc}); {REINSTALL}") from exc
    got = hashlib.sha256(data).hexdigest()
    if got != pinned:
        raise ModelFileError(
            f"the local decision model file {path} has SHA-256 {got[:16]}…, but this ctxgate "
            f"pins {pinned[:16]}…: it was changed or damaged, so it is not used and every "
            f"call the model would judge is denied; {REINSTALL}")
    return data


def status() -> list[dict[str, object]]:
    """Each pinned file: name, path, whether it is present and whether its hash matches."""
    out: list[dict[str, object]] = []
    for name, pinned in sorted(PINNED_SHA256.items()):
        path = resources.files(MODEL_PACKAGE).joinpath(name)
        try:
            data = path.read_bytes()
        except OSError:
            out.append({"name": name, "path": str(path), "present": False, "verified": False})
            continue
        out.append({"name": name, "path": str(path), "present": True,
                    "verified": hashlib.sha256(data).hexdigest() == pinned})
    return out
