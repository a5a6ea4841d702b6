"""Request↔call matching for the requested head: does the request name what the call acts on?

A request says *what* to act on ("the compiled python files", "my last three commits", "the
namespace") and *how* ("clean up", "undo", "tear down"); a call carries the same two things
as a program or tool name and argument values (``find . -name '*.pyc' -delete``,
``git reset --hard HEAD~3``). Both sides are reduced to comparable *terms*:

* words are split (camelCase, snake_case, paths, globs), lower-cased, number words turned
  into digits ("three" → ``3``), and stemmed by a short suffix list then cut to five letters
  (``removing`` → ``remov``);
* a small hand-written alias table maps file extensions and jargon to the words people use
  (``pyc`` → python, compiled, bytecode; ``txt`` → text; ``HEAD`` → commit; ``ns`` →
  namespace);
* actions are mapped to :data:`ACTIONS` concepts on each side (request "tear down", "get rid
  of", "clean up" and call ``rm``, ``-delete``, ``kubectl delete`` are all ``delete``).

:class:`CallTerms` holds a call's side, computed once per call (the request side changes per
clause). Pure and deterministic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ctxgate.gate.backends.heads.commands import SHELLS, executed_commands

__all__ = [
    "ACTIONS",
    "ALIASES",
    "AMBIGUOUS_VERBS",
    "ENDING",
    "KIN",
    "HARMFUL_ACTIONS",
    "CallTerms",
    "call_terms",
    "describe",
    "matched",
    "name_action",
    "request_actions",
    "request_terms",
    "verb_action",
]

_NUMBERS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
}
_NUMBERS |= {
    "single": "1",
    "couple": "2",
    "first": "1",
    "second": "2",
    "third": "3",
    "dozen": "12",
    "hundred": "100",
}
ALIASES: dict[str, tuple[str, ...]] = {
    "txt": ("text",),
    "py": ("python",),
    "pyc": ("python", "compiled", "bytecode", "cache"),
    "pyo": ("python", "compiled", "bytecode"),
    "pycache": ("python", "compiled", "cache"),
    "js": ("javascript",),
    "ts": ("typescript",),
    "md": ("markdown",),
    "jpg": ("image", "picture", "photo", "jpeg"),
    "jpeg": ("image", "picture", "photo"),
    "png": ("image", "picture"),
    "gif": ("image", "picture"),
    "svg": ("image",),
    "mp3": ("audio", "music", "song"),
    "wav": ("audio", "sound"),
    "m4a": ("audio", "music"),
    "flac": ("audio", "music"),
    "mp4": ("video", "movie"),
    "mkv": ("video", "movie"),
    "avi": ("video", "movie"),
    "doc": ("document", "word"),
    "docx": ("document", "word"),
    "bak": ("backup",),
    "tmp": ("temporary", "temp"),
    "temp": ("temporary", "tmp"),
    "gz": ("compressed", "gzip", "archive"),
    "tgz": ("compressed", "archive", "tarball"),
    "tar": ("archive", "tarball"),
    "zip": ("compressed", "archive"),
    "bz2": ("compressed", "archive"),
    "xz": ("compressed", "archive"),
    "ns": ("namespace",),
    "svc": ("service",),
    "deploy": ("deployment",),
    "head": ("commit", "last"),
    "origin": ("remote",),
    "pid": ("process",),
    "dir": ("directory", "folder"),
    "directory": ("folder", "dir"),
    "folder": ("directory",),
    "rf": ("recursive", "force"),
    "node": ("nodejs",),
    "modules": ("dependencies",),
    "db": ("database",),
    "database": ("db",),
    "pkg": ("package",),
    "lib": ("library",),
    "conf": ("config", "configuration"),
    "cfg": ("config", "configuration"),
    "env": ("environment",),
    "repo": ("repository",),
    "repository": ("repo",),
    "img": ("image",),
    "msg": ("message",),
    "email": ("mail",),
    "mail": ("email",),
    "pictures": ("photos", "photo", "images", "pics"),
    "photos": ("pictures", "images"),
    "usd": ("dollar",),
    "eur": ("euro",),
    "gbp": ("pound",),
}
"""Call-side or request-side word → the other words that name the same thing."""
PROGRAM_OBJECTS: dict[str, tuple[str, ...]] = {
    "ufw": ("firewall",), "iptables": ("firewall",), "ip6tables": ("firewall",),
    "nft": ("firewall",), "firewall-cmd": ("firewall",), "setenforce": ("selinux",),
    "aa-teardown": ("apparmor",), "aa-disable": ("apparmor",), "aa-complain": ("apparmor",),
    "auditctl": ("audit",), "sysctl": ("kernel",), "modprobe": ("kernel", "module"),
    "rmmod": ("kernel", "module"), "insmod": ("kernel", "module"),
}
"""Programs whose name is the thing they act on, which a request names in words ("turn off
the firewall" for ``ufw disable``, "disable SELinux" for ``setenforce 0``): these words are
the call's objects too."""
ACTIONS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    # concept: (how a request says it, how a call does it: program/tool words and flags)
    "delete": (
        re.compile(
            r"\b(delet|remov|eras|clean|clear|purg|prun|wip(e|es|ing)\b|drop|"
            r"destr|tear|get rid|rid of|trash|discard|uninstal|unlink|empty|"
            r"nuke|scrap|throw away|rm\b|rmdir|strip|eliminat)",
            re.I,
        ),
        re.compile(
            r"^(rm|rmdir|unlink|shred|srm|wipe|delete|del|remove|purge|prune|"
            r"drop|destroy|clean|clear|erase|uninstall|rmi|trash|-delete|"
            r"flushall|flushdb|truncate|teardown|down)$",
            re.I,
        ),
    ),
    "kill": (
        re.compile(
            r"\b(kill|terminat|stop|sigterm|sigkill|signal|shut ?down|halt|"
            r"end the process|abort)",
            re.I,
        ),
        re.compile(
            r"^(kill|pkill|killall|terminate|stop|shutdown|halt|poweroff|"
            r"reboot)$",
            re.I,
        ),
    ),
    "undo": (
        re.compile(
            r"\b(undo|revert|reset|roll ?back|restor|discard|go back|back out|"
            r"throw away|uncommit|abandon)",
            re.I,
        ),
        re.compile(r"^(reset|revert|restore|rollback|checkout|undo|--hard)$", re.I),
    ),
    "move": (
        re.compile(r"\b(mov(e|es|ing)\b|renam|relocat)", re.I),
        re.compile(r"^(mv|move|rename)$", re.I),
    ),
    "copy": (
        re.compile(r"\b(cop(y|ies)|duplicat|back ?up|clone|sync|mirror)", re.I),
        re.compile(r"^(cp|copy|rsync|scp|clone|backup|sync)$", re.I),
    ),
    "perms": (
        re.compile(r"\b(permission|chmod|chown|owner|executabl|access right|mode)", re.I),
        re.compile(r"^(chmod|chown|chgrp|setfacl|chattr)$", re.I),
    ),
    "archive": (
        re.compile(
            r"\b(compress|archiv|zip|tar(ball)?\b|gzip|extract|unpack|"
            r"decompress)",
            re.I,
        ),
        re.compile(r"^(tar|gzip|gunzip|zip|unzip|bzip2|xz|7z|compress)$", re.I),
    ),
    "edit": (
        re.compile(
            r"\b(edit|modif|chang|replac|substitut|updat|fix|rewrit|insert|"
            r"append|prepend|convert)",
            re.I,
        ),
        re.compile(
            r"^(sed|perl|ed|patch|update|edit|modify|replace|set|put|"
            r"append|insert)$",
            re.I,
        ),
    ),
    "send": (
        re.compile(
            r"\b(send|sent|e-?mail|mail|messag|notify|tell|reply|forward|post|"
            r"tweet|sms|share|invite|announce|report)",
            re.I,
        ),
        re.compile(
            r"^(send|email|mail|message|notify|reply|forward|post|tweet|sms|"
            r"share|invite|announce|report)$",
            re.I,
        ),
    ),
    "pay": (
        re.compile(
            r"\b(pay|transfer|wire|refund|charg|purchas|buy|order|book|reserv|"
            r"donat|checkout|bill)",
            re.I,
        ),
        re.compile(
            r"^(pay|payment|transfer|wire|refund|charge|purchase|buy|order|book|"
            r"reserve|donate|checkout)$",
            re.I,
        ),
    ),
    "push": (
        re.compile(r"\b(push|deploy|releas|ship|publish|upload|force.push)", re.I),
        re.compile(r"^(push|deploy|release|publish|upload)$", re.I),
    ),
    "create": (
        re.compile(r"\b(creat|add|make|new|generat|regist|touch|mkdir|init)", re.I),
        re.compile(
            r"^(create|add|make|new|generate|register|touch|mkdir|init|"
            r"insert)$",
            re.I,
        ),
    ),
    "read": (
        re.compile(
            r"\b(get|gets|list|show|display|print|retriev|fetch|find|search|"
            r"look ?up|read|view|describ|check|count|tell me|what|which|how many|"
            r"summari[sz]|explain|report on|return)",
            re.I,
        ),
        re.compile(
            r"^(get|list|show|display|print|retrieve|fetch|find|search|lookup|"
            r"read|view|describe|check|count|query|ls|cat|grep|head|tail|less|"
            r"stat|du|df|ps|wc)$",
            re.I,
        ),
    ),
}
"""Action concepts: a request and a call that share one agree on *how* to act."""
HARMFUL_ACTIONS = frozenset({"delete", "kill", "undo", "send", "pay", "push"})
_SPLIT = re.compile(
    r"[A-Za-z][a-z]*\d[a-z\d]*|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|"
    r"\d+(?:\.\d+)?"
)
_SUFFIXES = (
    "ations",
    "ation",
    "ments",
    "ment",
    "ings",
    "ing",
    "ies",
    "ied",
    "ers",
    "er",
    "ed",
    "es",
    "s",
)
_STOP = frozenset(
    "the a an of to in on for and or is it me my i you your this that with from "
    "by at be as are can please all any some them their these those do does "
    "done so its into via out up down over under not no yes just also only "
    "file files type name exec print null dev usr bin true false".split()
)
_PLACEHOLDER = re.compile(r"^<[^<>]{1,80}>$")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:5]


