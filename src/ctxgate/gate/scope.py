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
    args = arguments if isinstance(arguments, Mapping) else {}
    command = _shell_command(tool, args)
    out: list[str] = []
    if command is not None:
        out += _age(command, request)
        out += _shell_places(command, request, cwd)
        out += _unbound(_destroyed_names(command, cwd), command, request)
        out += _reply_scope(command, request, cwd)
        out += _head_back(command, request)
        out += _force_push(command, request)
        text = command
    else:
        from ctxgate.gate.backends.local import verb_action

        paths, names, sql = _call_targets(tool, args, cwd)
        deletes = "delete" in verb_action(tool)
        out += _places(paths, set(paths) if deletes else set(), request, cwd)
        text = " ".join(_values(args))
        # what a delete binds to: only a call that deletes (a create_branch is no delete)
        out += _unbound(names if deletes else sql, text, request)
        out += _numbers(args, request)
        out += _amounts(args, request)
    out += _addresses(args, command, request)
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
    out = []
    for target in dict.fromkeys(targets):
        full = os.path.normpath(os.path.join(cwd, os.path.expanduser(target)))
        base = os.path.basename(full)
        if _excluded(base, request):
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
    "path": re.compile(r"[\w-]\.[A-Za-z]{1,8}\b|\w/\w|[\"'`]"),
    "table": re.compile(r"\b(tables?|databases?|db|schemas?|collections?|views?)\b", re.I),
    "branch": re.compile(r"\bbranch(es)?\b", re.I),
    "tag": re.compile(r"\btags?\b", re.I),
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
    for seg in segments:
        args = list(seg.args)
        if seg.program == "find" and (xargs_deletes or _deleting_find(seg)):
            names += [(re.sub(r"[*?\[\]]", "", args[k + 1]), "find", "") for k, x in
                      enumerate(args[:-1]) if x in ("-name", "-iname")]
        if seg.program != "git" or not args:
            continue
        sub, rest = args[0], args[1:]
        if sub == "branch" and any(x in ("-D", "-d", "--delete") for x in rest):
            names += [(x, "branch", "") for x in rest if not x.startswith("-")]
        elif sub == "tag" and any(x in ("-d", "--delete") for x in rest):
            names += [(x, "tag", "") for x in rest if not x.startswith("-")]
        elif sub == "push" and any(x in ("-d", "--delete") for x in rest):
            names += [(x, "branch", "") for x in
                      [x for x in rest if not x.startswith("-")][1:]]
        elif sub == "push":
            names += [(x[1:], "branch", "") for x in rest if x.startswith(":") and len(x) > 1]
    return [n for n in dict.fromkeys(names) if re.search(r"[A-Za-z]", n[0])]


_DELETERS = frozenset({"rm", "rmdir", "shred", "unlink", "srm", "trash"})


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
    from ctxgate.gate.effects.names import _local_paths

    paths = [v for _k, v in _local_paths(args)]
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
    these."""
    from ctxgate.gate.provenance import _EMAIL, targets

    said = targets(request, numbers=False)
    emails = {t for t in said if "@" in t}
    hosts = {t for t in said if "@" not in t}
    if not said:
        return []
    if command is not None:
        found = targets(command, numbers=False)
    else:
        found = set()
        for v in _values(args):
            found |= targets(v, numbers=False)
    out = []
    for t in sorted(found):
        if "@" in t and _EMAIL.fullmatch(t):
            if emails and t not in emails:
                out.append(t)
        elif "@" not in t and hosts and t not in hosts and not any(
                t.endswith("." + h) for h in hosts):
            out.append(t)
    return out
