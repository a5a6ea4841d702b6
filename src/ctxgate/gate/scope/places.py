"""Places a call acts on that nobody touches by the way: home, the root, system directories,
dotfiles, .git, a file beside the ones named, a parent of the named path; what a command or a
message sends out (scp sources, curl uploads, attachments); a Codex patch's deletes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ctxgate.gate.scope.words import (
    _EMAIL_OR_URL,
    _FILE_NAME,
    _excluded,
    _named,
    _pairs,
    _said_files,
    _segments,
)

_SYSTEM_DIRS = frozenset({"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt",
                          "/root", "/sbin", "/srv", "/sys", "/usr", "/var", "/usr/local",
                          "/usr/bin", "/usr/lib", "/var/lib", "/Applications", "/Library",
                          "/System", "/Users"})
_SAID_PATH = re.compile(r"(?<![\w.~/-])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*")
"""A path a request writes out with at least one slash (``/var/log/myapp``, ``build/cache``)."""
_SECRET_DIRS = ("/etc", "/root", "/boot", "/Library/Keychains")
"""System directories whose files nobody touches or sends by the way (``/etc/shadow``; not
``/dev`` or ``/proc``: ``/dev/null`` and ``/proc/self/fd/3`` are plumbing)."""
_WHOLE_SYSTEM = re.compile(r"\broot\b|(?<![\w.])/(?![\w.])|file ?system|system[- ]wide|"
                           r"\beverywhere\b|\b(?:entire|whole) (?:system|machine|disk|file hierarchy|"
                           r"hierarchy)\b", re.I)
"""What a request says when it means the whole filesystem ("under /", "in the file system")."""


def _shell_places(command: str, request: str, cwd: str) -> list[str]:
    """Paths a shell command deletes or overwrites (destructively) that the request does not
    name (:func:`_places`)."""
    from ctxgate.gate.effects.shell import recent_analysis

    a = recent_analysis(command, cwd=cwd)
    found = [(f.target, f.action, f.evidence.startswith("`find")) for f in a.findings
             if f.target and f.effect.destructive]
    if not found:
        return []
    targets = [t for t, _a, _f in found]
    # a find's matches are the rule's cautious guess, not names the command wrote out
    deleted = {t for t, act, by_find in found if act == "delete" and not by_find}
    return _places(targets, deleted, request, cwd)


def _places(targets: list[str], deleted: set[str], request: str, cwd: str) -> list[str]:
    """Of the paths a call destroys (``deleted``: the ones it deletes, written out), those the
    request does not name: a sensitive place always, another file when it names files."""
    from ctxgate.gate.backends.heads.matching import request_terms

    terms = request_terms(request)
    files = _said_files(request)
    home = os.path.expanduser("~")
    said_paths = {os.path.normpath(os.path.join(cwd, os.path.expanduser(m.group(0)))): m.group(0)
                  for m in _SAID_PATH.finditer(_EMAIL_OR_URL.sub(" ", request))}
    out = []
    for target in dict.fromkeys(targets):
        full = os.path.normpath(os.path.join(cwd, os.path.expanduser(
            re.sub(r"^(?:\$HOME|\$\{HOME\})(?=/|$)", "~", target))))
        base = os.path.basename(full)
        inside = [w for sp, w in said_paths.items() if sp.startswith(full.rstrip(os.sep) + os.sep)]
        beside = [w for sp, w in said_paths.items() if os.path.dirname(sp) == os.path.dirname(full)
                  and sp != full and not full.startswith(sp + os.sep)]
        if target in deleted and beside and not inside and full not in said_paths:
            # /tmp/* expanded for "the temp files in /tmp/build-cache": /tmp/other, /tmp/x.log
            out.append(f"{target}, beside the {beside[0]} the request names")
        elif target in deleted and inside and full not in said_paths:
            out.append(f"{target}, which holds more than the {inside[0]} the request names")
        elif _excluded(base, request):
            out.append(f"{target}, which the request excludes")
        elif full == home or target in ("~", "~/", "$HOME", "${HOME}"):
            if not re.search(r"\bhome\b|~", request, re.I):
                out.append(f"the home directory ({target})")
        elif full == "/":
            if not _WHOLE_SYSTEM.search(request):
                out.append(f"the filesystem root ({target})")
        elif full in _SYSTEM_DIRS:
            if not _named(base, request, terms):
                out.append(f"the system directory {target}")
        elif os.path.dirname(full) == home:  # ~/.ssh, ~/.bashrc, ~/Documents, ~/work
            if not _named(base.lstrip("."), request, terms):
                out.append(f"{target} in the home directory")
        elif full.startswith(home + os.sep) and full[len(home) + 1:].startswith("."):
            parts = full[len(home) + 1:].split(os.sep)  # ~/.ssh/id_rsa, ~/.config/gh/…
            if not any(_named(part.lstrip("."), request, terms) for part in parts
                       if part.strip(".") and not re.search(r"[*?\[]", part)):
                out.append(f"{target} in ~/{parts[0]}")  # "empty the trash": …/Trash/* named
        elif not full.startswith(home + os.sep) and any(
                full.startswith(d + os.sep) for d in _SECRET_DIRS):
            top = next(d for d in _SECRET_DIRS if full.startswith(d + os.sep))
            if not (_named(base, request, terms) or _named(top.strip("/"), request, terms)):
                out.append(f"{target} in the system directory {top}")
        elif base == ".git":
            if not re.search(r"\bgit\b|repositor|history", request, re.I):
                out.append(f"the repository's history ({target})")
        elif target in deleted and files and _FILE_NAME.fullmatch(base) \
                and not re.search(r"[$`*?\[]", target) \
                and base.lower() not in files and not any(
                f.split(".")[0] == base.lower().split(".")[0] for f in files) and not (
                target in request or _named(base.split(".")[0], request, terms)):
            out.append(target)
    return out


_SENDERS = frozenset({"scp", "rsync", "sftp", "curl", "wget", "nc", "ncat", "rclone"})


def _sent_sources(command: str) -> list[str]:
    """Local files a command sends to another machine: the sources of ``scp``/``rsync``/
    ``rclone`` to a remote destination, the files of ``curl -T``/``-F x=@file``/
    ``--data @file``."""

    out: list[str] = []
    for seg in _segments(command):
        if seg.program not in _SENDERS:
            continue
        args = list(seg.args)
        if seg.program in ("scp", "rsync", "rclone"):
            ops = [x for x in args if not x.startswith("-")]
            if len(ops) >= 2 and re.match(r"^[\w.@-]+:", ops[-1]):
                out += [x for x in ops[:-1] if not re.match(r"^[\w.@-]+:", x)]
        elif seg.program == "curl":
            for k, x in enumerate(args[:-1]):
                v = args[k + 1]
                if x in ("-T", "--upload-file"):
                    out.append(v)
                elif x in ("-F", "--form") and "=@" in v:
                    out.append(v.split("=@", 1)[1].split(";")[0])
                elif x.startswith(("-d", "--data")) and v.startswith("@") and v != "@-":
                    out.append(v[1:])
    return [x for x in out if x]


_MAILERS = frozenset({"mail", "mailx", "mutt", "s-nail", "neomutt"})


def _mailed_files(command: str) -> list[str]:
    """Files a command-line mailer attaches (``mail -a FILE``, ``mutt -a F1 F2 --``)."""
    out: list[str] = []
    for seg in _segments(command):
        if seg.program not in _MAILERS:
            continue
        args = list(seg.args)
        for k, x in enumerate(args[:-1]):
            if x in ("-a", "-A", "--attach"):
                out.append(args[k + 1])
            elif x.startswith("--attach="):
                out.append(x.split("=", 1)[1])
    return out


_SECRET_FILE = re.compile(
    r"(?i)(?:^|/)(?:\.env(?:\.(?!example$|sample$|template$|dist$)[\w.-]+)?|"
    r"[\w.-]*\.(?:pem|key|p12|pfx|jks|keystore|kdbx|ppk|asc|gpg)|"
    r"id_(?:rsa|dsa|ecdsa|ed25519)|credentials(?:\.json|\.ya?ml)?|"
    r"service[-_]account[\w.-]*\.json|[\w.-]*secrets?\.(?:json|ya?ml|toml|env|txt)|"
    r"\.netrc|\.pgpass|\.npmrc|\.pypirc|\.htpasswd|\.git-credentials)$|"
    r"(?:^|/)(?:\.ssh|\.gnupg|\.aws|\.secrets|secrets)/")
"""A file that holds keys or passwords, by its name or directory (``.env`` but not
``.env.example``; ``*.pem``, ``id_rsa``, ``credentials.json``, ``secrets/…``)."""


def _sent_secrets(files: list[str], request: str,
                  how: str = "sent with what was asked") -> list[str]:
    """Of the files a call sends out, those that look like secrets and that the request does
    not name ("send the build log to bob" → ``mail -a build.log -a .env``); ``how`` ends each
    phrase."""
    from ctxgate.gate.backends.heads.matching import request_terms

    terms = request_terms(request)
    out = []
    for f in dict.fromkeys(files):
        if not _SECRET_FILE.search(f.strip()) or f.strip().endswith(".pub"):
            continue  # a public key is meant to be sent
        base = os.path.basename(f.rstrip("/")) or f
        if f in request or base in request or _named(base.lstrip(".").split(".")[0], request,
                                                     terms):
            continue
        out.append(f"{f} (a file of keys or passwords, {how})")
    return out


def _secret_values(args: Mapping[str, Any], request: str) -> list[str]:
    """Arguments of a function call that hold what looks like a secret when the request gives
    none ("search the docs for rate limits" → a ``query`` with a GitHub token in it)."""
    from ctxgate.gate.effects.urls import secret_in

    if secret_in(request) is not None:
        return []
    out = []
    for key, value in _pairs(args):
        if isinstance(value, str):
            kind = secret_in(value[:100_000])
            if kind is not None:
                out.append(f"a {kind} in {key} (a secret the request does not give)")
    return out


_ATTACH_KEY = re.compile(r"attach", re.I)
_BARE_FILE = re.compile(r"[\w.-]*\.[\w.-]+|[\w.-]+/[\w./-]+")
"""A relative file name or path given bare (``.env``, ``build.log``, ``logs/app.log``)."""


def _attachments(args: Mapping[str, Any]) -> list[str]:
    """Local paths under attachment arguments of a function call (``attachments``): paths,
    and bare file names (``.env``, ``build.log``)."""
    out = []
    for key, value in _pairs(args):
        if not _ATTACH_KEY.search(key):
            continue
        for v in (value if isinstance(value, list) else [value]):
            if isinstance(v, Mapping):
                v = next((v[k] for k in ("path", "file_path", "filename", "file") if k in v), None)
            if isinstance(v, str) and (re.match(r"^(~|/|\.{1,2}/|\$HOME)", v.strip()) or
                                       _BARE_FILE.fullmatch(v.strip())):
                out.append(v.strip())
    return out


def _patched_places(tool: str, args: Mapping[str, Any], request: str, cwd: str) -> list[str]:
    """The files a Codex ``apply_patch`` (the tool, or ``shell ["apply_patch", PATCH]``)
    deletes or overwrites destructively that the request does not name (:func:`_places`):
    "fix the typo in notes.txt" → a patch that also deletes the untracked work.txt."""
    from ctxgate.gate.effects.harness import _patch_text, patch_files
    from ctxgate.gate.effects.paths import classify_path

    command = args.get("command")
    if tool.lower() != "apply_patch" and not (
            isinstance(command, list) and command[:1] == ["apply_patch"]):
        return []
    text = _patch_text(args)
    if not text:
        return []
    targets: list[str] = []
    deleted: set[str] = set()
    for kind, target, action, _end in patch_files(text):
        pe = classify_path(target, action, cwd=cwd)
        if pe.effect is not None and pe.effect.destructive:
            targets.append(target)
            if kind == "Delete":
                deleted.add(target)
    return _places(targets, deleted, request, cwd)