def _words(text: str) -> list[str]:
    """Lower-case words and numbers of ``text`` (camelCase split; decimals kept whole)."""
    out = []
    for w in _SPLIT.findall(text):
        w = w.lower()
        if "." in w:
            w = w.rstrip("0").rstrip(".")
        out.append(_NUMBERS.get(w, w))
    return out


def _groups(words: Iterable[str]) -> frozenset[frozenset[str]]:
    """One group per distinct word: its stem and its aliases' stems (stop words left out)."""
    out: set[frozenset[str]] = set()
    for w in words:
        if w in _STOP or (len(w) < 2 and not w.isdigit()):
            continue
        out.add(frozenset(v if v[0].isdigit() else _stem(v) for v in (w, *ALIASES.get(w, ()))))
    return frozenset(out)


def request_terms(request: str) -> frozenset[str]:
    """The request's terms (words, numbers, aliases; stemmed), as one flat set."""
    return frozenset(t for g in _groups(_words(request)) for t in g)


def matched(groups: frozenset[frozenset[str]], terms: frozenset[str]) -> int:
    """How many of a call's term groups the request names (any alias counts)."""
    return sum(1 for g in groups if g & terms)


def name_action(tool: str, *, skip: frozenset[str] = frozenset()) -> str:
    """The :data:`ACTIONS` concept of the first word of a tool's name that says one
    (``deletePushDeviceDetails`` → ``delete``, ``ReplicationLinks_Delete`` → ``delete``,
    ``listRoles`` → ``read``); words in ``skip`` are passed over; ``""`` when none does.

    Only the name's operation part is read (:func:`~ctxgate.gate.effects.names.operation_part`):
    in ``SyncGroups_Delete`` and ``GraphQuery_Delete`` the resource's words ("sync", "query")
    are not what the call does."""
    from ctxgate.gate.effects.names import operation_part

    for w in _words(operation_part(tool.rsplit("__", 1)[-1])):
        if w in skip:
            continue
        for k, (_said, done) in ACTIONS.items():
            if done.match(w):
                return k
    return ""


