"""Whom a call writes to and who may read: addresses and hosts, people and channels named by
name, look-alike letters, access for anyone, a role above the one granted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ctxgate.gate.scope.words import _pairs, _values


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


_LOWER_NAME = re.compile(
    r"\b(?:to|cc|bcc|e-?mail|mail|message|tell|ping|forward|dm|text|remind|notify)\s+"
    r"([a-z]{3,12})(?:'s)?(?=\s*(?:$|[,.!?;:]|\b(?:about|that|saying|asking|with|and|in|at|"
    r"from|on|by|too|please|now|today|tomorrow)\b))")
"""A person named in lower case where a request says whom to write to, the clause ending
after the name ("send the report to bob", "tell dana that …", "cc sam and …")."""
_NOT_NAMES = _NOT_PERSONS | frozenset(
    "him her them you myself yourself everyone everybody anyone someone nobody team boss "
    "manager client clients customer customers user users owner owners admin admins support "
    "sales finance legal security hr ops devops dev devs staff members people group list "
    "channel chat thread inbox repo remote origin upstream server prod production staging "
    "main master branch cloud disk file files folder printer archive backup trash home work "
    "office family friends mom dad wife husband partner colleague colleagues coworker "
    "coworkers lead leads reviewer reviewers author authors maintainers vendor vendors "
    "partners investors board press root json yaml csv xml html pdf true false null none "
    "stdout stderr console screen terminal log logs".split())
"""Lower-case words after such a cue that are roles, places, formats or pronouns, not names."""
_SENDS = re.compile(r"\b(?:send|sent|e-?mail|mail|forward|share|reply|message|invite|cc|bcc|"
                    r"tell|ping|notify|remind|dm|text)\b", re.I)
"""A request that writes to someone: only there is a lower-case word after "to" a name."""


def _persons(request: str) -> set[str]:
    """The people a request names as whom to write to (lower-case, without ``@``): a
    capitalised name or a handle after a cue, or a lower-case one that ends the clause."""
    out = set()
    for m in _RECIPIENT_CUE.finditer(request):
        for w in re.findall(r"@[\w.-]+|[A-Z][a-z][\w-]*", m.group(1)):
            w = w.lstrip("@").lower()
            if w not in _NOT_PERSONS and len(w) >= 2:
                out.add(w)
    for m in _LOWER_NAME.finditer(request) if _SENDS.search(request) else ():
        if m.group(1) not in _NOT_NAMES:
            out.add(m.group(1))
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
