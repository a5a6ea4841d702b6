"""What a delete binds to: the things the request's own deletes name (and spare), the names a
command destroys or computes when it runs, a short reply's pick or a yes to the assistant's
offer, a delete by query, and a delete's age limit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ctxgate.gate.scope.words import _excluded, _said_numbers, _segments

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

    a = recent_analysis(command, cwd=cwd)
    names = [(os.path.basename(os.path.normpath(f.target)), "path",
              os.path.dirname(os.path.normpath(f.target))) for f in a.findings
             if f.target and f.effect.destructive and f.action == "delete"
             and not f.evidence.startswith(("`find", "`rsync"))  # a place, not what goes
             and not re.search(r"[$`*?\[]", f.target)]
    names += [(m.group(1).split(".")[-1], "table", "") for m in _SQL_TARGET.finditer(command)]
    names += [(m.group(0).lower(), "key", "") for m in _FLUSH.finditer(command)]
    segments = _segments(command)
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

    if not _AGE_SAID.search(request) or _AGE_TESTED.search(command):
        return []
    for seg in _segments(command):
        if _deleting_find(seg):
            said = _AGE_SAID.search(request).group(0)  # type: ignore[union-attr]
            return [f"every match of `find`, whatever its age (the request says {said!r})"]
    return []