def request_actions(request: str) -> frozenset[str]:
    """The :data:`ACTIONS` concepts the request states."""
    return frozenset(k for k, (said, _done) in ACTIONS.items() if said.search(request))


@dataclass(frozen=True)
class CallTerms:
    """A call's side of the match: what it acts on, how, and its argument names."""

    objects: frozenset[frozenset[str]]
    """Term groups (a word and its aliases) of the argument values (shell: the non-option words of the commands it runs)."""
    actions: frozenset[str]
    """The :data:`ACTIONS` concepts the call performs."""
    arg_names: frozenset[frozenset[str]]
    """Term groups of the argument names (function calls only)."""


def _actions_of(words: Iterable[str]) -> frozenset[str]:
    ws = [w for w in words if w]
    return frozenset(k for k, (_said, done) in ACTIONS.items() if any(done.match(w) for w in ws))


_COUNT = re.compile(r"^[-+]\d+(\.\d+)?[A-Za-z]?$")
"""``-5``, ``+30``, ``+100M``: a count or size given as an option is an object too."""
_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _own_arguments(program: str, argv: tuple[str, ...]) -> tuple[str, ...]:
    """The arguments that are this command's own: a nested command (``$(…)``, backticks,
    ``find -exec …``, a shell's ``-c`` script) is parsed as a command of its own."""
    if program in SHELLS:
        return ()
    out = []
    for a in argv:
        if a in _EXEC:
            break
        if "$(" not in a and "`" not in a:
            out.append(a)
    return tuple(out)


@lru_cache(maxsize=4096)
def _is_action(word: str) -> bool:
    """A word that names a changing action (``rm``, ``delete``): not an object. Read words
    stay (``HEAD`` in ``git reset HEAD~3`` is what is reset). Cached: a long script repeats
    its words."""
    return any(done.match(word) for k, (_said, done) in ACTIONS.items() if k != "read")


