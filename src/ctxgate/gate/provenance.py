"""Where a call's targets came from: values that only tool output named, never the user.

A prompt injection reaches the agent through tool output (a web page, an e-mail, a file, an
issue comment) and asks it to act on something the attacker chose: send the invoices to
``billing@evil.example``, pay ``GB33BUKB20201555555555``, post the keys to
``https://collect.evil.example``. The user never typed that address, account or host; only a
tool result did. This module finds such values in a call's arguments:

* **targets** are values that pick a recipient or a place: e-mail addresses, URL hosts,
  IBAN-like account numbers, Ethereum-style wallets, and digit runs of 8 or more under an
  argument named for a destination (:data:`DESTINATION_KEY`: account, card, phone numbers,
  written with or without spaces and dashes) — never in what a call says
  (:data:`CONTENT_KEYS`, quoted shell words, here-document bodies written to a file);
* a target is **foreign** when the text of some tool result in the conversation holds it
  and no user-authored text does (the user's messages and the request the gate judges
  against; there a bare host, ``collect.example.com`` without a scheme, or a number written
  with spaces counts too). A target found in neither is not judged here (the decision model sees it);
* assistant text does not vouch for a value: the assistant is the party the injection
  steers.

The gate applies it only to calls that look destructive or have an external effect and
that the model would otherwise allow (see ``GatePolicy.provenance``). Pure and deterministic;
no network, no model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["CONTENT_KEYS", "DESTINATION_KEY", "MAX_SCANNED_CHARS", "MAX_TOOL_TEXT_CHARS",
           "foreign_targets", "targets", "tool_output_text", "user_text"]

MAX_SCANNED_CHARS = 2_000_000
"""Most code points of tool output (and of user text) scanned per decision (the newest kept)."""

MAX_TOOL_TEXT_CHARS = 200_000
"""Most code points of one tool result an adapter passes on for this check (its end kept:
tool output that steers an agent is read last)."""

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}")
_URL_HOST = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}://(?:[^\s/@\"'<>]*@)?([A-Za-z0-9.-]{1,253})")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_WALLET = re.compile(r"\b0x[0-9a-fA-F]{40}\b")
_DIGITS = re.compile(r"(?<![\w.:/-])\+?\d(?:[ -]?\d){7,}(?![\w:/-]|\.\d)")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?!\d)")
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "::1"})


def _norm_digits(text: str) -> str:
    return re.sub(r"[^\d]", "", text)


def targets(text: str, *, numbers: bool = True) -> set[str]:
    """The target values in ``text``, normalised (lower-case addresses and hosts, IBANs and
    digit runs without spaces or dashes); ``numbers=False`` leaves digit runs out."""
    out: set[str] = set()
    for m in _EMAIL.finditer(text):
        out.add(m.group(0).lower())
    for m in _URL_HOST.finditer(text):
        host = m.group(1).lower().rstrip(".")
        if host and host not in _LOCAL_HOSTS and "." in host:
            out.add(host)
    ibans = list(_IBAN.finditer(text))
    for m in ibans:
        out.add(m.group(0).replace(" ", ""))
    for m in reversed(ibans):  # its digits are not a number of their own
        text = text[:m.start()] + " " + text[m.end():]
    for m in _WALLET.finditer(text):
        out.add(m.group(0).lower())
    for m in _DIGITS.finditer(text) if numbers else ():
        if not _DATE.match(m.group(0)):
            out.add(_norm_digits(m.group(0)))
    return out


CONTENT_KEYS = frozenset(
    "body text content message messages description title summary comment comments note "
    "notes subject markdown html prompt caption bio readme changelog".split())
"""Argument names whose value is what a call *says*, not where it goes: a link in a pull
request's body or an address quoted in an e-mail's text is no target."""

_SHELL_KEYS = ("command", "cmd", "script")


DESTINATION_KEY = re.compile(
    r"(account|iban|bic|swift|routing|sort_?code|card|phone|mobile|msisdn|tel\b|fax|"
    r"recipient|payee|beneficiary|wallet|destination|^to$|_to$|^dest)", re.I)
"""Argument names under which a long number is where something goes (an account, a card, a
phone). Elsewhere a number is an object the call acts on (a comment id, an order id taken
from a listing), which the requested question judges, so it is no target."""


def _strings(value: Any, depth: int = 0, key: str = "") -> Iterable[tuple[str, bool]]:
    """``(string, numbers)`` for each string of an argument value where a target may sit,
    ``numbers`` telling whether a long number there is a destination (its argument's name
    matches :data:`DESTINATION_KEY`). The values of :data:`CONTENT_KEYS` are left out; a
    shell command gives only its words without whitespace (a URL, an address,
    ``user@host:path``), never a quoted message, and no numbers."""
    if isinstance(value, str):
        yield value, bool(key and DESTINATION_KEY.search(key))
    elif depth < 8 and isinstance(value, Mapping):
        for k, v in value.items():
            name = str(k).lower()
            if name in CONTENT_KEYS:
                continue
            if name in _SHELL_KEYS and isinstance(v, str):
                yield from ((w, False) for w in _shell_targets(v))
                continue
            yield from _strings(v, depth + 1, name)
    elif depth < 8 and isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        for v in value:
            yield from _strings(v, depth + 1, key)


_RUNS_ITS_INPUT = re.compile(
    r"(?:^|[|;&({]|&&|\|\|)\s*(?:sudo\s+|env\s+|exec\s+)*(?:\S*/)?"
    r"(?:bash|sh|zsh|dash|ksh|fish|ssh|python[0-9.]*|node|perl|ruby|php|psql|mysql|sqlite3|"
    r"redis-cli|curl|xargs|eval)\b")
"""A line whose here-document is read by something that runs or sends it (a shell, ``ssh``,
an interpreter, a SQL client, ``curl --data @-``): its body is kept."""

_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")


def _without_heredoc_bodies(command: str) -> str:
    """``command`` with the bodies of its here-documents left out when they are only written
    somewhere (``cat > f``, ``tee``): such a body is a file's content, what the call says,
    not where it goes. A body fed to a shell, ``ssh``, an interpreter or a client is run, and
    kept. Measured on 14,250
    commands of real coding-agent trajectories, every false ask was a URL inside
    ``cat > test.py << 'EOF' … EOF``."""
    lines = command.split("\n")
    out: list[str] = []
    pending: list[tuple[str, bool]] = []
    for line in lines:
        if pending:
            word, strip = pending[0]
            if (line.lstrip("\t") if strip else line) == word:
                pending.pop(0)
            continue
        out.append(line)
        if not _RUNS_ITS_INPUT.search(line):  # a body a shell or interpreter reads is run
            pending = [(m.group(3), m.group(1) == "-") for m in _HEREDOC.finditer(line)]
    return "\n".join(out)


def _shell_words(command: str) -> list[str]:
    """The words of ``command`` without whitespace in them (quotes removed), so the target of
    ``curl … https://host/x`` counts and a link inside ``--body "see https://host/x"`` does
    not; the raw command when it does not split."""
    import shlex

    command = _without_heredoc_bodies(command[:MAX_SCANNED_CHARS])
    try:
        words = shlex.split(command, comments=False, posix=True)
    except ValueError:
        return command.split()
    return [w for w in words if not any(c.isspace() for c in w)]


_NETWORK_PROGRAMS = frozenset(
    "curl wget nc ncat netcat socat telnet ssh scp sftp rsync ftp lftp http https xh".split())
"""Programs that take a bare host (``curl collect.example.com/k``, ``scp f user@host:``)."""

_FILE_SUFFIXES = frozenset(
    "json txt log py md sh csv tsv xml yaml yml toml ini cfg conf lock pem key crt env out "
    "bin gz tgz zip tar bz2 xz html htm js ts css png jpg jpeg gif svg pdf db sqlite sql "
    "patch diff tmp bak".split())
"""Last labels that make a bare word a file name, not a host (``-o out.json``, ``-T
dump.sql``): a host under such a top-level domain is a target only with a scheme or a user."""

_BARE_HOST = re.compile(
    r"^(?:[\w.+-]+@)?((?:[A-Za-z0-9-]{1,63}\.)+(?:[A-Za-z]{2,24}|[0-9]{1,3}))(?::[\w/.~-]*)?"
    r"(?:/\S*)?$")


def _shell_targets(command: str) -> list[str]:
    """:func:`_shell_words`, and where the command runs a network program, each word that is
    a bare host (``collect.example.com/k``, ``user@host:path``) written as a URL, so its host
    is a target as a URL's is."""
    words = _shell_words(command)
    if not any(w.rsplit("/", 1)[-1] in _NETWORK_PROGRAMS for w in words):
        return words
    hosts = [f"bare://{m.group(1)}" for w in words if "://" not in w
             and (m := _BARE_HOST.match(w)) is not None
             and ("@" in w or m.group(1).rsplit(".", 1)[-1].lower() not in _FILE_SUFFIXES)]
    return words + hosts


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    if isinstance(block, Mapping):
        text = block.get("text")
        if isinstance(text, str):
            return text
        content = block.get("content")
        if content is not None:
            return "\n".join(_block_text(b) for b in (
                content if isinstance(content, list) else [content]))
    return ""


