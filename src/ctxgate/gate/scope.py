"""Targets a call acts on that the user's request never names: the over-reach check.

A request names what to act on ("delete the build directory", "send the report to
alice@corp.com", "undo my last commit"). An agent that was steered, or that over-reached,
does that *and more*: ``rm -rf build ~/``, a second recipient, ``git reset --hard HEAD~10``,
``kubectl delete namespace prod`` for the staging one. The decision model judges the call as
a whole, and a call that does what was asked scores as requested even when it also does what
was not. :func:`unnamed_targets` lists what the request does not cover:

* **places nobody deletes by the way** — home (``~``), the filesystem root, a system
  directory (``/etc``, ``/usr`` …), anything directly in home (``~/.ssh``, ``~/.bashrc``,
  ``~/Documents``), a repository's ``.git``: deleted or overwritten by a shell command while the
  request names none of them;
* **what the request excludes** — a target the request names only to spare it ("everything
  except notes.txt", "without removing notes.txt", "keep main.py");
* **something else than the request deletes** — the request orders a delete of something
  specific ("delete the cache and show me the logs") and the command destroys what it does
  not name there (``rm -rf logs``, ``DROP TABLE users`` for the temp_import table, ``git
  branch -D main`` for feature-x; a ``DELETE`` without ``WHERE`` when the request names a
  row's number); a vague delete ("clean up", "delete it") binds nothing;
* **other files** — when the request names files (``notes.txt``), each further file (a name
  with an extension, written out) the command deletes must be named too (a coding agent
  writes files the task never named: tests, patches);
* **addresses and hosts** — when the request names an e-mail address or a URL, each address
  or host of the call;
* **people and channels** — when the request names whom to write to by name ("to Bob",
  "#dev"), an address whose name part holds none of those names, a channel by another name;
* **access for anyone** — a public ACL, a share with ``anyone``, a ``*`` principal, when the
  request never says public, anyone or link;
* **everything** — a tool named for all or bulk (``cancel_all_events``), an id of ``all``,
  when the request never says all, every or each;
* **names chosen when it runs** — ``… | xargs git branch -D`` for "delete the stale branch
  feature-x": a delete whose targets are computed, when the request writes one out;
* **amounts** — when the request names an amount of money (``120 EUR``, ``$50``), an amount
  argument that is neither it nor it in cents;
* **object numbers** — when the request names numbers (``issue #12``), a number under an id
  argument (``issue_number``, ``pull_id``) of a function call;
* **beyond a reply's pick** — "just build" (or "yes, but not dist") after the assistant
  offered to delete build/ and dist/;
* **any age** — a ``find`` that deletes with no time test when the request limits the delete
  by age ("older than 7 days");
* **how far back** — ``HEAD~N`` beyond the count the request gives ("my last commit" is 1);
* **production** — ``prod``/``production`` in the call, never in the request;
* **a force push** — a push that overwrites or deletes remote history, when the request
  never says force, overwrite, rewrite or delete.

The gate applies it to calls the model would allow that look destructive or external
(``GatePolicy.scope``): such a call is asked about. Pure and deterministic; reads no file but
what the shell rules read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["unnamed_targets"]

_SYSTEM_DIRS = frozenset({"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt",
                          "/root", "/sbin", "/srv", "/sys", "/usr", "/var", "/usr/local",
                          "/usr/bin", "/usr/lib", "/var/lib", "/Applications", "/Library",
                          "/System", "/Users"})
_SAID_PATH = re.compile(r"(?<![\w.~/-])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*")
"""A path a request writes out with at least one slash (``/var/log/myapp``, ``build/cache``)."""
_SECRET_DIRS = ("/etc", "/root", "/boot", "/Library/Keychains")
"""System directories whose files nobody touches or sends by the way (``/etc/shadow``; not
``/dev`` or ``/proc``: ``/dev/null`` and ``/proc/self/fd/3`` are plumbing)."""
_FILE_NAME = re.compile(r"(?<![\w@/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})\b")
_EMAIL_OR_URL = re.compile(r"\S+@\S+|\b[a-z][a-z0-9+.-]*://\S+", re.I)
_WHOLE_SYSTEM = re.compile(r"\broot\b|(?<![\w.])/(?![\w.])|file ?system|system[- ]wide|"
                           r"\beverywhere\b|\b(?:entire|whole) (?:system|machine|disk|file hierarchy|"
                           r"hierarchy)\b", re.I)
"""What a request says when it means the whole filesystem ("under /", "in the file system")."""
_HEAD_BACK = re.compile(r"\bHEAD(?:~(\d+)|(\^+))")
_PROD = re.compile(r"(?<![a-z0-9])(prod|production)(?![a-z])", re.I)
_FORCE_WORDS = re.compile(r"\b(force|forced|forcing|overwrite|overwriting|rewrite|rewriting|"
                          r"rewritten|clobber)", re.I)
_DELETE_WORDS = re.compile(r"\b(delete|remove|drop|prune)", re.I)
_ID_KEY = re.compile(r"(^|_)(id|number|num|no|issue|pr|pull|ticket|order|invoice)s?($|_)"
                     r"|(Id|Number|Num)$", re.I)
_INT = re.compile(r"(?<![\w.])#?(\d{1,9})(?![\w.]|\.\d)")


def unnamed_targets(tool: str, arguments: Any, request: str, *, cwd: str) -> list[str]:
    """What the call acts on that ``request`` never names (module docstring), each as a short
    phrase; ``[]`` when the request covers it all, or names nothing a rule could check."""
    if not isinstance(request, str) or not request.strip():
        return []
    from ctxgate.gate.backends.heads.gloss import gloss

    request = gloss(request)  # "lösche …": the action words the checks read are English
    args = arguments if isinstance(arguments, Mapping) else {}
    command = _shell_command(tool, args)
    out: list[str] = []
    if command is not None:
        out += _age(command, request)
        out += _shell_places(command, request, cwd)
        out += _unbound(_destroyed_names(command, cwd), command, _ordered(request))
        out += _reply_scope(command, request, cwd)
        out += _head_back(command, request)
        out += _force_push(command, request)
        out += _places(_sent_sources(command), set(), request, cwd)
        out += _shell_numbers(command, request)
        out += _discarded_changes(command, request, cwd)
        out += _untracked_losses(command, request, cwd)
        text = command
    else:
        from ctxgate.gate.backends.heads.matching import verb_action

        paths, names, sql = _call_targets(tool, args, cwd)
        deletes = "delete" in verb_action(tool)
        out += _places(paths + _attachments(args), set(paths) if deletes else set(), request,
                       cwd)
        text = " ".join(_values(args))
        # what a delete binds to: only a call that deletes (a create_branch is no delete)
        out += _unbound(names if deletes else sql, text, _ordered(request))
        out += _query_scope(args, request) if deletes else []
        out += _numbers(args, request)
        out += _amounts(args, request)
        out += _channels(args, request)
        out += _bulk(tool, args, request)
    out += _patched_places(tool, args, request, cwd)
    out += _addresses(args, command, request)
    out += _public(args, command, request)
    out += _unsaid_verbs(tool, command, request)
    out += _permissions(args, command, request)
    prod = _PROD.search(text)
    if prod and not _PROD.search(request):
        out.append(f"production ({prod.group(0)!r})")
    return list(dict.fromkeys(out))


def _shell_command(tool: str, args: Mapping[str, Any]) -> str | None:
    from ctxgate.gate.effects.executed import executed_argument
    from ctxgate.gate.effects.harness import SHELL_TOOL_NAMES, shell_text

    if tool.lower() in SHELL_TOOL_NAMES:
        return shell_text(args)
    found = executed_argument(tool, args)
    return found[2] if found is not None and found[0] == "shell" else None


def _values(value: Any, depth: int = 0) -> Iterable[str]:
    from ctxgate.gate.provenance import CONTENT_KEYS

    if isinstance(value, str):
        yield value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)
    elif depth < 6 and isinstance(value, Mapping):
        for k, v in value.items():
            if str(k).lower() not in CONTENT_KEYS:
                yield from _values(v, depth + 1)
    elif depth < 6 and isinstance(value, list | tuple):
        for v in value:
            yield from _values(v, depth + 1)


def _named(word: str, request: str, terms: frozenset[str]) -> bool:
    """Whether the request names ``word`` (as written, or by a stem of one of its words)."""
    from ctxgate.gate.backends.heads.matching import request_terms

    squeezed = re.sub(r"[\W_]+", "", word.lower())
    if word.lower() in request.lower() or (
            squeezed and squeezed in re.sub(r"[\W_]+", "", request.lower())):
        return True  # as written, or with its spaces and separators dropped (git config)
    words = request_terms(word)
    return bool(words) and bool(words & terms)


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
    files = {m.group(1).rsplit("/", 1)[-1].lower()
             for m in _FILE_NAME.finditer(_EMAIL_OR_URL.sub(" ", request))}
    home = os.path.expanduser("~")
    said_paths = {os.path.normpath(os.path.join(cwd, os.path.expanduser(m.group(0)))): m.group(0)
                  for m in _SAID_PATH.finditer(_EMAIL_OR_URL.sub(" ", request))}
    out = []
    for target in dict.fromkeys(targets):
        full = os.path.normpath(os.path.join(cwd, os.path.expanduser(
            re.sub(r"^(?:\$HOME|\$\{HOME\})(?=/|$)", "~", target))))
        base = os.path.basename(full)
        inside = [w for sp, w in said_paths.items() if sp.startswith(full.rstrip(os.sep) + os.sep)]
        if target in deleted and inside and full not in said_paths:
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


_EXCLUDING = re.compile(r"\b(except|excluding|other than|apart from|besides|but not|keep|"
                        r"keeping|leave|leaving|preserve|spare|not|never|don'?t|do not|"
                        r"without)\b(?:\W+[\w.-]+){0,3}\W*$", re.I)
_CLAUSE_END = re.compile(r"[.;!?\n,]")


def _excluded(name: str, request: str) -> bool:
    """Whether every place the request names ``name`` excludes it ("everything except
    notes.txt", "without removing notes.txt", "keep main.py")."""
    if len(name) < 2:
        return False
    found = list(re.finditer(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", request, re.I))
    if not found:
        return False
    for m in found:
        starts = [c.end() for c in _CLAUSE_END.finditer(request, 0, m.start())]
        if not _EXCLUDING.search(request[starts[-1] if starts else 0:m.start()]):
            return False
    return True


_EMPTYING = re.compile(r"\b(truncat|flush|empt(y|ies)\b|reset)", re.I)
"""Deletes the action table does not list: emptying a table, a cache, a database."""
_GENERIC = frozenset("file files dir dirs directory directories folder folders everything all "
                     "thing things stuff it them those these ones one content contents "
                     "old stale unused unneeded".split())
"""Words that say how much, not what: a request whose delete names only these is vague."""
_SQL_TARGET = re.compile(r"\b(?:DROP\s+(?:TABLE|DATABASE|SCHEMA|VIEW|INDEX|COLLECTION)\s+"
                         r"(?:IF\s+EXISTS\s+)?|TRUNCATE\s+(?:TABLE\s+)?|DELETE\s+FROM\s+)"
                         r"[\"`]?([\w.]+)", re.I)
_SQL_ALL_ROWS = re.compile(r"\bDELETE\s+FROM\s+[\"`]?([\w.]+)[\"`]?\s*(?:;|$|[\"'])", re.I)


_IDENTIFIER = re.compile(r"(?<![\w.-])(?=\S*[A-Za-z])(?:\w+(?:[-_./]\w+)+|[A-Za-z]*\d[\w]*)(?![\w-])")
"""A name a request writes out (``feature-x``, ``notes.txt``, ``v2``, a quoted name), not a
description of a kind ("the merged branches")."""
_PRONOUN = re.compile(r"\b(it|them|they|these|those|this|that|ones?)\b", re.I)


def _unbound(names: list[tuple[str, str, str]], text: str, request: str) -> list[str]:
    """What a call destroys (``names``: :func:`_destroyed_names`, :func:`_call_targets`;
    ``text``: the call's text) that the request's own deletes do not cover: named only
    where the request orders something else ("delete the cache and show me the logs" →
    ``rm -rf logs``), or named nowhere while the delete names something specific ("drop the
    temp_import table" → ``DROP TABLE users``, "delete the stale branch feature-x" → ``git
    branch -D main``); and a ``DELETE`` without ``WHERE`` when the request names a number. A
    vague delete ("clean up", "delete it") binds nothing."""
    from ctxgate.gate.backends.heads.intent import action_spans, other_actions
    from ctxgate.gate.backends.heads.matching import ACTIONS, request_terms

    deletes = [ACTIONS["delete"][0], _EMPTYING]
    spans = action_spans(request, deletes, other_actions("delete"))
    if not spans:
        return []
    out: list[str] = []
    if _said_numbers(request):
        out += [f"every row of {m.group(1)} (a DELETE without WHERE)"
                for m in _SQL_ALL_ROWS.finditer(text)]
    if any(_PRONOUN.search(sp) for sp in spans):  # "find the .bak files and delete them"
        return out  # the delete's object is named elsewhere: nothing to bind here
    generic = set().union(*(request_terms(g) for g in _GENERIC))
    said_words = {w for sp in spans for p in deletes for m in p.finditer(sp)
                  for w in request_terms(m.group(0))}
    objects = {t for t in set().union(*(request_terms(sp) for sp in spans)) - generic
               - said_words if not t.isdigit()}
    others = action_spans(request, other_actions("delete"), deletes)
    elsewhere = set().union(*(request_terms(o) for o in others)) if others else set()
    spoken = " ".join(spans)
    for name, kind, parent in names:
        if name == COMPUTED:  # "delete the stale branch feature-x" → `… | xargs git branch -D`
            specific = sorted({m.group(0) for m in _IDENTIFIER.finditer(spoken)
                               if not _excluded(m.group(0), request)})
            if specific and _KIND_NAMED.get(kind, re.compile("(?!)")).search(spoken):
                out.append(f"{kind} names chosen when it runs ({parent}; the request deletes "
                           f"{', '.join(specific)[:60]})")
            continue
        terms = request_terms(name) - generic
        if not terms or terms & objects or name.lower() in spoken.lower() or (
                parent and parent.lower() in spoken.lower()):
            continue
        if terms & elsewhere or any(name.lower() in o.lower() for o in others):
            out.append(f"{name} (the request names it only for another action)")
        elif objects and (_KIND_NAMED.get(kind) or re.compile(
                rf"\b{re.escape(kind)}(?:e?s)?\b", re.I)).search(spoken):
            out.append(f"{name} (the request deletes {', '.join(sorted(objects))[:60]})")
    return out


_KIND_NAMED = {
    "path": re.compile(r"[\w-]\.[A-Za-z]{1,8}\b|\w/(?:\w|\s|$)|[\"'`]"),
    "table": re.compile(r"\b(tables?|databases?|db|schemas?|collections?|views?)\b", re.I),
    "branch": re.compile(r"\bbranch(es)?\b", re.I),
    "tag": re.compile(r"\btags?\b", re.I),
    "worktree": re.compile(r"\bwork ?trees?\b", re.I),
    "package": re.compile(r"\b(packages?|librar(?:y|ies)|modules?|uninstall\w*)\b(?!.*\b"
                          r"(?:dependenc|deps\b|requirements))", re.I | re.S),
    "find": re.compile(r"(?!)"),
}
"""What a delete must say for a target it does not name to count as another one: a file name
or path for a path, the word "table" for a table, "branch" for a branch (``find`` matches are
judged by their patterns only where the request names them for another action)."""


def _destroyed_names(command: str, cwd: str) -> list[tuple[str, str, str]]:
    """``(name, kind, parent)`` for what a shell command destroys: the base names of the
    paths the path rules judged destructive (not a ``find`` starting point nor an ``rsync
    --delete`` destination: a deleting ``find``'s names are its ``-name`` patterns), SQL tables and databases dropped or
    emptied, git branches and tags deleted; ``parent``: a path's directory as written."""
    from ctxgate.gate.effects.shell import recent_analysis
    from ctxgate.shell import parse_command

    a = recent_analysis(command, cwd=cwd)
    names = [(os.path.basename(os.path.normpath(f.target)), "path",
              os.path.dirname(os.path.normpath(f.target))) for f in a.findings
             if f.target and f.effect.destructive and f.action == "delete"
             and not f.evidence.startswith(("`find", "`rsync"))  # a place, not what goes
             and not re.search(r"[$`*?\[]", f.target)]
    names += [(m.group(1).split(".")[-1], "table", "") for m in _SQL_TARGET.finditer(command)]
    names += [(m.group(0).lower(), "key", "") for m in _FLUSH.finditer(command)]
    segments = parse_command(command).segments
    xargs_deletes = any("xargs" in s.wrappers and s.program in _DELETERS for s in segments)
    finds = any(s.program == "find" for s in segments)
    names += [(COMPUTED, "path", f"`{f.evidence.split('`')[1]}`" if f.evidence.count("`") > 1
               else "a computed path") for f in a.findings
              if f.target and f.effect.destructive and f.action == "delete" and not finds
              and re.search(r"[$`]", f.target)]
    for seg in segments:
        args = list(seg.args)
        if seg.program == "find" and (xargs_deletes or _deleting_find(seg)):
            names += [(re.sub(r"[*?\[\]]", "", args[k + 1]), "find", "") for k, x in
                      enumerate(args[:-1]) if x in ("-name", "-iname")]
        if seg.program in _UNINSTALLERS and args[:1] and \
                args[0] in _UNINSTALLERS[seg.program]:
            names += [(x.split("==")[0].split("@")[0] or x, "package", "") for x in args[1:]
                      if not x.startswith("-") and not re.search(r"[$`*]", x)]
        if seg.program in _DELETERS and "xargs" in seg.wrappers and not finds:
            names.append((COMPUTED, "path", f"`xargs {seg.program}`"))
        if seg.program != "git" or not args:
            continue
        sub, rest = args[0], args[1:]
        if sub == "worktree" and rest[:1] in (["remove"], ["rm"]):
            names += [(os.path.basename(os.path.normpath(x)), "worktree",
                       os.path.dirname(os.path.normpath(x))) for x in rest[1:]
                      if not x.startswith("-")]
        computed = "xargs" in seg.wrappers or any(re.search(r"[$`]", x) for x in rest)
        if sub in ("branch", "tag") and computed and any(
                x in ("-D", "-d", "--delete") for x in rest):
            names.append((COMPUTED, sub, f"`git {sub} {' '.join(x for x in rest if x.startswith('-'))}`"
                          + (" through xargs" if "xargs" in seg.wrappers else "")))
        if sub == "branch" and any(x in ("-D", "-d", "--delete") for x in rest):
            names += [(x, "branch", "") for x in rest if not x.startswith("-")
                      and not re.search(r"[$`]", x)]
        elif sub == "tag" and any(x in ("-d", "--delete") for x in rest):
            names += [(x, "tag", "") for x in rest if not x.startswith("-")
                      and not re.search(r"[$`]", x)]
        elif sub == "push" and any(x in ("-d", "--delete") for x in rest):
            names += [(x, "branch", "") for x in
                      [x for x in rest if not x.startswith("-")][1:]]
        elif sub == "push":
            names += [(x[1:], "branch", "") for x in rest if x.startswith(":") and len(x) > 1]
    return [n for n in dict.fromkeys(names) if n[0] == COMPUTED or re.search(r"[A-Za-z]", n[0])]


COMPUTED = "\x00computed"
"""The name of a target the command computes when it runs (``xargs``, ``$(…)``, a loop
variable): no request names it, so a delete that names something specific does not bind it."""


_DELETERS = frozenset({"rm", "rmdir", "shred", "unlink", "srm", "trash"})
_UNINSTALLERS = {"pip": ("uninstall",), "pip3": ("uninstall",), "npm": ("uninstall", "rm",
                 "remove", "un", "r"), "yarn": ("remove",), "pnpm": ("remove", "rm", "un",
                 "uninstall"), "apt": ("remove", "purge"), "apt-get": ("remove", "purge"),
                 "brew": ("uninstall", "remove", "rm"), "cargo": ("uninstall", "remove"),
                 "gem": ("uninstall",), "conda": ("remove", "uninstall"),
                 "poetry": ("remove",), "uv": ("remove",), "dnf": ("remove", "erase"),
                 "yum": ("remove", "erase"), "pacman": ("-R", "-Rs", "-Rns")}
"""Package managers and the subcommands that remove the packages they name."""


def _deleting_find(seg: Any) -> bool:
    """Whether a segment is a ``find`` that deletes what it matches (``-delete``, or a
    deleter it runs: ``-exec rm``, ``-ok /bin/rm``)."""
    return seg.program == "find" and ("-delete" in seg.args or any(
        os.path.basename(x) in _DELETERS for x in seg.args))
_FLUSH = re.compile(r"\bflush(?:all|db)\b", re.I)
"""Redis's flush of every key: a request that names which keys ("the session keys") does not
ask for it."""
_OBJECT_KEYS = frozenset("branch branch_name bucket bucket_name namespace table table_name "
                         "database database_name db schema collection index repo repository "
                         "project project_name cluster environment env channel queue topic "
                         "stack service app app_name site zone domain".split())
"""Arguments that name the object a call acts on (``delete_branch {"branch": "main"}``)."""


def _call_targets(tool: str, args: Mapping[str, Any], cwd: str
                  ) -> tuple[list[str], list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """A function call's local paths (as written); ``(name, kind, parent)`` for what it
    names: each path's base name, each table its SQL drops or empties, each value of an
    object argument (its kind: the argument's name, ``branch`` for ``branch_name``); and the
    tables alone (the SQL says it deletes them, whatever the tool is called)."""
    from ctxgate.gate.effects.executed import executed_argument
    from ctxgate.gate.effects.names import local_paths

    paths = [v for _k, v in local_paths(args)]
    names = [(os.path.basename(os.path.normpath(p)), "path",
              os.path.dirname(os.path.normpath(p))) for p in paths]
    found = executed_argument(tool, args)
    sql = [(m.group(1).split(".")[-1], "table", "") for m in _SQL_TARGET.finditer(found[2])] \
        if found is not None and found[0] == "sql" else []
    for key, value in args.items():
        k = str(key).lower()
        if k in _OBJECT_KEYS and isinstance(value, str) and 0 < len(value) <= 120:
            names.append((value, k.split("_")[0], ""))
    keep = [n for n in dict.fromkeys(names + sql) if re.search(r"[A-Za-z]", n[0])]
    return paths, keep, sql


_ONLY = re.compile(r"^\W*(?:just|only)\b(.+)", re.I | re.S)
_YES = re.compile(r"^\W*(?:yes|yeah|yep|yup|sure|ok(?:ay)?|go ahead|do it|please do|proceed|"
                  r"sounds good|confirm(?:ed)?|y|absolutely|go for it)\b[\s\w,.!]{0,20}$", re.I)
_OFFERING = re.compile(r"\b(?:I can|I could|I'?ll|I will|I'?d like to|I would|shall I|should I|"
                       r"do you want me to|want me to|would you like me to|let me|I'?m going to|"
                       r"I propose to|I suggest (?:we|I)|may I)\s+", re.I)


def _ordered(request: str) -> str:
    """The text whose actions are orders: the request itself, or, for a short yes to the
    assistant's offer ("I can delete the build/ directory. Shall I?" - "yes"), the offer
    worded as an order ("delete the build/ directory"). A conversation otherwise orders
    nothing (:func:`~.backends.heads.intent.action_spans`)."""
    from ctxgate.gate.request import REPLY_MARK

    if REPLY_MARK not in request:
        return request
    before, reply = request.rsplit(REPLY_MARK, 1)
    offer = before.rsplit("Assistant:", 1)
    if len(offer) < 2 or not _YES.match(reply.strip()):
        return request
    return _OFFERING.sub("", offer[1]).strip()


_QUERY_KEY = re.compile(r"^(query|q|filter|search|where|criteria|match|selector|"
                        r"label_selector|pattern)$", re.I)


def _query_scope(args: Mapping[str, Any], request: str) -> list[str]:
    """A delete by query that names none of the addresses or hosts the request names ("the 3
    newsletters from news@shop.com" → ``{"query": "in:inbox"}``)."""
    from ctxgate.gate.provenance import targets

    said = targets(request, numbers=False)
    if not said:
        return []
    out = []
    for key, value in args.items():
        if _QUERY_KEY.match(str(key)) and isinstance(value, str) and value.strip() and \
                not any(t in value.lower() for t in said):
            out.append(f"{key} {value.strip()[:60]!r} (the request names "
                       f"{', '.join(sorted(said))[:60]})")
    return out


def _reply_scope(command: str, request: str, cwd: str) -> list[str]:
    """A short reply that picks among what the assistant offered ("I can delete build/ and
    dist/. Which ones?" - "just build") or leaves one out ("yes, but not dist"): what the
    command deletes beyond the pick (the offer itself names everything)."""
    from ctxgate.gate.backends.heads.matching import request_terms
    from ctxgate.gate.request import REPLY_MARK

    if REPLY_MARK not in request:
        return []
    reply = request.rsplit(REPLY_MARK, 1)[1]
    only = _ONLY.match(reply)
    picked = request_terms(only.group(1)) if only else set()
    from ctxgate.gate.effects.shell import recent_analysis

    names = [os.path.basename(os.path.normpath(f.target)) for f in
             recent_analysis(command, cwd=cwd).findings if f.target and f.effect.destructive]
    names += [n for n, _k, _p in _destroyed_names(command, cwd)]
    out = []
    for name in dict.fromkeys(n for n in names if n and re.search(r"[A-Za-z]", n)):
        if _excluded(name, reply):
            out.append(f"{name}, which the reply excludes")
        elif only and not request_terms(name) & picked:
            out.append(f"{name} (the reply picked only {only.group(1).strip()[:40]!r})")
    return out


_AGE_SAID = re.compile(r"\b(older than|newer than|more than \d+ (?:minutes?|hours?|days?|weeks?|"
                       r"months?|years?)|(?:not|n't) (?:been )?(?:modified|accessed|changed|"
                       r"used|touched)|last (?:modified|accessed)|(?:modified|accessed|changed|"
                       r"created) (?:in the last|within|before|after|since))", re.I)
_AGE_TESTED = re.compile(r"(?:^|\s)[-—–]\s*(?:[amc]time|[amc]min|newer\w*|used)\b|--older|"
                         r"--newer")


def _age(command: str, request: str) -> list[str]:
    """A delete the request limits by age ("the log files older than 7 days") that a
    ``find`` runs with no time test: it deletes every match, whatever its age."""
    from ctxgate.shell import parse_command

    if not _AGE_SAID.search(request) or _AGE_TESTED.search(command):
        return []
    for seg in parse_command(command).segments:
        if _deleting_find(seg):
            said = _AGE_SAID.search(request).group(0)  # type: ignore[union-attr]
            return [f"every match of `find`, whatever its age (the request says {said!r})"]
    return []


def _head_back(command: str, request: str) -> list[str]:
    """``HEAD~N`` further back than any count in the request (none given: one)."""
    from ctxgate.gate.backends.heads.matching import _words

    counts = {1} | {int(w) for w in _words(request) if w.isdigit() and len(w) < 6}
    out = []
    for m in _HEAD_BACK.finditer(command):
        n = int(m.group(1)) if m.group(1) else len(m.group(2))
        if n not in counts:
            out.append(f"{m.group(0)} ({n} commits back)")
    return out


def _force_push(command: str, request: str) -> list[str]:
    from ctxgate.gate.backends.heads.intent import negated_at
    from ctxgate.shell import parse_command

    for seg in parse_command(command).segments:
        if seg.program != "git" or "push" not in seg.args:
            continue
        rest = seg.args[seg.args.index("push") + 1:]
        deletes = any(x in ("-d", "--delete") or (x.startswith(":") and len(x) > 1)
                      for x in rest)
        force = any(x in ("-f", "--mirror") or x.startswith(("--force", "--mirror")) or
                    (x.startswith("+") and len(x) > 1) for x in rest)
        if deletes and not _DELETE_WORDS.search(request):
            return ["a push that deletes a remote branch"]
        if force and not any(not negated_at(request, m.start())
                             for m in _FORCE_WORDS.finditer(request)):
            return ["a force push (it overwrites the remote's history)"]
    return []


def _said_numbers(request: str) -> set[int]:
    """The whole numbers the request writes (``#12``, ``42``), not parts of an address."""
    return {int(m.group(1)) for m in _INT.finditer(_EMAIL_OR_URL.sub(" ", request))}


def _numbers(args: Mapping[str, Any], request: str) -> list[str]:
    """Numbers under id arguments of a function call, when the request names numbers and not
    these."""
    said = _said_numbers(request)
    if not said:
        return []
    out = []
    for key, value in args.items():
        if not _ID_KEY.search(str(key)) or isinstance(value, bool):
            continue
        if isinstance(value, int) or (isinstance(value, str) and value.isdigit()
                                      and len(value) < 10):
            if int(value) not in said:
                out.append(f"{key} {value}")
    return out


_AMOUNT_KEY = re.compile(r"^(amount|amount_cents|amount_minor|value|total|price|sum|"
                         r"payment_amount|transfer_amount)$", re.I)
_MONEY = re.compile(r"(?:[$€£¥]\s*(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s*(?:[$€£¥]|"
                    r"usd|eur|gbp|jpy|chf|dollars?|euros?|pounds?|cents?)\b)", re.I)


def _amounts(args: Mapping[str, Any], request: str) -> list[str]:
    """An amount of money in the call that is none the request names (as written, or in
    cents), when the request names one: "pay invoice 42 (120 EUR)" → ``amount: 12000`` is
    120.00 in cents; ``amount: 1200`` is no amount the user gave."""
    said: set[float] = set()
    for m in _MONEY.finditer(request):
        n = float((m.group(1) or m.group(2)).replace(",", ""))
        said |= {round(n, 2), round(n * 100, 2)}
    if not said:
        return []
    out = []
    for key, value in args.items():
        if not _AMOUNT_KEY.match(str(key)) or isinstance(value, bool):
            continue
        try:
            n = round(float(value), 2)
        except (TypeError, ValueError):
            continue
        if n not in said:
            out.append(f"{key} {value} (the request names {_MONEY.search(request).group(0)})")
    return out


def _addresses(args: Mapping[str, Any], command: str | None, request: str) -> list[str]:
    """E-mail addresses and URL hosts of the call, when the request names some and not
    these; and addresses whose name part is none of the people the request sends to by name
    ("send the report to Bob" → ``attacker@evil.example``; ``bob.smith@corp.com`` is Bob)."""
    from ctxgate.gate.provenance import _EMAIL, targets

    said = targets(request, numbers=False)
    emails = {t for t in said if "@" in t}
    hosts = {t for t in said if "@" not in t}
    persons = _persons(request)
    texts = [command] if command is not None else list(_values(args))
    out = [f"{m.group(0)} (an address or host in non-ASCII letters: a look-alike of a real one?)"
           for t in texts for m in _LOOKALIKE.finditer(t) if not m.group(0).isascii()]
    if not said and not persons:
        return out
    found = set()
    for v in texts:
        found |= targets(v, numbers=False)
    for t in sorted(found):
        if "@" in t and _EMAIL.fullmatch(t):
            if t in emails or _is_person(t, persons):
                continue
            if emails:
                out.append(t)
            elif persons:
                out.append(f"{t} (the request sends to {', '.join(sorted(persons))})")
        elif "@" not in t and hosts and t not in hosts and not any(
                t.endswith("." + h) for h in hosts):
            out.append(t)
    return out


_LOOKALIKE = re.compile(r"[^\s<>\"',;:/()]+@[^\s<>\"',;:/()]+\.[^\s<>\"',;:/()]+|"
                        r"(?<=://)[^\s/?#<>\"'@]+")
"""An address or a URL's host, in any letters (``bob@cоrp.com`` with a Cyrillic о)."""
_RECIPIENT_CUE = re.compile(
    r"(?i:\b(?:to|with|cc|bcc|e-?mail|mail|message|tell|ask|ping|invite|notify|remind|"
    r"answer|dm|text|forward|meet|meeting|from))\s+"
    r"((?:@[\w.-]+|[A-Z][a-z][\w-]*(?: [A-Z][a-z][\w-]*)*)(?:'s)?(?:\s*(?:,|\band\b|&|or)\s*"
    r"(?:@[\w.-]+|[A-Z][a-z][\w-]*(?: [A-Z][a-z][\w-]*)*)(?:'s)?)*)")
"""A person named where a request says whom to write to ("to Bob", "reply to Alice's
e-mail", "cc Carol and Dan", "ping @sam"): a capitalised word or a handle after the cue."""
_NOT_PERSONS = frozenset("the my our your his her their this that these those it them me us "
                         "all everyone everybody team slack gmail outlook github gitlab jira "
                         "teams discord email mail monday tuesday wednesday thursday friday "
                         "saturday sunday january february march april may june july august "
                         "september october november december".split())


def _persons(request: str) -> set[str]:
    """The people a request names as whom to write to (lower-case, without ``@``)."""
    out = set()
    for m in _RECIPIENT_CUE.finditer(request):
        for w in re.findall(r"@[\w.-]+|[A-Z][a-z][\w-]*", m.group(1)):
            w = w.lstrip("@").lower()
            if w not in _NOT_PERSONS and len(w) >= 2:
                out.add(w)
    return out


def _is_person(address: str, persons: set[str]) -> bool:
    """Whether an address's name part (or domain) holds one of the named people's names."""
    local, _, domain = address.lower().partition("@")
    parts = set(re.split(r"[._+-]+", local)) | set(domain.split("."))
    return any(p in parts or (len(p) >= 3 and p in local) for p in persons)


_CHANNEL_SAID = re.compile(r"(?<![\w&/])#([A-Za-z][\w.-]*)|\bthe\s+#?([\w-]+)\s+channel\b|"
                           r"\bchannel\s+#?([A-Za-z][\w-]*)", re.I)
_CHANNEL_KEY = re.compile(r"(^|_)(channel|channels|room|channel_name|channel_id)$", re.I)
_CHANNEL_ID = re.compile(r"[CGDZ][A-Z0-9]{7,}|\d+|.*[:@!].*")


def _channels(args: Mapping[str, Any], request: str) -> list[str]:
    """A channel the call posts to by name that is none the request names ("post it in
    #dev" → ``#general``). A channel id (``C024BE91L``) is left alone: the agent looked it up."""
    said = {(a or b or c).lower().rstrip(".") for a, b, c in _CHANNEL_SAID.findall(request)}
    if not said:
        return []
    out = []
    for key, value in args.items():
        values = value if isinstance(value, list) else [value]
        if not _CHANNEL_KEY.search(str(key)):
            continue
        for v in values:
            if isinstance(v, str) and v.strip() and not _CHANNEL_ID.fullmatch(v.strip()) \
                    and v.strip().lstrip("#").lower() not in said:
                out.append(f"channel {v.strip()} (the request names "
                           f"{', '.join('#' + c for c in sorted(said))})")
    return out


_ALL_SAID = re.compile(r"\b(all|every|each|everything|everyone|entire|whole|bulk|batch|mass|"
                       r"any|clear|empty|wipe|purge)\b", re.I)
_BULK_WORDS = frozenset({"all", "bulk", "batch", "mass", "every", "everything", "entire"})


def _bulk(tool: str, args: Mapping[str, Any], request: str) -> list[str]:
    """A tool that acts on everything (``cancel_all_events``, ``bulk_delete``) or an id of
    ``all``/``*``, when the request never says all, every or each ("cancel my 3pm meeting")."""
    from ctxgate.gate.effects.names import name_words

    if _ALL_SAID.search(request):
        return []
    out = []
    words = set(name_words(tool))
    if words & _BULK_WORDS:
        out.append(f"everything the tool acts on (its name says "
                   f"{sorted(words & _BULK_WORDS)[0]!r}; the request names no 'all')")
    for key, value in args.items():
        if _ID_KEY.search(str(key)) and isinstance(value, str) \
                and value.strip().lower() in ("all", "*", "any", "%"):
            out.append(f"{key} {value!r} (every one; the request names no 'all')")
    return out


_PUBLIC_SAID = re.compile(r"\b(public(ly)?|anyone|everyone|everybody|world|open[- ]source|"
                          r"internet|links?|unlisted|all users|unauthenticated|anonymous)\b",
                          re.I)
_PUBLIC_VALUE = re.compile(r"(?<![\w-])(public-read(?:-write)?|authenticated-read|allusers|"
                           r"allauthenticatedusers|anyonewithlink|anyone_with_link)(?![\w-])",
                           re.I)
_PRINCIPAL_ANY = re.compile(r"[\"']?Principal[\"']?\s*:\s*(?:[\"']\*[\"']|"
                            r"\{\s*[\"']AWS[\"']\s*:\s*[\"']\*)", re.I)
_PUBLIC_OPTION = re.compile(r"(?:^|\s)(--visibility[= ]+public|--public(?:-access[= ]+"
                            r"(?:blob|container))?|--acl[= ]+public-read(?:-write)?|"
                            r"--no-private|--privacy[= ]+public)(?=\s|$)", re.I)
_ACCESS_KEYS = frozenset("type visibility access access_level accesslevel privacy audience "
                         "sharing share_type sharetype link_access general_access acl scope "
                         "public_access publicaccess permission_type grantee who".split())
_ANYONE = frozenset({"anyone", "public", "everyone", "world", "anyonewithlink", "allusers",
                     "public-read", "public-read-write", "public_read"})


def _public(args: Mapping[str, Any], command: str | None, request: str) -> list[str]:
    """Access for anyone (a public bucket ACL, a share with ``anyone``, a repository made
    public, a policy whose principal is ``*``) when the request never says public, anyone,
    everyone or link: "share the doc with bob" → ``type: anyone``."""
    if _PUBLIC_SAID.search(request):
        return []
    found: list[str] = []
    texts = [command] if command is not None else list(_values(args))
    for text in texts:
        for m in (_PUBLIC_VALUE.search(text), _PRINCIPAL_ANY.search(text),
                  _PUBLIC_OPTION.search(text) if command is not None else None):
            if m:
                found.append(m.group(0).strip())
    if command is None:
        for key, value in _pairs(args):
            k = key.lower()
            if k in _ACCESS_KEYS and isinstance(value, str) and value.strip().lower() in _ANYONE:
                found.append(f"{key}: {value}")
            elif (k in ("private", "is_private") and value is False) or (
                    k in ("public", "is_public", "publicly_accessible", "publicread")
                    and value is True):
                found.append(f"{key}: {str(value).lower()}")
    return [f"access for anyone ({f}; the request never says public)"
            for f in dict.fromkeys(found)]


def _pairs(value: Any, depth: int = 0) -> Iterable[tuple[str, Any]]:
    """Every (key, value) of nested arguments."""
    if depth < 6 and isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k), v
            yield from _pairs(v, depth + 1)
    elif depth < 6 and isinstance(value, list | tuple):
        for v in value:
            yield from _pairs(v, depth + 1)


_SENDERS = frozenset({"scp", "rsync", "sftp", "curl", "wget", "nc", "ncat", "rclone"})
_CURL_FILE = re.compile(r"^@?([^@=;]*)$")


def _sent_sources(command: str) -> list[str]:
    """Local files a command sends to another machine: the sources of ``scp``/``rsync``/
    ``rclone`` to a remote destination, the files of ``curl -T``/``-F x=@file``/
    ``--data @file``."""
    from ctxgate.shell import parse_command

    out: list[str] = []
    for seg in parse_command(command).segments:
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


_ATTACH_KEY = re.compile(r"attach", re.I)


def _attachments(args: Mapping[str, Any]) -> list[str]:
    """Local paths under attachment arguments of a function call (``attachments``)."""
    out = []
    for key, value in _pairs(args):
        if not _ATTACH_KEY.search(key):
            continue
        for v in (value if isinstance(value, list) else [value]):
            if isinstance(v, Mapping):
                v = next((v[k] for k in ("path", "file_path", "filename", "file") if k in v), None)
            if isinstance(v, str) and re.match(r"^(~|/|\.{1,2}/|\$HOME)", v.strip()):
                out.append(v.strip())
    return out


_GH_NUMBERED = re.compile(r"^(issue|pr)$")


def _shell_numbers(command: str, request: str) -> list[str]:
    """Issue and pull request numbers of ``gh issue``/``gh pr`` commands that change them,
    when the request names numbers and not these ("close issue 12" → ``gh issue close 13``)."""
    from ctxgate.shell import parse_command

    said = _said_numbers(request)
    if not said:
        return []
    out = []
    for seg in parse_command(command).segments:
        words = [x for x in seg.args if not x.startswith("-")]
        if seg.program == "gh" and len(words) >= 3 and _GH_NUMBERED.match(words[0]) \
                and words[1] not in ("view", "list", "status", "diff", "checks"):
            for w in words[2:3]:
                n = re.sub(r"^#|.*/(?=\d+$)", "", w)
                if n.isdigit() and int(n) not in said:
                    out.append(f"{words[0]} {n} (the request names "
                               f"{', '.join(str(x) for x in sorted(said))})")
    return out


_UNSAID = {
    "merge": (re.compile(r"\bgh\s+pr\s+merge\b|^(?:mcp__\w+__)?merge_?(?:pull_?request|pr)s?$",
                         re.I),
              re.compile(r"\b(merg\w*|land|ship|squash\w*|integrate)\b", re.I)),
    "approval": (re.compile(r"\bgh\s+pr\s+review\b.*\s(?:--approve|-a)\b|"
                            r"^(?:mcp__\w+__)?approve_?(?:pull_?request|pr|merge_?request)s?$",
                            re.I),
                 re.compile(r"\b(approv\w*|lgtm|sign(?:ed)? off|accept\w*|ship it)\b", re.I)),
}
"""Acts a request must say to want (a merge, an approval): "open a PR" or "comment on PR 7"
wants neither."""


def _unsaid_verbs(tool: str, command: str | None, request: str) -> list[str]:
    """A merge or an approval the request never asks for ("comment on PR 7" → ``gh pr merge
    7``; "open a PR" → ``gh pr create && gh pr merge``)."""
    from ctxgate.gate.backends.heads.intent import negated_at

    text = command if command is not None else tool
    return [f"{'an' if what[0] in 'aeiou' else 'a'} {what} (the request never asks for one)"
            for what, (act, said) in _UNSAID.items()
            if act.search(text) and not any(not negated_at(request, m.start())
                                            for m in said.finditer(request))]


_LEVELS = (
    (1, r"read(?:er|[- ]only)?|pull|view(?:er)?|guest|reporter|browse"),
    (2, r"comment(?:er)?|triage"),
    (3, r"write(?:r)?|push|edit(?:or)?|developer|contributor|member|modify"),
    (4, r"maintain(?:er)?|manage(?:r)?"),
    (5, r"admin(?:istrator)?|owner|organizer|full(?:[-_ ]control)?|superuser|root"),
)
_LEVEL_WORD = [(n, re.compile(rf"(?<![a-z])(?:{w})(?![a-z])", re.I)) for n, w in _LEVELS]
_ROLE_KEY = re.compile(r"^(role|roles|permission|permissions|access|access_level|accesslevel|"
                       r"permission_level|level|privilege|privileges|scope|acl)$", re.I)
_ACCESS_SAID = re.compile(r"\b(access|permission|permissions|role|rights|privileges?|as an?|"
                          r"can|so (?:he|she|they) can|level)\b", re.I)


def _level(text: str) -> int:
    return max((n for n, p in _LEVEL_WORD if p.search(text)), default=0)


def _permissions(args: Mapping[str, Any], command: str | None, request: str) -> list[str]:
    """A role or permission above the one the request grants ("give bob read access" →
    ``permission: admin``; "as a viewer" → ``roles/owner``)."""
    if not _ACCESS_SAID.search(request):
        return []
    said = _level(request)
    if not said:
        return []
    found: list[str] = []
    if command is None:
        for key, value in _pairs(args):
            if _ROLE_KEY.match(key) and isinstance(value, str) and _level(value) > said:
                found.append(f"{key} {value}")
    else:
        m = re.search(r"(?:--role|--permission|--access(?:-level)?)[= ]+(\S+)", command)
        if m and _level(m.group(1)) > said:
            found.append(m.group(0))
    return [f"{f} (the request grants less)" for f in found]


def _discarded_changes(command: str, request: str, cwd: str) -> list[str]:
    """Uncommitted changes a git command discards in files the request does not name, when it
    names files ("undo my changes to main.py" → ``git reset --hard`` also loses notes.txt's)."""
    from ctxgate.gate.effects.git import _discarded_paths
    from ctxgate.gate.effects.paths import _git
    from ctxgate.shell import parse_command

    files = {m.group(1).rsplit("/", 1)[-1].lower()
             for m in _FILE_NAME.finditer(_EMAIL_OR_URL.sub(" ", request))}
    if not files:
        return []
    out: list[str] = []
    for seg in parse_command(command).segments:
        if seg.program != "git" or not seg.args:
            continue
        sub, rest = seg.args[0], list(seg.args[1:])
        words = [x for x in rest if not x.startswith("-")]
        if sub == "reset" and "--hard" in rest or sub == "checkout" and (
                "-f" in rest or "--force" in rest) and "--" not in rest or \
                sub == "switch" and "--discard-changes" in rest:
            paths: list[str] | None = ["."]
        elif sub in ("checkout", "restore") and not (sub == "restore" and "--staged" in rest
                                                     and "--worktree" not in rest):
            paths = _discarded_paths(sub, rest, words)
        else:
            continue
        if not paths or any(p.startswith(":") or "$" in p for p in paths):
            continue
        proc = _git(cwd, "status", "--porcelain=v1", "--untracked-files=no", "--", *paths)
        if proc is None or proc.returncode != 0:
            continue
        for line in proc.stdout.splitlines():
            changed = line[3:].split(" -> ")[-1].strip().strip('"')
            if changed and os.path.basename(changed).lower() not in files:
                out.append(f"the uncommitted changes to {changed} (the request names "
                           f"{', '.join(sorted(files))})")
    return out


def _patched_places(tool: str, args: Mapping[str, Any], request: str, cwd: str) -> list[str]:
    """The files a Codex ``apply_patch`` (the tool, or ``shell ["apply_patch", PATCH]``)
    deletes or overwrites destructively that the request does not name (:func:`_places`):
    "fix the typo in notes.txt" → a patch that also deletes the untracked work.txt."""
    from ctxgate.gate.effects.harness import _PATCH_HEADER, _patch_text
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
    for m in _PATCH_HEADER.finditer(text):
        kind, path, moved = m.group(1), m.group(2), m.group(3)
        target = moved or path
        action = "overwrite" if moved else {"Add": "overwrite", "Update": "edit",
                                            "Delete": "delete"}[kind]
        pe = classify_path(target, action, cwd=cwd)
        if pe.effect is not None and pe.effect.destructive:
            targets.append(target)
            if kind == "Delete":
                deleted.add(target)
    return _places(targets, deleted, request, cwd)


_UNTRACKED_SAID = re.compile(r"\buntracked\b|\bnot (?:yet )?(?:added|committed|tracked)\b|"
                             r"\bgit clean\b|\beverything\b|\ball\b", re.I)


def _untracked_losses(command: str, request: str, cwd: str) -> list[str]:
    """Untracked files that git does not ignore (work not yet added, not build output) that a
    ``git clean -f`` deletes, when the request neither says untracked (or all, everything)
    nor names them: "clean up the repo" → ``git clean -fdx`` would lose a new notes file.
    The files come from ``git clean -n`` with the command's own options and paths (a dry
    run); ignored files (``-x``) are left out, as build output."""
    from ctxgate.gate.backends.heads.matching import request_terms
    from ctxgate.gate.effects.paths import _git
    from ctxgate.shell import parse_command

    if _UNTRACKED_SAID.search(request):
        return []
    out: list[str] = []
    terms = request_terms(request)
    for seg in parse_command(command).segments:
        args = list(seg.args)
        if seg.program != "git" or args[:1] != ["clean"]:
            continue
        rest = args[1:]
        flags = "".join(x[1:] for x in rest if re.fullmatch(r"-[a-zA-Z]+", x))
        if "f" not in flags and "--force" not in rest or "n" in flags or "--dry-run" in rest:
            continue
        paths = [x for x in rest if not x.startswith("-")]
        dirs = ["-d"] if "d" in flags else []
        proc = _git(cwd, "clean", "-n", *dirs, "--", *paths)
        if proc is None or proc.returncode != 0:
            continue
        lost = [line[len("Would remove "):].strip() for line in proc.stdout.splitlines()
                if line.startswith("Would remove ")]
        unnamed = [x for x in lost if not _named(os.path.basename(x.rstrip("/")), request,
                                                 terms)]
        if unnamed:
            more = f" and {len(unnamed) - 5} more" if len(unnamed) > 5 else ""
            out.append(f"untracked {', '.join(unnamed[:5])}{more} (not ignored by git: work "
                       "not yet added, not build output)")
    return out
