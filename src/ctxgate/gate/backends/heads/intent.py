"""Whether a request *orders* the action it names, or only forbids, asks about or describes it.

The requested head matches a request to a call by the words they share, so "look at the
build directory but do not delete it", "what does `rm -rf build` do?", "write a script that
deletes old logs" and "I accidentally deleted my notes" all share "delete" and "build" with
``rm -rf build`` and scored it requested (0.91-1.00). :func:`action_stance` reads each place
where the request names the call's harmful action (the :data:`~.matching.ACTIONS` words:
"delete", "rm", "drop", "reset", "push" …) and classes it:

* **negated** — a negation shortly before it in the same clause ("do not delete", "don't
  run rm", "never force push", "without removing"; "don't forget to delete" is an order);
* **a mention** — a noun ("my latest email", "the deployment plan"), a question about it ("what does … do", "how do I …", "should I …?", "is
  it safe to …", "explain …"; "can you …" and "please …" are orders), a description ("a
  script *that* deletes", "the tests delete …", "whether we should …", text after "to say:"),
  or a past event ("I accidentally deleted …");
* **an order** — anything else.

The stance is ``"forbidden"`` when every place is negated, ``"mentioned"`` when none orders
it (and one is not negated), else ``None`` (ordered, or not named at all: the head decides).
A short reply to the assistant's question (:func:`ctxgate.gate.request.extract_user_request`
rule 3) takes its stance from the reply: a "no"/"don't"/"wait" forbids what the question
named; anything else leaves it to the head. Pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from ctxgate.gate.request import REPLY_MARK

__all__ = ["Stance", "action_spans", "action_stance", "negated_at", "other_actions"]

Stance = Literal["forbidden", "mentioned"]

_CLAUSES = re.compile(r"(?<=[.!?;:])\s+|\n+|\s+(?:—|–|--|-)\s+|,\s*(?:but|so|and then|then|"
                      r"however|otherwise|instead)?\s*|\s+but\s+")
_NEGATION = re.compile(
    r"\b(not|never|no|don'?t|doesn'?t|didn'?t|won'?t|wouldn'?t|shouldn'?t|mustn'?t|can'?t|"
    r"cannot|without|avoid(?:ing)?|stop|refrain from|instead of|rather than|nor|"
    # before the verb in other languages: de kein/ohne zu/niemals, fr ne/sans/jamais,
    # es/pt/it no/não/non/sin/sem/senza/nunca/mai, nl geen/zonder/nooit
    r"keine?[nmrs]?|ohne(?: zu)?|niemals|nie|ne(?!-)|n'|sans|jamais|não|nao|non(?!-)|sin|sem|"
    r"senza|nunca|"
    r"mai|geen|zonder(?: te)?|nooit|nicht)"
    r"((?:\W+\w+){0,3})\W*$", re.I)
_NEGATION_AFTER = re.compile(r"^\w*(?:\W+\w+){0,3}?\W+(nicht|niet|pas)\b", re.I)
"""A negation after the verb (German "lösche es nicht", "pushe nicht", Dutch "verwijder hem
niet", French "ne le supprime pas"): the local model reads English, so a foreign request's
verb that matches an English one ("pushe") must not read as an order when negated."""
_NOT_A_NEGATION = re.compile(r"^\W*(?:\w+\W+)*?(forget|fail|hesitate)\b|^\W*(need|problem|"
                             r"worries|wait|matter|questions?|longer)\b", re.I)
"""After a negator: "don't forget to delete" and "no need to ask, delete" are orders."""
_DESCRIBED = re.compile(
    r"(\b(that|which|whether|to say|says|saying|said)|\b(a|an|the|this|my|our|your)\s+"
    r"(script|function|target|tests?|code|docs?|documentation|readme|example|snippet|"
    r"alias|hook|job|workflow|cron|comment|message|pr|pull request))((?:\W+\w+){0,2})\W*$",
    re.I)
_QUESTION = re.compile(
    r"^\W*(what|how|why|when|where|which|who|is|are|was|were|should|shall|would it|could it|"
    r"will it|explain|describe|tell me|wonder|(?:do|does|did) (?:i|we|you|it|they|this|that))"
    r"\b", re.I)
_ASKING = re.compile(r"^\W*(can|could|would|will) you\b|^\W*please\b", re.I)
_PAST_SUBJECT = re.compile(r"\b(i|we|you|he|she|they|someone|somebody|it|accidentally|"
                           r"already|was|were|been|got|have|has|had)\W+(?:\w+\W+){0,2}$", re.I)
_QUOTING = re.compile(r"\b(say|says|saying|write|writes|document|mention|note|read|reads)\b"
                      r"[^.!?\n]*:\s*", re.I)
_REFUSAL = re.compile(r"^\W*(no|nope|nah|don'?t|do not|not yet|not now|wait|stop|cancel|"
                      r"never|hold on|hold off)\b", re.I)


def action_stance(request: str, actions: Iterable[str]) -> Stance | None:
    """How ``request`` names the :data:`~.matching.ACTIONS` concepts ``actions`` (module
    docstring); ``None`` when it orders one of them or names none."""
    from ctxgate.gate.backends.heads.matching import ACTIONS

    patterns = [ACTIONS[a][0] for a in actions if a in ACTIONS]
    if not patterns or not request.strip():
        return None
    if REPLY_MARK in request:  # a short reply to the assistant's question
        question, reply = request.rsplit(REPLY_MARK, 1)
        named = any(p.search(question) for p in patterns)
        return "forbidden" if named and _REFUSAL.match(reply) else None
    quoted_from = _QUOTING.search(request)
    seen = []
    for clause in _clauses(request):
        offset, text = clause
        for p in patterns:
            for m in p.finditer(text):
                if quoted_from is not None and offset + m.start() >= quoted_from.end():
                    seen.append("mention")  # the text a doc or a message is to say
                    continue
                seen.append(_occurrence(text, m.start()))
    seen = [s for s in seen if s != "adjective"]
    if not seen or "order" in seen:
        return None
    if all(s == "negated" for s in seen if s != "noun") and "negated" in seen:
        return "forbidden"
    return "mentioned"


def _clauses(request: str) -> list[tuple[int, str]]:
    out, pos = [], 0
    for m in _CLAUSES.finditer(request):
        out.append((pos, request[pos:m.start()]))
        pos = m.end()
    out.append((pos, request[pos:]))
    return [(o, t) for o, t in out if t.strip()]


_QUOTED = re.compile(r"([\"'`]).*?\1")


_NOUNS = re.compile(r"^(e-?mails?|mails?|messages?|posts?|reports?|tweets?|sms|repl(y|ies)|"
                    r"orders?|bookings?|reservations?|payments?|transfers?|refunds?|bills?|"
                    r"deployments?|releases?|pushes|resets?|deletions?|removals?|cleanups?|"
                    r"invoices?|notifications?|shares?)$", re.I)
_DETERMINER = re.compile(r"\b(a|an|the|my|your|his|her|our|their|its|this|that|these|those|"
                         r"latest|last|new|next|first|recent|unread|old|each|every|any|some|"
                         r"\w+'s)\W+$", re.I)


def _occurrence(clause: str, at: int) -> str:
    word = re.match(r"\w+", clause[at:])
    if word and word.group(0).lower().endswith(("able", "ible")):
        return "adjective"  # "removable media": no action at all
    if word and _NOUNS.match(word.group(0)) and _DETERMINER.search(clause[:at]):
        return "noun"  # "my latest email", "the deployment plan": a thing, not an action
    left = _QUOTED.sub(" Q ", clause[:at])  # a quoted "not" is a name, not a negation
    if _negated(left, clause[at:]):
        return "negated"
    if _DESCRIBED.search(left):
        return "mention"
    if word and word.group(0).lower().endswith("ed") and _PAST_SUBJECT.search(left):
        return "mention"
    if _QUESTION.match(clause) and not _ASKING.match(clause):
        return "mention"
    return "order"


def _negated(left: str, rest: str) -> bool:
    """Whether a negation ends ``left`` (the clause up to a word) and is not one of the
    phrases that order after all (``rest``: the clause from the word on)."""
    neg = _NEGATION.search(left)
    if neg and not _NOT_A_NEGATION.match(neg.group(2) + " " + rest) and not (
            neg.group(1).lower() == "non" and re.match(r"empty\b", rest, re.I)):
        return True  # ("non empty directories": an English adjective, not Italian's "non")
    return bool(_NEGATION_AFTER.match(rest))


def negated_at(text: str, at: int) -> bool:
    """Whether the word at ``at`` in ``text`` is negated within its clause ("never force
    push": the "force")."""
    start = max((offset for offset, _clause in _clauses(text) if offset <= at), default=0)
    return _negated(text[start:at], text[at:])


_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_READING = re.compile(r"\b(show|display|print|read|view|tell|explain|summari[sz]e|keep|"
                      r"leave|open|inspect|back up|copy|rename|move|compress)\b",
                      re.I)
"""Actions that are not deletes, for where a delete's span ends ("find", "list", "search"
and "check" are left out: "find the .bak files and delete them" acts on one object)."""


def action_spans(request: str, patterns: list[re.Pattern[str]],
                 stops: list[re.Pattern[str]]) -> list[str]:
    """The text each *ordered* action of ``patterns`` covers in ``request``: from its word to
    the next word of a ``stops`` action in the same sentence ("delete the cache" in "delete
    the cache and show me the logs"; "remove files 'a', 'b', 'c'" whole). A word inside the
    quoted part after "to say:" or similar orders nothing."""
    if REPLY_MARK in request:
        return []
    quoted_from = _QUOTING.search(request)
    out = []
    pos = 0
    for sentence in _SENTENCES.split(request):
        base = request.find(sentence, pos)
        pos = max(pos, base)
        fine = _clauses(sentence)
        masked = _QUOTED.sub(lambda q: " " * len(q.group(0)), sentence)  # names
        for p in patterns:
            for m in p.finditer(sentence):
                if quoted_from is not None and base + m.start() >= quoted_from.end():
                    continue
                if re.match(r"\w+ed\b", sentence[m.start():], re.I):
                    continue  # "tools generated files": a participle orders nothing
                off, clause = max(((o, c) for o, c in fine if o <= m.start()),
                                  default=(0, sentence))
                if _occurrence(clause, m.start() - off) != "order":
                    continue
                end = m.start() + len(re.match(r"\w*", sentence[m.start():]).group(0))
                cut = [n.start() for q in stops for n in q.finditer(masked, end)
                       if not any(o.match(masked, n.start()) for o in patterns)]
                out.append(sentence[m.start():min(cut, default=len(sentence))])
    return out


def other_actions(action: str) -> list[re.Pattern[str]]:
    """How a request says every action but ``action`` (the table's and :data:`_READING`)."""
    from ctxgate.gate.backends.heads.matching import ACTIONS

    return [said for k, (said, _done) in ACTIONS.items()
            if k not in (action, "read", "copy", "archive")] + [_READING]