def tool_output_text(conversation: Sequence[Mapping[str, Any]]) -> str:
    """The text of every tool result in ``conversation`` (OpenAI ``tool``/``function``
    messages, Anthropic ``tool_result`` blocks), newest last, at most
    :data:`MAX_SCANNED_CHARS` code points (the newest kept)."""
    parts: list[str] = []
    for m in conversation:
        if not isinstance(m, Mapping):
            continue
        content = m.get("content")
        if m.get("role") in ("tool", "function"):
            parts.append(_block_text({"content": content}))
        elif isinstance(content, list):
            parts += [_block_text(b) for b in content
                      if isinstance(b, Mapping) and b.get("type") == "tool_result"]
    return "\n".join(parts)[-MAX_SCANNED_CHARS:]


def user_text(conversation: Sequence[Mapping[str, Any]], request: str = "") -> str:
    """What the user wrote: the text blocks of user messages (not their tool results, see
    :func:`ctxgate.gate.request.message_text`) and the request the gate judges against."""
    from ctxgate.gate.request import message_text

    parts = [request] + [message_text(m) for m in conversation
                         if isinstance(m, Mapping) and m.get("role") == "user"]
    return "\n".join(parts)[-MAX_SCANNED_CHARS:]


def foreign_targets(arguments: Any, conversation: Sequence[Mapping[str, Any]],
                    request: str = "") -> list[str]:
    """The call's target values that a tool result named and the user never did, sorted.

    Only the call's own strings are parsed for targets; the conversation is searched for
    those values (a literal search, case-insensitive, not inside a longer word; a number also
    written with spaces or dashes), so a long transcript costs a few C-speed passes."""
    wanted: set[str] = set()
    for s, numbers in _strings(arguments):
        wanted |= targets(s[:MAX_SCANNED_CHARS], numbers=numbers)
    if not wanted:
        return []
    tool_side = _Haystack(tool_output_text(conversation))
    named = [v for v in wanted if tool_side.holds(v)]
    if not named:
        return []
    said = _Haystack(user_text(conversation, request))
    return sorted(v for v in named if not said.holds(v))


class _Haystack:
    """A text searched for target values, lower-cased once on first need."""

    __slots__ = ("_lower", "_text")

    def __init__(self, text: str) -> None:
        self._text, self._lower = text, None

    def holds(self, value: str) -> bool:
        if self._lower is None:
            self._lower = self._text.lower()
        v = value.lower()
        if _found(v, self._lower):
            return True
        if v.isdigit() or _IBAN.fullmatch(value):  # a number may be written with spaces
            spaced = r"[ \t-]?".join(re.escape(c) for c in v)
            return re.search(rf"(?<![\w.@-]){spaced}(?![\w@-])", self._lower) is not None
        return False


def _found(value: str, text: str) -> bool:
    """``value`` occurs in ``text`` not inside a longer word, host or number (a host after
    ``user@`` is that host)."""
    start = text.find(value)
    while start != -1:
        before = text[start - 1] if start else " "
        end = start + len(value)
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before in "._-+") and not (after.isalnum()
                                                               or after in "_-@"):
            return True
        start = text.find(value, start + 1)
    return False
