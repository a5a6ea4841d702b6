"""`ctxgate doctor`: what ctxgate can do on this machine, and what is broken in it.

It prints the facts (sandbox, archive home, gate backend, the local model files) and then one
line per check of :mod:`ctxgate.cli.doctor_checks` (home, archive.db, audit.db, model, hooks,
daemon, sandbox): ``ok``, or ``PROBLEM`` with what is wrong and the command that fixes it. ``--fix``
runs the repairs that are safe to automate (``fixed`` then says what was done); the exit
status is 1 while any problem remains.

Fast by design: it looks packages up without importing them and never loads a model; the
only processes it starts are the sandbox probes (``true`` under bwrap and the namespace
helper, some tens of milliseconds). The databases get a ``PRAGMA quick_check``, which reads
each file once.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from ctxgate.cli._options import JsonOption

__all__ = ["doctor", "gather", "register", "run_checks", "sandbox_sentence"]


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


def run_checks(config: Any, model: dict[str, Any], project: Path, sandbox: Any) -> list[Any]:
    """Every doctor check (:mod:`ctxgate.cli.doctor_checks`), in the order they print."""
    from ctxgate.cli import doctor_checks as dc

    home = Path(config.home)
    checks = [dc.check_home(home)]
    if config.archive.backend == "sqlite":
        checks.append(dc.check_database("archive", home / "archive.db", dc.create_archive))
    checks.append(dc.check_database("audit", home / "audit.db", dc.create_audit))
    checks.append(dc.check_model(model["files"]))
    blocked = ("the local model files are damaged (reinstall ctxgate first)"
               if config.gate.backend == "local" and not model["ok"] else "")
    checks.append(dc.check_hooks(Path.home(), project, blocked=blocked))
    checks.append(dc.check_mcp(Path.home(), project))
    from ctxgate.gate.daemon.protocol import runtime_dir

    checks.append(dc.check_daemon_dir(runtime_dir()))
    # no sandbox is not a fault of this install: fast-path allows then run unsandboxed
    checks.append(dc.Check("sandbox", True, sandbox_sentence(sandbox)))
    return checks


def gather(*, fix: bool = False, project: Path | None = None) -> dict[str, Any]:
    """Every fact doctor prints, as plain JSON types; ``fix``: repair what can be repaired
    first (each check then says what was done)."""
    from ctxgate import __version__
    from ctxgate.sandbox import detect
    from ctxgate.settings import load_config

    info = detect(probe_all=True)
    config = load_config()
    model = _model_status()
    checks = run_checks(config, model, project or Path.cwd(), info)
    if fix:
        for check in checks:
            check.apply_fix()
    return {
        "version": __version__,
        "sandbox": {**info.to_dict(), "fast_path": sandbox_sentence(info)},
        "archive_home": _home_status(Path(config.home)),
        "gate": {"backend": config.gate.backend, "fast_path": config.gate.fast_path,
                 "local_model": model},
        "checks": [c.to_dict() for c in checks],
        "problems": sum(not c.ok for c in checks),
    }


def doctor(
    json_out: JsonOption = False,
    fix: Annotated[bool, typer.Option(
        "--fix", help="Repair what can be repaired: move a broken archive.db / audit.db "
        "aside (kept as NAME.broken-<time>) and start an empty one, rewrite hooks whose "
        "interpreter is gone, give the home back its owner's write bit, make the daemon's "
        "runtime directory private and remove its dead sockets.")] = False,
    project: Annotated[str | None, typer.Option(
        "--project", help="Project directory whose .claude/ and .codex/ hook files are "
        "checked (default: the current directory).")] = None,
) -> None:
    """Check the home, archive.db, audit.db, the local model, the installed hooks and the
    daemon's runtime directory; say what is wrong in one line each (with the command that
    fixes it), and --fix what can be fixed. Exit status 1 while a problem remains.

    Example: ctxgate doctor --fix
    """
    import json

    facts = gather(fix=fix, project=Path(project).resolve() if project else None)
    if json_out:
        typer.echo(json.dumps(facts, ensure_ascii=False, indent=1))
        raise typer.Exit(1 if facts["problems"] else 0)
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
    typer.echo("checks:")
    for check in facts["checks"]:
        mark = "fixed" if check["fixed"] else "ok" if check["ok"] else "PROBLEM"
        typer.echo(f"  {mark:<7} {check['name']}: {check['message']}")
    problems = facts["problems"]
    if problems:
        hint = (" (some are repaired by `ctxgate doctor --fix`)"
                if not fix and any(c["fixable"] and not c["ok"] for c in facts["checks"])
                else "")
        typer.echo(f"{problems} problem(s){hint}")
    raise typer.Exit(1 if problems else 0)


def register(app: typer.Typer) -> None:
    """Add ``doctor`` to the top-level app."""
    app.command("doctor")(doctor)
