"""The checks behind `ctxgate doctor`: each says ok or what is wrong in one line, and the
fixable ones repair themselves when asked (``doctor --fix``).

A :class:`Check` is a plain record (name, ok, message, fixable, fixed). The checks:

- ``home``: the data directory exists (or can be created) and a file can be created in it.
  A directory of this user that only lacks its owner's write bit is fixed (``chmod u+rwx``);
  a read-only file system or a home under a regular file is not.
- ``archive`` / ``audit``: ``<home>/archive.db`` and ``<home>/audit.db`` opened read-only
  and checked with ``PRAGMA quick_check``. A file that is not a database, a corrupt one or a
  directory in its place is fixed by moving it aside (``NAME.broken-<time>``, with its
  ``-wal``/``-shm``: nothing is deleted) and creating a new empty database.
- ``model``: the shipped local model files against their pinned SHA-256 (reinstall only).
- ``hooks``: ctxgate's entries in the Claude Code and Codex hook files whose interpreter or
  launcher script no longer exists; fixed by merging the entries ``hook install`` writes for
  this interpreter into that file (other hooks kept, the old file copied to
  ``FILE.ctxgate-backup``), with the flags the old ``hook pre`` entry had.
- ``daemon``: the decision daemon's runtime directory is private (else hooks never use the
  daemon; fixed by ``chmod 700`` when it is ours). Sockets whose daemon is gone (no one holds
  their lock) are harmless, so the check stays ok; ``--fix`` removes them (under that lock,
  so a starting daemon is never raced; lock files stay).

Nothing here loads a model or imports the archive or the gate at import time; a repair
imports what it writes with.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["Check", "check_daemon_dir", "check_database", "check_home", "check_hooks",
           "check_model", "hook_files"]

FIX = "ctxgate doctor --fix"


@dataclass
class Check:
    """One doctor check: whether it passed, and the one line that says what is wrong."""

    name: str
    ok: bool
    message: str
    fixable: bool = False
    fixed: bool = False
    repair: Any = None
    """What ``--fix`` runs: a callable returning ``(fixed, message)``; not in the JSON."""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("repair")
        return out

    def apply_fix(self) -> None:
        """Run the repair (when there is one) and record its outcome as this check's line."""
        if not self.fixable or self.repair is None:
            return  # an ok check may still be fixable: a harmless leftover to tidy away
        try:
            self.fixed, message = self.repair()
        except Exception as exc:  # noqa: BLE001 - a failed repair is reported, not raised
            self.fixed, message = False, f"--fix failed ({type(exc).__name__}: {exc})"
        self.message = message if self.fixed else f"{self.message}; {message}"
        self.ok = self.ok or self.fixed


# -- home --------------------------------------------------------------------------------

