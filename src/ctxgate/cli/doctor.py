"""`ctxgate doctor`: what ctxgate can do on this machine (sandbox, archive home, gate backend).

Fast by design: it looks packages up without importing them and never loads a model; the
only processes it starts are the sandbox probes (``true`` under bwrap and the namespace
helper, some tens of milliseconds).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import typer

from ctxgate.cli._options import JsonOption

__all__ = ["doctor", "gather", "register", "sandbox_sentence"]



def sandbox_sentence(info: Any) -> str:
    """One line: whether fast-path allows run sandboxed here, and with what or why not."""
    if info.mechanism is not None:
        return (f"fast-path allows run in a read-only sandbox on this machine "
                f"({info.mechanism})")
    return f"fast-path allows run NOT sandboxed on this machine: {info.why_not}"


def _home_status(home: Path) -> dict[str, Any]:
    existing = home
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    writable = False
    why = ""
    if existing == home and home.is_dir():
        try:
            with tempfile.NamedTemporaryFile(dir=home, prefix=".doctor-"):
                writable = True
        except OSError as exc:
            why = f"cannot create a file there: {exc.strerror or exc}"
    elif existing.is_dir():
        writable = os.access(existing, os.W_OK)
        why = "" if writable else f"{existing} (where it would be created) is not writable"
    else:
        why = f"{existing} is not a directory"
    return {"path": str(home), "exists": home.is_dir(), "writable": writable, "why": why}


def _model_status() -> dict[str, Any]:
    """The local model's shipped files: present and matching their pinned SHA-256."""
    from ctxgate.gate.backends.modelfiles import status

    files = status()
    return {"files": files, "ok": all(f["present"] and f["verified"] for f in files)}


def gather() -> dict[str, Any]:
    """Every fact doctor prints, as plain JSON types."""
    from ctxgate import __version__
    from ctxgate.sandbox import detect
    from ctxgate.settings import load_config

    info = detect(probe_all=True)
    config = load_config()
    return {
        "version": __version__,
        "sandbox": {**info.to_dict(), "fast_path": sandbox_sentence(info)},
        "archive_home": _home_status(Path(config.home)),
        "gate": {"backend": config.gate.backend, "fast_path": config.gate.fast_path,
                 "local_model": _model_status()},
    }


def doctor(json_out: JsonOption = False) -> None:
    """Print what ctxgate can do here: sandbox, archive home, decision backend packages.

    Example: ctxgate doctor --json
    """
    import json

    facts = gather()
    if json_out:
        typer.echo(json.dumps(facts, ensure_ascii=False, indent=1))
        return
    sb = facts["sandbox"]
    typer.echo(f"ctxgate {facts['version']}")
    typer.echo(f"sandbox: {sb['mechanism'] or 'none'}")
    for status in sb["checked"]:
        mark = "yes" if status["available"] else "no "
        typer.echo(f"  {mark} {status['name']}: {status['why']}")
    typer.echo(f"  {sb['fast_path']}")
    home = facts["archive_home"]
    state = ("writable" if home["writable"] else f"NOT writable ({home['why']})")
    typer.echo(f"archive home: {home['path']} ({'exists' if home['exists'] else 'not created yet'}"
               f", {state})")
    gate = facts["gate"]
    typer.echo(f"gate backend: {gate['backend']}; read-only fast path "
               f"{'on' if gate['fast_path'] else 'off'}")
    for f in gate["local_model"]["files"]:
        state = ("verified" if f["verified"] else "SHA-256 MISMATCH, reinstall ctxgate"
                 if f["present"] else "MISSING, reinstall ctxgate")
        typer.echo(f"  {'yes' if f['verified'] else 'no '} local model file {f['name']}: "
                   f"{state}")


def register(app: typer.Typer) -> None:
    """Add ``doctor`` to the top-level app."""
    app.command("doctor")(doctor)
