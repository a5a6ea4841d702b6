"""Commands that only *name* a program: they print its help, version or manual and run nothing.

``rm --help``, ``kubectl --version``, ``man rm``, ``git help reset`` and ``git reset --help``
are read-only however destructive the program they name; a decision model reads the program's
name and scores them high (issue 9's "mentions"). The fast path proves them here, from
exact forms only:

- ``PROGRAM --help`` or ``PROGRAM --version`` as the *only* argument, for a program of
  :data:`HELP_PROGRAMS`: programs whose option parser is known to print and exit on them
  before doing anything. Not ``-h`` (``shutdown -h`` halts, ``sort -h`` sorts), not an
  unknown program (a script need not honour ``--help``), not ``--help`` after other words
  (a program may act on its operands first, or stop parsing options at them);
- ``man [SECTION] NAME`` with plain names (no option, no path, no glob), and no ``MANPAGER``,
  ``PAGER``, ``MANOPT`` or ``MANROFFOPT`` in the environment;
- git's own help is checked by :mod:`.git` (``git help …``, ``git SUB --help``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from ctxgate.gate.fastpath.lexer import Word
from ctxgate.gate.fastpath.options import Refusal

__all__ = ["HELP_PROGRAMS", "NAMING_OPTIONS", "check_man", "help_form", "is_help_call",
           "man_env_problem"]

NAMING_OPTIONS = frozenset({"--help", "--version"})

HELP_PROGRAMS = frozenset({
    # GNU coreutils, findutils, diffutils, util-linux, procps: getopt_long prints and exits
    "rm", "mv", "cp", "dd", "shred", "ln", "install", "mkdir", "rmdir", "touch", "truncate",
    "chmod", "chown", "chgrp", "tee", "sort", "split", "csplit", "unlink", "mktemp", "sync",
    "kill", "pkill", "pgrep", "killall", "nice", "nohup", "env", "stdbuf", "chroot", "su",
    "sudo", "mount", "umount", "losetup", "mkfs", "mkswap", "swapon", "swapoff", "fdisk",
    "sfdisk", "parted", "wipefs", "blkdiscard", "fstrim", "shutdown", "reboot", "halt",
    "poweroff", "systemctl", "journalctl", "loginctl", "timedatectl", "hostnamectl",
    "useradd", "userdel", "usermod", "groupadd", "groupdel", "passwd", "chpasswd", "crontab",
    "sed", "awk", "gawk", "mawk", "find", "xargs", "diff", "patch", "tar", "gzip", "gunzip",
    "bzip2", "xz", "zstd", "zip", "unzip", "rsync", "scp", "curl", "wget", "iptables",
    "ip", "chattr", "setfacl", "date", "hostname",
    # developer CLIs whose parsers print and exit (left out: CLIs that check for updates,
    # switch toolchains or load plugins first: npm, docker, terraform, gcloud, az, cargo, go)
    "make", "cmake", "podman", "kubectl", "helm", "gh", "pip", "pip3", "uv",
    "redis-cli", "psql", "pg_dump", "pg_restore", "dropdb", "createdb", "mysql",
    "mysqladmin", "mysqldump", "sqlite3", "restic", "rclone", "borg", "vault", "etcdctl",
    "git-lfs",
})
"""Programs proved not to act when their only argument is ``--help`` or ``--version``."""

_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+:@-]*")
_MAN_ENV = ("MANPAGER", "PAGER", "MANOPT", "MANROFFOPT", "MANPL", "MAN_KEEP_FORMATTING")


def help_form(name: str, args: Sequence[str]) -> bool:
    """``NAME --help`` / ``NAME --version`` exactly, for a program of :data:`HELP_PROGRAMS`
    (``args`` after quote removal)."""
    return name in HELP_PROGRAMS and len(args) == 1 and args[0] in NAMING_OPTIONS


def is_help_call(name: str, args: Sequence[Word]) -> bool:
    """:func:`help_form` of the fast path's words (an unquoted glob is never one)."""
    return not any(w.glob for w in args) and help_form(name, [w.text for w in args])


def man_env_problem() -> str | None:
    """Why ``man`` (run by ``man NAME`` or ``git help``) may run another program, or ``None``."""
    for var in _MAN_ENV:
        if os.environ.get(var):
            return f"man with {var} set may run another program"
    return None


def check_man(args: Sequence[Word]) -> None:
    """Raise :class:`Refusal` unless ``man ARGS`` only shows a manual page by name."""
    why = man_env_problem()
    if why:
        raise Refusal(why)
    if not 1 <= len(args) <= 2:
        raise Refusal("man other than 'man [SECTION] NAME'")
    for w in args:
        if w.glob or not _PLAIN.fullmatch(w.text):
            raise Refusal(f"man {w.text!r}: an option or a path (man may format a local file)")
    if len(args) == 2 and not re.fullmatch(r"[1-9][a-z]*|n", args[0].text):
        raise Refusal("man with two names shows two pages (only SECTION NAME is modelled)")