def check_home(home: Path) -> Check:
    """The data directory: creatable, and a file can be created in it."""
    existing = home
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return Check("home", False, f"{home} cannot be created: {existing} is not a "
                     "directory; set CTXGATE_HOME to a writable directory")
    if existing != home:
        if os.access(existing, os.W_OK):
            return Check("home", True, f"{home} is not created yet ({existing} is writable)")
        return Check("home", False, f"{home} cannot be created: {existing} is not writable; "
                     "set CTXGATE_HOME to a writable directory")
    try:
        with tempfile.NamedTemporaryFile(dir=home, prefix=".doctor-"):
            pass
        return Check("home", True, f"{home} is writable")
    except OSError as exc:
        reason = exc.strerror or str(exc)
    info = home.stat()
    if info.st_uid == os.geteuid() and not info.st_mode & stat.S_IWUSR and not _read_only_fs(home):
        def repair() -> tuple[bool, str]:
            home.chmod(stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
            return True, f"{home} made writable (chmod u+rwx)"

        return Check("home", False, f"{home} is not writable ({reason}: its owner's write "
                     f"bit is off); fix: {FIX} (chmod u+rwx {home})", fixable=True,
                     repair=repair)
    where = "on a read-only file system" if _read_only_fs(home) else "not writable"
    return Check("home", False, f"{home} is {where} ({reason}); make it writable or set "
                 "CTXGATE_HOME to a writable directory")


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


# -- archive.db / audit.db ---------------------------------------------------------------

_MOVABLE = ("is not a SQLite database", "is corrupt", "is a directory")
"""Failure causes a move aside repairs (from :func:`ctxgate.archive.failure.diagnose_sqlite`)."""


def check_database(name: str, path: Path, create: Any) -> Check:
    """``path`` (a SQLite file) opened read-only and ``PRAGMA quick_check``-ed.

    ``create(path)`` makes a new empty database there (the repair, after the old file is
    moved aside). A missing file is fine: it is created on first use.
    """
    from ctxgate.archive.failure import diagnose_sqlite

    if not path.exists() and not path.is_symlink():
        return Check(name, True, f"{path} not created yet")
    why = ""
    try:
        if path.is_dir():
            raise IsADirectoryError(f"{path} is a directory")
        try:
            rows = _quick_check(path, "mode=ro")
            note = ""
        except sqlite3.OperationalError as exc:
            if "unable to open" not in str(exc) or os.access(path.parent, os.W_OK):
                raise
            # a WAL database in a read-only directory without its -shm: read the file alone
            rows = _quick_check(path, "immutable=1")
            note = " (read without its write-ahead log: its directory is read-only)"
        if rows == ["ok"]:
            return Check(name, True, f"{path} passes quick_check{note}")
        why = f"{path.name} is corrupt (quick_check: {'; '.join(map(str, rows))[:200]})"
    except (sqlite3.Error, OSError) as exc:
        failure = diagnose_sqlite(exc, path)
        if not any(cause in failure.why for cause in _MOVABLE):
            return Check(name, False, f"{failure.why}; fix: {failure.fix}")
        why = failure.why
    aside = _aside_name(path)

    def repair() -> tuple[bool, str]:
        moved = _move_aside(path, aside)
        create(path)
        return True, (f"{why}: moved it aside to {', '.join(moved)}; a new empty "
                      f"{path.name} is in place")

    return Check(name, False, f"{why}; fix: {FIX} (moves it to {aside}, keeping every "
                 f"byte, and starts an empty {path.name})", fixable=True, repair=repair)


def _quick_check(path: Path, mode: str) -> list[Any]:
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?{mode}", uri=True, timeout=1.0)
    try:
        return [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
    finally:
        conn.close()


def _aside_name(path: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.broken-{stamp}")
    n = 1
    while aside.exists() or aside.is_symlink():
        n += 1
        aside = path.with_name(f"{path.name}.broken-{stamp}-{n}")
    return aside


def _move_aside(path: Path, aside: Path) -> list[str]:
    """Rename ``path`` (and its ``-wal``/``-shm``, which SQLite finds by name) to ``aside``."""
    moved = []
    for suffix in ("-wal", "-shm", ""):
        source = path.with_name(path.name + suffix)
        if source.exists() or source.is_symlink():
            target = aside.with_name(aside.name + suffix)
            os.rename(source, target)
            moved.append(str(target))
    return moved[::-1]


def create_archive(path: Path) -> None:
    """A new, empty archive database at ``path``."""
    from ctxgate.archive.stores.sqlite import SQLiteStore

    SQLiteStore(path).close()


def create_audit(path: Path) -> None:
    """A new, empty audit log at ``path``."""
    from ctxgate.gate.audit import AuditLog

    AuditLog(path).close()


# -- the local model ---------------------------------------------------------------------

def check_model(files: list[dict[str, Any]]) -> Check:
    """The shipped model files (from :func:`ctxgate.gate.backends.modelfiles.status`)."""
    from ctxgate.gate.backends.modelfiles import REINSTALL

    bad = [f"{f['name']} {'differs from its pinned SHA-256' if f['present'] else 'is missing'}"
           for f in files if not (f["present"] and f["verified"])]
    if not bad:
        return Check("model", True, f"{len(files)} local model files match their pinned SHA-256")
    where = Path(str(files[0]["path"])).parent if files else "the package"
    return Check("model", False, f"local model file {', '.join(bad)} (in {where}): the local "
                 f"gate denies what it would judge; {REINSTALL}")


# -- installed hooks ---------------------------------------------------------------------

def hook_files(home: Path, project: Path) -> list[tuple[str, Path]]:
    """Every file ctxgate's hooks may be in: ``(harness, path)``, user files first (each
    harness adapter's own ``hooks_file``, the one ``hook install`` writes), plus Claude Code's
    ``.claude/settings.local.json`` beside the project's settings."""
    from ctxgate.integrations.hooks.harness import get_harness

    def where(harness: str, scope: str) -> tuple[str, Path]:
        return harness, get_harness(harness).hooks_file(scope, home=home, project=project)

    claude_project = where("claude-code", "project")
    files = [where("claude-code", "user"), where("codex", "user"), claude_project,
             ("claude-code", claude_project[1].with_name("settings.local.json")),
             where("codex", "project")]
    seen: set[Path] = set()
    out = []
    for harness, path in files:
        key = path.absolute()
        if key not in seen:
            seen.add(key)
            out.append((harness, path))
    return out


def _our_commands(data: Any) -> list[str]:
    from ctxgate.integrations.hooks.install import is_ours

    out = []
    hooks = data.get("hooks") if isinstance(data, dict) else None
    for groups in (hooks.values() if isinstance(hooks, dict) else ()):
        for group in groups if isinstance(groups, list) else ():
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else ():
                if is_ours(handler):
                    out.append(handler["command"])
    return out


def missing_paths(command: str) -> list[str]:
    """The interpreter and launcher script of one hook command that do not exist."""
    import shlex
    import shutil

    try:
        words = shlex.split(command)
    except ValueError:
        return []
    while words and "=" in words[0] and not words[0].startswith(("/", ".")):
        words.pop(0)  # VAR=value before the program
    if not words:
        return []
    missing = []
    program = words[0]
    if os.sep in program or "/" in program:
        if not os.path.exists(program):
            missing.append(program)
    elif shutil.which(program) is None:
        missing.append(program)
    missing += [w for w in words[1:] if w.endswith("_launch.py") and not os.path.exists(w)]
    return missing


def _pre_flags(commands: list[str], harness: str) -> str:
    """The flags the old ``hook pre`` entry had (without ``--harness``), to keep them."""
    import shlex

    for command in commands:
        head, sep, tail = command.partition(" hook pre")
        if not sep:
            continue
        try:
            words = shlex.split(tail)
        except ValueError:
            return ""
        kept, skip = [], False
        for word in words:
            if skip:
                skip = False
            elif word == "--harness":
                skip = True
            elif not word.startswith("--harness="):
                kept.append(shlex.quote(word))
        return "".join(f" {w}" for w in kept)
    return ""


def check_hooks(home: Path, project: Path, *, blocked: str = "") -> Check:
    """ctxgate's hook entries whose interpreter or launcher is gone, in every hook file.

    ``blocked``: why rewritten hooks could not decide (the local model is damaged); then
    nothing is rewritten, since working hooks that deny everything are worse than none.
    """
    import json

    broken: list[tuple[str, Path, list[str], list[str]]] = []
    found = 0
    unreadable = []
    for harness, path in hook_files(home, project):
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8") or "{}")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            unreadable.append(f"{path} ({exc})")
            continue
        commands = _our_commands(data)
        found += bool(commands)
        gone = sorted({m for c in commands for m in missing_paths(c)})
        if gone:
            broken.append((harness, path, commands, gone))
    if unreadable:
        return Check("hooks", False, f"hook file {'; '.join(unreadable)} is not readable "
                     "JSON; fix it by hand")
    if not broken:
        return Check("hooks", True, f"ctxgate hooks in {found} file(s), every interpreter "
                     "exists" if found else "no ctxgate hooks installed")
    named = "; ".join(f"{path} runs {', '.join(gone)}, which no longer exists"
                      for _, path, _, gone in broken)
    if blocked:
        return Check("hooks", False, f"{named}; not rewritten while {blocked}")

    def repair() -> tuple[bool, str]:
        from ctxgate.cli.fast_hook import hook_command_prefix
        from ctxgate.integrations.hooks import install as inst
        from ctxgate.integrations.hooks.harness import get_harness

        prefix = hook_command_prefix()
        done = []
        for harness, path, commands, _ in broken:
            entries = get_harness(harness).hook_entries(
                prefix, pre_flags=_pre_flags(commands, harness))
            backup = inst.write(inst.plan(path, entries))
            done.append(f"{path}" + (f" (previous version: {backup})" if backup else ""))
        trust = ("; Codex runs changed hooks only after you trust them again in /hooks"
                 if any(harness == "codex" for harness, *_ in broken) else "")
        return True, f"rewrote ctxgate's hooks to run {prefix}: {'; '.join(done)}{trust}"

    return Check("hooks", False, f"{named}; fix: {FIX} (reinstalls them for this "
                 "interpreter, keeping other hooks)", fixable=True, repair=repair)


# -- MCP client entries (``ctxgate mcp install``) ---------------------------------------------

def mcp_entries(home: Path, project: Path) -> list[tuple[str, Path, Any]]:
    """``(client, file, entry)`` of every ``ctxgate`` MCP server entry ``mcp install`` may
    have written (user and project scope of each client); unreadable files raise
    ``ValueError`` naming them."""
    import json
    import tomllib

    from ctxgate.integrations.mcp.install import CLIENTS, NAME, config_file

    out: list[tuple[str, Path, Any]] = []
    seen: set[Path] = set()
    for client in CLIENTS:
        for scope in ("user", "project"):
            path = config_file(client, scope, home=home, project=project)
            if path.absolute() in seen or not path.is_file():
                continue
            seen.add(path.absolute())
            try:
                text = path.read_text(encoding="utf-8")
                data = json.loads(text or "{}") if path.suffix == ".json" else \
                    tomllib.loads(text)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise ValueError(f"{path} ({exc})") from exc
            servers = (data.get("mcpServers") if path.suffix == ".json"
                       else data.get("mcp_servers")) if isinstance(data, dict) else None
            entry = servers.get(NAME) if isinstance(servers, dict) else None
            if entry is not None:
                out.append((client, path, entry))
    return out


def check_mcp(home: Path, project: Path) -> Check:
    """ctxgate's MCP server entries whose interpreter is gone (a removed virtualenv): the
    client then fails to start the server, often silently."""
    try:
        entries = mcp_entries(home, project)
    except ValueError as exc:
        return Check("mcp", False, f"MCP client file {exc} is not readable; fix it by hand")
    broken = []
    for client, path, entry in entries:
        command = entry.get("command") if isinstance(entry, dict) else None
        if not isinstance(command, str) or missing_paths(command):
            broken.append((client, path, entry, command))
    if not broken:
        return Check("mcp", True, f"ctxgate MCP server in {len(entries)} client file(s), every "
                     "interpreter exists" if entries else "no ctxgate MCP server installed")
    named = "; ".join(f"{path} starts {command!r}, which no longer exists"
                      for _c, path, _e, command in broken)

    def repair() -> tuple[bool, str]:
        import sys

        from ctxgate.integrations.mcp import install as inst

        done = []
        for client, path, entry, _ in broken:
            args = entry.get("args") if isinstance(entry, dict) else None
            if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
                args = inst.server_entry(sys.executable, None)["args"]
            backup = inst.write(inst.plan(client, path, {"command": sys.executable,
                                                         "args": args}))
            done.append(f"{path}" + (f" (previous version: {backup})" if backup else ""))
        return True, f"rewrote ctxgate's MCP server entry to start {sys.executable}: " \
                     f"{'; '.join(done)}"

    return Check("mcp", False, f"{named}; fix: {FIX} (points it at this interpreter, keeping "
                 "its arguments and the file's other entries)", fixable=True, repair=repair)


# -- the decision daemon's runtime directory ---------------------------------------------

def check_daemon_dir(directory: str) -> Check:
    """The runtime directory: private (0700, ours, a real directory); its dead sockets."""
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return Check("daemon", True, f"{directory} not created yet (no daemon has run)")
    except OSError as exc:
        return Check("daemon", False, f"{directory} cannot be read ({exc.strerror}); set "
                     "CTXGATE_RUNTIME_DIR to a private directory")
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        what = "is not a directory" if not stat.S_ISDIR(info.st_mode) else (
            f"belongs to uid {info.st_uid}, not you")
        return Check("daemon", False, f"{directory} {what}, so hooks never use the decision "
                     f"daemon (slower); remove it or set CTXGATE_RUNTIME_DIR")
    if info.st_mode & 0o077:
        def chmod() -> tuple[bool, str]:
            os.chmod(directory, 0o700)
            return True, f"{directory} made private (chmod 700)"

        return Check("daemon", False, f"{directory} has mode {stat.S_IMODE(info.st_mode):04o}, "
                     "not 0700, so hooks never use the decision daemon (slower); fix: "
                     f"{FIX} (chmod 700 {directory})", fixable=True, repair=chmod)
    stale = [p for p in sorted(Path(directory).glob("g-*.sock")) if not _daemon_alive(p)]
    if not stale:
        return Check("daemon", True, f"{directory} is private, no stale sockets")

    def remove() -> tuple[bool, str]:
        removed = [str(p) for p in stale if _remove_if_dead(p)]
        return True, f"removed {len(removed)} stale socket(s) in {directory}"

    # harmless (a starting daemon unlinks them, a hook then starts one): not a problem
    return Check("daemon", True, f"{directory} is private; {len(stale)} socket(s) of daemons "
                 f"that are no longer running ({stale[0].name}…), harmless; {FIX} removes "
                 "them", fixable=True, repair=remove)


def _lock_of(sock: Path) -> Path:
    return sock.with_name(sock.name[:-len(".sock")] + ".lock")


def _daemon_alive(sock: Path) -> bool:
    """Whether a daemon holds the lock of ``sock`` (its lock file is flock-ed while it runs)."""
    import fcntl

    try:
        fd = os.open(_lock_of(sock), os.O_RDONLY)
    except OSError:
        return False  # no lock file: nothing serves this socket
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def _remove_if_dead(sock: Path) -> bool:
    """Unlink ``sock`` while holding its daemon's lock, so no daemon binds it meanwhile."""
    import fcntl

    lock = _lock_of(sock)
    try:
        fd = os.open(lock, os.O_RDWR)
    except FileNotFoundError:
        sock.unlink(missing_ok=True)
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False  # a daemon started since the check
    try:
        sock.unlink(missing_ok=True)
        return True
    finally:
        os.close(fd)  # closing releases the lock