def _values(value: Any, depth: int = 0) -> list[str]:
    if isinstance(value, str):
        return [] if _PLACEHOLDER.match(value.strip()) else [value[:400]]
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return [repr(value)]
    if depth < 3 and isinstance(value, Mapping):
        return [v for x in value.values() for v in _values(x, depth + 1)]
    if depth < 3 and isinstance(value, list | tuple):
        return [v for x in value[:20] for v in _values(x, depth + 1)]
    return []


def call_terms(tool: str, arguments: Any, command: str | None) -> CallTerms:
    """The :class:`CallTerms` of a call; ``command`` is its shell command, if it is one."""
    if command is not None:
        objects: list[str] = []
        verbs: list[str] = []
        for c in executed_commands(command):
            verbs.append(c.program)
            objects += PROGRAM_OBJECTS.get(c.program, ())
            argv = _own_arguments(c.program, c.argv)
            plain = [a for a in argv if not a.startswith("-")]
            verbs += plain[:2] + [a for a in argv if a in ("-delete", "--hard")]
            for a in argv:
                if not a.startswith("-") or _COUNT.match(a):
                    objects += (w for w in _words(a) if not _is_action(w))
        return CallTerms(
            objects=_groups(objects), actions=_actions_of(verbs), arg_names=frozenset()
        )
    values = _values(arguments) if isinstance(arguments, Mapping) else []
    names = [str(k) for k in arguments] if isinstance(arguments, Mapping) else []
    tool_words = _words(tool)
    return CallTerms(
        objects=_groups(w for v in values for w in _words(v)),
        actions=_actions_of(tool_words),
        arg_names=_groups(w for n in names for w in _words(n)),
    )


def describe(terms: CallTerms) -> str:
    """The terms as one line of JSON (for explanations and tests)."""
    return json.dumps(
        {
            "objects": sorted(sorted(g) for g in terms.objects),
            "actions": sorted(terms.actions),
            "arg_names": sorted(sorted(g) for g in terms.arg_names),
        }
    )


_VERB_ACTIONS = {
    **dict.fromkeys(("send", "email", "mail", "message", "reply", "forward", "notify",
                     "invite", "share", "comment", "tweet", "sms", "dm", "broadcast",
                     "announce"), "send"),
    **dict.fromkeys(("pay", "transfer", "refund", "charge", "purchase", "buy", "order",
                     "book", "withdraw", "donate", "checkout", "wire", "payout"), "pay"),
    **dict.fromkeys(("deploy", "publish", "release", "push", "upload", "merge", "ship"),
                    "push"),
}


def verb_action(tool: str) -> frozenset[str]:
    """The harmful :data:`ACTIONS` concept of a tool name's operation verb
    (:func:`ctxgate.gate.effects.names.operation_verb`): a delete verb (``cancel_order``,
    ``revoke_token``) is ``delete``; sending, paying and publishing verbs map to theirs;
    ``frozenset()`` otherwise. For names whose first action word the table has no verb for
    (``cancel_order`` reads "order" as paying)."""
    from ctxgate.gate.effects.annotations import split_mcp_name
    from ctxgate.gate.effects.names import DELETE_VERBS, operation_verb

    split = split_mcp_name(tool)
    found = operation_verb(split[1] if split else tool)
    if found is None or found[0] in AMBIGUOUS_VERBS:
        return frozenset()
    verb = found[0]
    if verb in DELETE_VERBS:
        return frozenset({"delete"})
    return frozenset({_VERB_ACTIONS[verb]}) if verb in _VERB_ACTIONS else frozenset()


ENDING = re.compile(r"\b(cancel|revok|unsubscrib|deactivat|disabl|detach|de-?regist|"
                     r"unregist|unassign|unshar|unfollow|unpublish|dismiss|expir|close)", re.I)
"""Requests that end something, for the contradiction check only: a delete or a stop is how a
call does it ("Cancel an order" → ``delete-orders-id``). Kept out of the matching's action
table, whose words are features the requested head was fitted on."""


KIN: dict[str, frozenset[str]] = {
    "send": frozenset({"send", "push"}), "push": frozenset({"send", "push"}),
    "delete": frozenset({"delete", "undo"}), "undo": frozenset({"delete", "undo"}),
}
"""Harmful actions a request may state in each other's words, for the contradiction and
object checks: "upload" (push) for a ``curl -X POST`` (send), "remove my last commit" (delete)
for a ``git reset`` (undo)."""


AMBIGUOUS_VERBS = frozenset({"post"})
"""Name verbs that do not say a harmful action: ``post`` is as often the HTTP method of a
generated name (``post_rest_lookups``) as a message sent."""
