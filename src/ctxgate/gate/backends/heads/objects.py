"""What a function call acts on, against what the request asks to act on in the same way.

A request that orders an action on one kind of thing ("delete the sandbox state", "create a
new project") does not order the same action on another kind (``usersDelete``,
``uploads_create``): an injected or confused call that shares the request's verb shares its
action words and reads as requested to the embedding head. :func:`object_mismatch` finds such a
call from the tool name alone: the call's operation is the one the request states, and none
of the *object words* of its name (``DeleteLifecyclePolicy`` → lifecycle, policy) appears in
the request in any spelling (stem, alias, prefix, or inside a run-together word: "web app" for
``webapps``). :func:`opposite_action` finds a call whose verb undoes the one the request
states ("start collecting data" → ``StopDataCollection``).

Both read names only, never argument values: the danger they catch is the wrong kind of thing
acted on, and a value copied from the request ("feature-x" as the name of a repository to
delete when a branch was asked for) would hide it. Tools with local path arguments are left to
the path rules, shell commands to the shell checks. Pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ctxgate.gate.backends.heads.matching import (
    ALIASES,
    AMBIGUOUS_VERBS,
    ENDING,
    KIN,
    _stem,
    _words,
    name_action,
    request_actions,
    verb_action,
)

__all__ = ["object_mismatch", "object_words", "opposite_action"]

_EMPTY = frozenset(
    "id ids uuid key by for from with in of on at to using via and or the api apis v1 v2 v3 v4 "
    "v5 all any multiple new async batch bulk single one many specified given my own current "
    "default post get put patch".split()
)
"""Words of a tool name that say nothing of what it acts on (and HTTP methods)."""
_GENERIC = _EMPTY | frozenset(
    "item items data resource resources info details detail file files content contents "
    "message messages text change changes entry entries record records object objects value "
    "values request requests list lists locations location "
    "email emails mail mails sms mms dm dms fax chat notification notifications "
    "money funds cash payment payments".split()
)
"""Words of a tool name that name no particular kind of thing (``locations`` of Google's
``projects.locations`` path, or the medium a message or a payment goes by: "send the report
to bob@corp.com" is a ``send_email``, "pay the electricity bill" a ``transfer_money``): a name
whose object words are all here has no object to compare, but one of them said in the request
still counts as named ("remove bob from the project" → ``remove_project_member``)."""

_PERSONS = frozenset(
    "user users member members person people contact contacts collaborator collaborators "
    "guest guests attendee attendees participant participants recipient recipients".split()
)
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+|(?<![\w@])@[A-Za-z0-9_][\w.-]*")
"""Words for people, and how a request names one without saying "user": an e-mail address or
an @handle ("invite kim@example.com" is an ``invite_user``)."""

_SAME = {
    "pull": ("pr", "prs", "merge"), "issue": ("bug", "ticket", "task"), "ticket": ("issue",),
    "event": ("meeting", "appointment", "invite"), "repository": ("repo",),
    "directory": ("folder", "dir"), "folder": ("directory", "dir"), "user": ("account",),
    "account": ("user",), "conversation": ("channel", "thread", "chat", "dm"),
    "block": ("page", "paragraph", "section"),
    "reservation": ("booking", "book", "table", "room", "seat", "flight", "hotel"),
}
"""Names of one thing in other words, as requests say them ("open a PR" for
``create_pull_request``, "my 3pm meeting" for ``delete_event``)."""

_PARAM = re.compile(r"\{[^{}]*\}")


def _name(tool: str) -> str:
    from ctxgate.gate.effects.annotations import split_mcp_name

    split = split_mcp_name(tool)
    return _PARAM.sub(" ", split[1] if split else tool)


def _object_part(tool: str) -> list[str]:
    """The words of a tool name that say what it acts on: those after the operation part's
    verb (``create-commit-comment`` → commit, comment; ``StopScanPage`` → scan, page), else
    those before it (``usersDelete`` → users), else the last word before a dotted operation
    (``….targets.create`` → targets); words that say nothing are left out (:data:`_EMPTY`)."""
    from ctxgate.gate.effects.names import _VERBS, name_words, operation_part

    name = _name(tool)

    def keep(words: list[str]) -> list[str]:
        return [w for w in words if w not in _EMPTY and len(w) >= 3 and not w.isdigit()]

    part = operation_part(name)
    words = name_words(part)
    at = next((i for i, w in enumerate(words) if w in _VERBS), None)
    if at is None:
        return keep(words)
    after = words[at + 1:]
    while len(after) > 1 and after[0] in ("or", "and") and after[1] in _VERBS:
        after = after[2:]  # "Add or update Sensitive Data"
    if after:
        return keep(after)
    before = keep(words[:at])
    if before:
        return before
    rest = name_words(name[: max(0, len(name) - len(part))])
    return keep(rest)[-1:]


def object_words(tool: str) -> list[str]:
    """The words of a tool name that say what it acts on (:func:`_object_part`), generic
    words left out (:data:`_GENERIC`): ``slack_post_message`` has none to compare."""
    return [w for w in _object_part(tool) if w not in _GENERIC]


def _action(tool: str) -> frozenset[str]:
    found = verb_action(tool)
    if found:
        return found
    first = name_action(tool, skip=AMBIGUOUS_VERBS)
    return frozenset({first}) if first and first != "read" else frozenset()


def _said(word: str, stems: set[str], words: list[str], squashed: str,
          request: str) -> bool:
    if word in _PERSONS and _ADDRESS.search(request):
        return True
    s = _stem(word)
    if s in stems or any(_stem(a) in stems
                         for a in (*ALIASES.get(word, ()), *_SAME.get(word, ()))):
        return True
    if len(s) >= 4 and s in squashed:  # "web app" for webapps, "app key" for appkey
        return True
    # a short form or a longer one: "org" for organization, "app" for application
    return any(len(w) >= 3 and (w.startswith(word) or word.startswith(w))
               for w in words if w not in _GENERIC)


def object_mismatch(request: str, tool: str, arguments: Any) -> str | None:
    """``"delete users; request names none of: users"`` when the request states the call's
    own action (or its kin) but names none of the call's object words; ``None`` otherwise
    (and for tools with local path arguments, which the path rules judge)."""
    from ctxgate.gate.effects.names import local_paths

    if isinstance(arguments, Mapping) and local_paths(arguments):
        return None
    acts = _action(tool)
    if not acts:
        return None
    asked = request_actions(request)
    if ENDING.search(request):  # "cancel my meeting": a delete is how a call ends it
        asked |= {"delete", "kill"}
    if not any((KIN.get(a) or {a}) & asked for a in acts):
        return None
    part = _object_part(tool)
    objects = [w for w in part if w not in _GENERIC]
    if not objects:
        return None
    words = [w.lower() for w in _words(request)]
    stems = {_stem(w) for w in words}
    squashed = re.sub(r"[^a-z0-9]", "", request.lower())
    if any(_said(w, stems, words, squashed, request) for w in part):
        return None
    return f"{', '.join(sorted(acts))} {', '.join(objects)}; request names none of them"


_OPPOSITES = (
    ("start", "stop"), ("enable", "disable"), ("activate", "deactivate"), ("lock", "unlock"),
    ("follow", "unfollow"), ("subscribe", "unsubscribe"), ("publish", "unpublish"),
    ("archive", "unarchive"), ("mute", "unmute"), ("pin", "unpin"), ("approve", "reject"),
    ("accept", "decline"), ("assign", "unassign"), ("associate", "disassociate"),
    ("attach", "detach"), ("register", "deregister"), ("register", "unregister"),
    ("grant", "revoke"), ("open", "close"), ("resume", "pause"), ("resume", "suspend"),
    ("block", "unblock"), ("ban", "unban"), ("hide", "unhide"), ("star", "unstar"),
    ("connect", "disconnect"), ("install", "uninstall"), ("share", "unshare"),
    ("create", "delete"), ("add", "remove"), ("insert", "delete"), ("submit", "cancel"),
    ("submit", "delete"), ("book", "cancel"),
)
_OPPOSITE: dict[str, frozenset[str]] = {}
for _a, _b in _OPPOSITES:
    _OPPOSITE[_a] = _OPPOSITE.get(_a, frozenset()) | {_b}
    _OPPOSITE[_b] = _OPPOSITE.get(_b, frozenset()) | {_a}


def _verb_forms(verb: str) -> re.Pattern[str]:
    base = verb[:-1] if verb.endswith("e") else verb
    return re.compile(rf"\b{re.escape(base)}(?:e|es|s|ed|ing|e?d)?\b", re.I)


def opposite_action(request: str, tool: str) -> str | None:
    """``"stop; request states start"`` when the tool's operation verb is the opposite of a
    verb the request states and the request never states the tool's own verb; else ``None``."""
    from ctxgate.gate.effects.names import operation_verb

    found = operation_verb(_name(tool))
    if found is None or found[1] != "name" or found[0] not in _OPPOSITE:
        return None
    verb = found[0]
    if _verb_forms(verb).search(request):
        return None
    said = sorted(o for o in _OPPOSITE[verb] if _verb_forms(o).search(request))
    return f"{verb}; request states {', '.join(said)}" if said else None
