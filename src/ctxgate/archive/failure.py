"""Why the archive cannot store an output, in words a model and a person can act on.

A run never waits on the archive: when the store cannot be opened or written (read-only
home, full disk, a garbled or locked ``archive.db``, Redis down), the command still runs and
its output is shown bounded with the marker :meth:`StoreFailure.marker`. This module turns
the exception into that marker's two parts: *why* (``"archive.db is not a SQLite
database"``) and *fix* (``"move it aside: mv … …broken"``).

:func:`diagnose_sqlite` reads SQLite's and the OS's error for a database file;
:func:`describe_failure` accepts any exception (a :class:`~ctxgate.errors.StoreUnavailable`
carries its own ``why``/``fix``). :func:`open_archive` never raises: when the archive cannot be
opened it returns an archive over :class:`UnavailableStore`, whose every operation raises
that failure, so a run goes on through the same code path and shows the marker.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxgate.archive.archive import Archive
    from ctxgate.archive.policy import ArchivePolicy

__all__ = ["StoreFailure", "UnavailableStore", "describe_failure", "diagnose_sqlite",
           "open_archive"]

_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


@dataclass(frozen=True, kw_only=True)
class StoreFailure:
    """Why an output was not archived, and what to do."""

    why: str
    fix: str

    def marker(self) -> str:
        """``not archived (<why>; fix: <fix>)``: the line shown with the bounded output."""
        return f"not archived ({self.why}; fix: {self.fix})"


def diagnose_sqlite(exc: BaseException, path: Path) -> StoreFailure:
    """The cause of a ``sqlite3``/``OSError`` failure on the database file ``path``."""
    path = Path(path)
    name, home = path.name, path.parent
    text = str(exc).lower()
    code = getattr(exc, "errno", None)
    aside = f"move it aside (mv {path} {path}.broken); the next run creates a new archive"
    elsewhere = "or set CTXGATE_HOME to a writable directory"
    if "not a database" in text:
        return StoreFailure(why=f"{name} is not a SQLite database (garbled or foreign file)",
                            fix=aside)
    if "malformed" in text or "corrupt" in text:
        return StoreFailure(why=f"{name} is corrupt (truncated or damaged)", fix=aside)
    if "locked" in text or "busy" in text:
        return StoreFailure(why=f"{name} is locked by another process",
                            fix=f"end the process holding it (fuser -v {path}) or wait")
    if "full" in text or code in _FULL or "too large" in text:
        return StoreFailure(
            why=f"the disk holding {home} is full",
            fix=f"free disk space or run 'ctxgate archive purge --older-than 1d', {elsewhere}")
    if "disk i/o error" in text:
        return StoreFailure(
            why=f"writing {name} failed with a disk I/O error (disk full or failing, or a "
                "file size limit)",
            fix=f"free disk space or check the disk and 'ulimit -f', {elsewhere}")
    if code == errno.ENOTDIR or (code == errno.ENOENT and not _dir_can_exist(home)):
        return StoreFailure(why=f"{home} cannot be created (a parent is not a directory)",
                            fix=f"set CTXGATE_HOME to a writable directory (now {home})")
    if path.is_dir():
        return StoreFailure(why=f"{path} is a directory, not a database file", fix=aside)
    if ("readonly" in text or "read-only" in text or code in _READ_ONLY
            or ("unable to open" in text and not _writable(home))):
        return StoreFailure(why=f"{home} is read-only or not writable",
                            fix=f"make it writable (chmod u+rwx {home}), {elsewhere}")
    detail = f"{type(exc).__name__}: {exc}"
    return StoreFailure(why=f"{name} cannot be used ({detail})",
                        fix=f"check {path} and its directory, {elsewhere}")


def describe_failure(exc: BaseException) -> StoreFailure:
    """The :class:`StoreFailure` of any exception raised by an archive or its store."""
    from ctxgate.errors import StoreUnavailable

    if isinstance(exc, StoreUnavailable) and exc.fix:
        return StoreFailure(why=exc.why, fix=exc.fix)
    code = getattr(exc, "errno", None)
    if isinstance(exc, OSError) and code in _FULL:
        return StoreFailure(why=f"the archive's disk is full ({exc})",
                            fix="free disk space, or set CTXGATE_HOME to another disk")
    if isinstance(exc, OSError) and code in _READ_ONLY:
        return StoreFailure(why=f"the archive cannot be written ({exc})",
                            fix="make CTXGATE_HOME writable, or point it elsewhere")
    return StoreFailure(why=f"the archive failed ({type(exc).__name__}: {exc})",
                        fix="run 'ctxgate archive stats' to see what is wrong with it")


def open_archive(home: Path, policy: ArchivePolicy) -> tuple[Archive, StoreFailure | None]:
    """``(archive, None)``; or, when it cannot be opened, ``(archive over an
    UnavailableStore, why)``. Never raises."""
    from ctxgate.archive.archive import Archive

    try:
        return Archive.open(home, policy), None
    except Exception as exc:  # noqa: BLE001 - any failure means: run without the archive
        failure = describe_failure(exc)
    try:
        return Archive(UnavailableStore(failure), policy), failure
    except Exception:  # noqa: BLE001 - e.g. bad extra_redact_patterns: default policy
        from ctxgate.archive.policy import DEFAULT_ARCHIVE_POLICY

        return Archive(UnavailableStore(failure), DEFAULT_ARCHIVE_POLICY), failure


class UnavailableStore:
    """An ArchiveStore that could not be opened: every operation raises its failure."""

    def __init__(self, failure: StoreFailure) -> None:
        self.failure = failure

    def _raise(self, *args: object, **kwargs: object):
        from ctxgate.errors import StoreUnavailable

        raise StoreUnavailable(f"the archive is unavailable: {self.failure.why}; "
                               f"{self.failure.fix}", why=self.failure.why, fix=self.failure.fix)

    write_chunks = commit = discard = get = match_prefix = read_chunk = list = _raise
    touch = set_pinned = delete = expired_ids = lru_ids = usage = tombstone = _raise
    sweep_uploads = heartbeat = upload_usage = _raise

    def close(self) -> None:
        """Nothing to release."""


def _writable(directory: Path) -> bool:
    try:
        return directory.is_dir() and os.access(directory, os.W_OK)
    except OSError:
        return False


def _dir_can_exist(directory: Path) -> bool:
    """False when some existing ancestor of ``directory`` is not a directory."""
    for parent in (directory, *directory.parents):
        try:
            if parent.exists():
                return parent.is_dir()
        except OSError:
            return False
    return True
