"""Features of a tool call for the local heads: what a shell command really executes.

The destructive head must not be fooled by text that merely *mentions* a destructive command
(``echo "rm -rf /"``, a heredoc written to a file, a grep pattern) and must see through the
ways commands hide (``sudo``/``env``/``timeout`` wrappers, ``xargs rm``, ``$(…)``, backticks,
``bash -c '…'``, ``find -delete`` / ``-exec rm``). So the command is parsed with bashlex
(:mod:`~ctxgate.gate.backends.heads.commands`) into the *simple commands that would run*,
each as ``(program, argv, redirect targets)``, and the features count destructive patterns
over those only. A command bashlex cannot parse falls back to a quote-aware split
(``parsed_ok`` = 0, itself a feature).

Everything here is pure and deterministic: same call → same features, byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ctxgate.gate.backends.heads.commands import (
    SHELLS,
    SimpleCommand,
    executed_commands,
    parse_commands,
    strip_heredocs,
)
from ctxgate.gate.backends.heads.matching import (
    HARMFUL_ACTIONS,
    CallTerms,
    matched,
    request_actions,
    request_terms,
)
from ctxgate.gate.backends.heads.matching import call_terms as _call_terms

__all__ = [
    "DESTRUCTIVE_FEATURES",
    "HARD_RULES",
    "REQUESTED_FEATURES",
    "RULE_FLOOR",
    "SimpleCommand",
    "call_terms",
    "call_text",
    "destructive_features",
    "executed_commands",
    "executed_text",
    "intent_classes",
    "is_shell_call",
    "named_only",
    "requested_features",
    "rule_floor",
    "strip_heredocs",
    "window_text",
]

DELETERS = frozenset("rm rmdir shred unlink srm wipe wipefs trash-put".split())
DISK = frozenset("dd mkfs fdisk parted sfdisk mkswap format diskutil".split())
KILLERS = frozenset("kill pkill killall shutdown reboot halt poweroff init".split())
PERMS = frozenset("chmod chown chgrp setfacl chattr passwd usermod userdel groupdel".split())
MOVERS = frozenset("mv cp install ln truncate rsync tee patch".split())
SQL_CLIENTS = frozenset(
    "psql mysql mariadb sqlite3 duckdb sqlcmd clickhouse-client cockroach cqlsh snowsql bq "
    "trino presto".split()
)
NETWORK = frozenset("curl wget http httpie scp sftp ftp nc ncat socat ssh telnet".split())
READ_ONLY = frozenset(
    "ls cat head tail less more grep egrep fgrep rg ag wc pwd echo printf stat file du df "
    "ps top which whereis type date whoami id uname hostname tree sort uniq cut tr column jq "
    "yq diff cmp comm basename dirname realpath readlink md5sum sha1sum sha256sum cksum nl "
    "true false test [ seq expr env printenv uptime free lsof netstat ss dig nslookup ping "
    "awk sed find git xxd od hexdump strings base64 zcat gzip tar cd pushd popd read export "
    "history locate man help command whatis apropos info tldr :".split()
)
STRONG_VERBS = frozenset(
    "delete del remove rm rmi destroy drop purge prune terminate kill wipe erase uninstall "
    "revoke disable flush truncate reset deregister unregister nuke clean clear undeploy "
    "force-delete rollback".split()
)
WEAK_VERBS = frozenset(
    "update put set stop restart scale apply patch replace modify rotate cancel drain cordon "
    "taint detach evict overwrite push merge rebase write upload import restore edit".split()
)
_VERB_PREFIXES = ("delete-", "remove-", "destroy-", "terminate-", "purge-", "drop-", "disable-")
FORCE_FLAGS = frozenset(
    "-f --force -rf -fr -Rf -fR -y --yes --hard --no-preserve-root --purge -D --prune "
    "--force-delete-without-recovery --all --cascade --delete".split()
)
_SQL = re.compile(r"\b(drop\s+(table|database|schema|index)|truncate\s+table|delete\s+from|"
                  r"update\s+\S+\s+set|alter\s+table)\b", re.I)
_REQ_INTENT = re.compile(
    r"\b(delet\w*|remov\w*|eras\w*|wip\w*|kill\w*|destroy\w*|drop\w*|purg\w*|prun\w*|"
    r"clean\w*|clear\w*|overwrit\w*|reset\w*|uninstall\w*|terminat\w*|truncat\w*|shred\w*|"
    r"rm|force\w*|replac\w*|renam\w*|mov\w*|chang\w*|modif\w*|updat\w*|stop\w*|shut\w*|"
    r"reboot\w*|push\w*|send\w*|upload\w*|post\w*|compress\w*|empt\w*|permission\w*|chmod|"
    r"undo\w*|tear\w*|revert\w*|roll\w*\s+back|rollback\w*|discard\w*|get\s+rid)\b",
    re.I,
)
_WORD = re.compile(r"[A-Za-z0-9_.\-/~]{2,}")
WINDOW_CHARS = 480
"""Code points of a text the encoder sees: the whole text, or its head and tail halves."""


def window_text(text: str, limit: int = WINDOW_CHARS) -> str:
    """``text`` whole when it fits ``limit`` code points, else its head and tail around ``…``.

    The encoder's cost grows with tokens, so long requests and scripts are embedded through
    this window; the parser features still see the whole command.
    """
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + " … " + text[-half:]


def call_text(tool: str, arguments: Any) -> str:
    """The call as one line of text: ``bash: <command>`` or ``tool {json args}``."""
    cmd = _command_of(arguments)
    if cmd is not None:
        return f"{tool}: {cmd}"
    return f"{tool} {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}"


def is_shell_call(arguments: Any) -> bool:
    """Whether the call runs a shell command (a ``command``/``cmd``/``script`` string)."""
    return _command_of(arguments) is not None


def _command_of(arguments: Any) -> str | None:
    if isinstance(arguments, Mapping):
        for key in ("command", "cmd", "script"):
            if isinstance(arguments.get(key), str):
                return arguments[key]
    if isinstance(arguments, str):
        return arguments
    return None


def executed_text(tool: str, arguments: Any) -> str:
    """What the call executes, as text: printed payloads and heredoc bodies left out."""
    cmd = _command_of(arguments)
    if cmd is None:
        return call_text(tool, arguments)
    cmds = executed_commands(cmd)
    pieces = []
    for c in cmds:
        argv = _strip_messages(c.program, c.argv)
        if c.program in _PRINTERS or named_only(c.program, c.argv):  # text, not an action
            argv = tuple(dict.fromkeys(a if a.startswith("-") else "<text>" for a in argv))
        redirect = "".join(f" > {t}" for t in c.overwrites) + "".join(
            f" >> {t}" for t in c.appends)
        pieces.append(" ".join((*c.via, c.program, *argv)) + redirect)
    return " ; ".join(pieces) if pieces else cmd


DESTRUCTIVE_FEATURES = (
    "deleter", "find_delete", "overwrite_redirect", "disk", "git_destructive", "sql",
    "strong_verb", "weak_verb", "force_flag", "killer", "perms", "mover", "in_place_edit",
    "network_write", "pipe_to_shell", "hidden", "all_read_only", "parsed_ok",
    "n_commands", "tool_verb", "not_shell", "destructive_token", "append_redirect",
    "output_write", "remote_code", "named_only",
)

HARD_RULES = ("deleter", "find_delete", "disk", "git_destructive", "sql", "killer",
              "in_place_edit", "remote_code", "tool_delete")
"""Features that, when they fire on a command that really runs, floor P(destructive)."""
RULE_FLOOR = 0.9
"""The floor those rules put under P(destructive): deterministic rules in front of the head."""
WRITE_RULES = ("overwrite_redirect", "output_write")
"""Writes that replace a file's content (``> f``, ``tee f``, ``sort -o f``, ``curl -o f``)."""
WRITE_FLOOR = 0.6
"""Their floor: over the deny threshold, so an unrequested overwrite is not waved through,
but lower than the hard rules (most are ordinary edits when asked for)."""
_TOOL_DELETE = re.compile(r"(delete|remove|drop|destroy|kill|truncate|purge|wipe|erase)", re.I)
_DESTRUCTIVE_TOKEN = re.compile(
    r"(^|[-_:/.= ])(rm|rmdir|del|delete|destroy|drop|purge|prune|remove|wipe|erase|kill|"
    r"terminate|truncate|shred|uninstall|revoke)([-_:/. ]|$)", re.I)
_PRINTERS = frozenset("echo printf grep egrep fgrep rg man help which whereis type whatis "
                      "apropos info tldr command".split())
"""Programs whose arguments are text or names: what they print, search or look up never runs."""
_NAMING_FLAGS = frozenset({"--help", "--version", "--usage"})
_MESSAGE_OPTS = ("-m", "--message", "-F", "--file")


def named_only(program: str, argv: tuple[str, ...]) -> bool:
    """``rm --help``, ``git help reset``, ``git reset --help``: the program is only named."""
    return bool(set(argv) & _NAMING_FLAGS) or (program == "git" and argv[:1] == ("help",))


def _strip_messages(program: str, argv: tuple[str, ...]) -> tuple[str, ...]:
    """A commit or tag message is text: ``git commit -m "rm -rf …"`` does not run it."""
    if program != "git" or not argv or argv[0] not in ("commit", "tag", "notes", "stash"):
        return argv
    out, skip = [], False
    for a in argv:
        if skip:
            out.append("<text>")
            skip = False
        elif a in _MESSAGE_OPTS[:2]:
            out.append(a)
            skip = True
        elif a.startswith(("--message=", "-m")) and a not in ("-m",):
            out.append(a.split("=", 1)[0] if "=" in a else "-m")
            out.append("<text>")
        else:
            out.append(a)
    return tuple(out)


_OUTPUT_PROGRAMS = frozenset("curl wget sort git tee http httpie aria2c yt-dlp jq".split())


def _output_write(program: str, argv: tuple[str, ...]) -> bool:
    """``tee f``, ``sort -o f``, ``curl -o f``, ``wget -O f``, ``git log --output=f``."""
    files = [a for a in argv if not a.startswith("-")]
    if program == "tee":
        return not ({"-a", "--append"} & set(argv)) and any(
            f not in ("/dev/null", "/dev/stdout", "/dev/stderr") for f in files)
    if program not in _OUTPUT_PROGRAMS:
        return False
    for i, a in enumerate(argv):
        if a.startswith("--output=") or a.startswith("--output-document="):
            return True
        if a in ("-o", "--output", "-O", "--output-document", "--remote-name") and (
                program in ("curl", "wget", "sort", "aria2c", "yt-dlp", "http", "httpie")):
            nxt = argv[i + 1] if i + 1 < len(argv) else ""
            return a == "--remote-name" or (program == "curl" and a == "-O") or nxt not in (
                "-", "/dev/null", "/dev/stdout")
    return False


def rule_floor(tool: str, features: list[float]) -> tuple[float, str]:
    """``(floor, rule)``: the least P(destructive) the hard rules allow, and which rule fired.

    ``(0.0, "")`` when none fired.
    """
    named = dict(zip(DESTRUCTIVE_FEATURES, features, strict=True))
    for rule in HARD_RULES:
        if rule == "tool_delete":
            if named["not_shell"] and _TOOL_DELETE.search(tool):
                return RULE_FLOOR, rule
        elif named[rule] >= 1.0:
            return RULE_FLOOR, rule
    if named["not_shell"]:
        verb = tool_verb(tool)
        if verb in SIDE_EFFECT_VERBS:
            return RULE_FLOOR, "tool_side_effect"
        if verb in CHANGE_VERBS:
            return WRITE_FLOOR, "tool_change"
    for rule in WRITE_RULES:
        if named[rule] >= 1.0:
            return WRITE_FLOOR, rule
    return 0.0, ""


SIDE_EFFECT_VERBS = frozenset(
    "send invite share publish transfer pay book order reserve post report submit notify "
    "email mail message reply forward tweet broadcast sms dm charge refund withdraw deposit "
    "donate purchase buy sell checkout deploy release announce unsubscribe ban block revoke "
    "deactivate cancel".split())
"""A function call whose name starts with one of these has an effect outside the machine
(it sends, pays, publishes, invites, shares, books, reports): floored at :data:`RULE_FLOOR`."""
CHANGE_VERBS = frozenset(
    "create add update set put patch insert upload write edit modify replace save rename move "
    "copy append import apply change enable disable start stop restart run trigger execute "
    "assign unassign merge close reopen lock unlock archive restore mark register configure "
    "toggle reset rotate approve reject accept decline commit push tag label attach detach "
    "upsert schedule reschedule sync mute unmute overwrite".split())
"""Verbs of a function call that changes state (recoverable as far as the name says): floored
at :data:`WRITE_FLOOR`, over the deny threshold, so only a request lets it through."""
_NAME_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


def tool_verb(tool: str) -> str:
    """The first verb of a tool's name (``sendEmail`` → ``send``, ``repos/create-issue`` →
    ``create``, ``mcp__slack__post_message`` → ``post``); ``""`` when none is known."""
    for part in re.split(r"[^A-Za-z]+", tool.rsplit("__", 1)[-1]):
        for w in _NAME_PART.findall(part):
            w = w.lower()
            if w in SIDE_EFFECT_VERBS or w in CHANGE_VERBS or w in _READ_NAME_VERBS:
                return w
    return ""


_READ_NAME_VERBS = frozenset(
    "get list read fetch search find show describe query retrieve lookup look check view "
    "count download export inspect preview stat info status exists validate verify compute "
    "calculate estimate convert translate summarize summarise explain ping browse scan "
    "watch diff compare analyze analyse render parse print test".split())
"""A name that starts with a read verb (``getReport``, ``checkNameAvailability``) is not
floored by the verbs after it."""


def _git_destructive(argv: tuple[str, ...]) -> bool:
    if not argv:
        return False
    sub, rest = argv[0], set(argv[1:])
    return (
        (sub == "push" and bool(rest & {"-f", "--force", "--delete", "-d", "--mirror",
                                        "--force-with-lease"} or any(
            a.startswith((":", "+", "--force")) for a in argv[1:])))
        or (sub == "reset" and "--hard" in rest)
        or (sub == "clean" and any(a.startswith("-") and "f" in a for a in rest))
        or (sub == "branch" and bool(rest & {"-D", "-d", "--delete"}))
        or (sub in ("checkout", "restore") and ("." in rest or "--" in rest))
        or (sub == "stash" and bool(rest & {"drop", "clear"}))
        or (sub in ("rebase", "filter-branch", "filter-repo", "rm", "gc"))
        or (sub == "tag" and "-d" in rest)
    )


def destructive_features(tool: str, arguments: Any) -> list[float]:
    """The :data:`DESTRUCTIVE_FEATURES` of one call, in that order."""
    cmd = _command_of(arguments)
    f = dict.fromkeys(DESTRUCTIVE_FEATURES, 0.0)
    tool_l = tool.lower()
    if any(v in tool_l for v in ("delete", "remove", "drop", "destroy", "kill", "overwrite",
                                 "write", "move", "rename", "send", "post", "update")):
        f["tool_verb"] = 1.0
    if cmd is None:
        f["not_shell"] = 1.0
        f["parsed_ok"] = 1.0
        return [f[k] for k in DESTRUCTIVE_FEATURES]
    cmds, ok = parse_commands(cmd, 0, ())
    f["parsed_ok"] = 1.0 if ok else 0.0
    f["n_commands"] = min(len(cmds), 20) / 20.0
    fetched = False
    for i, c in enumerate(cmds):
        p, argv = c.program, _strip_messages(c.program, c.argv)
        if named_only(p, argv):
            f["named_only"] = 1.0
            continue
        if c.overwrites:
            f["overwrite_redirect"] = 1.0
        if c.appends:
            f["append_redirect"] = 1.0
        if _output_write(p, argv):
            f["output_write"] = 1.0
        if p in SHELLS and not argv and fetched:
            f["remote_code"] = 1.0
        if p in ("curl", "wget"):
            fetched = True
        sets = set(argv)
        flags = {a for a in argv if a.startswith("-")}
        if c.via and any(v in ("$()", "xargs", "find -exec", *SHELLS, "eval") for v in c.via):
            f["hidden"] = 1.0
        if p in DELETERS:
            f["deleter"] = 1.0
        if p == "find" and sets & {"-delete", "-exec", "-execdir", "-ok"}:
            f["find_delete"] = 1.0 if "-delete" in sets else max(f["find_delete"], 0.5)
        if p in DISK or p.startswith("mkfs") or (p == "dd" and any(a.startswith("of=")
                                                                  for a in argv)):
            f["disk"] = 1.0
        if p == "git" and _git_destructive(argv):
            f["git_destructive"] = 1.0
        if p in SQL_CLIENTS and any(_SQL.search(a) for a in argv):
            f["sql"] = 1.0
        if p in ("redis-cli", "valkey-cli", "keydb-cli") and {a.lower() for a in argv} & {
                "flushall", "flushdb"}:
            f["sql"] = 1.0
        if p in ("mongo", "mongosh") and any("drop" in a.lower() for a in argv):
            f["sql"] = 1.0
        head_args = [a.lower() for a in argv[:4] if not a.startswith("-")]
        if p not in _PRINTERS:
            if any(a in STRONG_VERBS or a.startswith(_VERB_PREFIXES) for a in head_args):
                f["strong_verb"] = 1.0
            if any(a in WEAK_VERBS for a in head_args):
                f["weak_verb"] = 1.0
        if flags & FORCE_FLAGS:
            f["force_flag"] = 1.0
        if p in KILLERS or (p == "systemctl" and sets & {"stop", "disable", "mask"}):
            f["killer"] = 1.0
        if p in PERMS:
            f["perms"] = 1.0
        if p in MOVERS or (p == "rsync" and "--delete" in sets):
            f["mover"] = 1.0
        if p in ("sed", "perl", "ruby") and any(a.startswith("-i") or a.startswith("--in-place")
                                               for a in argv):
            f["in_place_edit"] = 1.0
        if p in NETWORK and (sets & {"-X", "--request", "-d", "--data", "--data-binary", "-T",
                                     "--upload-file", "-F", "--form", "--post-data"}
                             or p in ("scp", "sftp", "nc", "ncat", "socat")):
            f["network_write"] = 1.0
        if p in SHELLS and i > 0 and not argv:
            f["pipe_to_shell"] = 1.0
        if p not in _PRINTERS and any(_DESTRUCTIVE_TOKEN.search(a) for a in (p, *argv)):
            f["destructive_token"] = 1.0
    f["all_read_only"] = 1.0 if cmds and all(
        named_only(c.program, c.argv) or c.program in READ_ONLY and not c.overwrites and not (c.program == "find" and set(c.argv)
                                                             & {"-delete", "-exec", "-execdir"})
        and not (c.program == "git" and c.argv[:1] and c.argv[0] not in
                 ("status", "log", "diff", "show", "branch", "remote", "rev-parse", "blame",
                  "ls-files", "grep", "describe"))
        and not (c.program == "sed" and any(a.startswith("-i") for a in c.argv))
        for c in cmds) else 0.0
    return [f[k] for k in DESTRUCTIVE_FEATURES]


REQUESTED_FEATURES = (
    "cosine", "call_words_in_request", "request_words_in_call", "request_intent",
    "call_destructive_rule", "destructive_unasked", "request_empty", "not_shell",
    "tool_words_in_request", "request_change_intent", "change_unasked", "intent_match",
    "intent_unasked", "object_overlap", "object_any", "no_objects", "action_match",
    "action_unasked", "intent_on_object", "argname_overlap", "unmatched_objects",
    "action_on_named_only", "action_conflict", "object_overlap_action_unasked",
)
INTENT_CLASSES: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    # class: (how a request says it, how a call does it)
    "delete": (re.compile(r"\b(delet|remov|clean|clear|purg|wip|eras|drop|destr|tear|prun|"
                          r"get rid|uninst|trash|undo|reset|discard|kill|termin|nuke|empty|"
                          r"revert|roll ?back|scrap|throw away)", re.I),
               re.compile(r"(\b|_)(rm|rmdir|delete|remove|purge|prune|drop|destroy|reset|"
                          r"clean|clear|kill|pkill|terminate|truncate|shred|uninstall|wipe|"
                          r"unlink|flush\w*|revert)(\b|_)|-delete\b", re.I)),
    "send": (re.compile(r"\b(send|sent|e-?mail|mail|messag|notify|tell|reply|forward|post|"
                        r"tweet|text|sms|share|invite|publish|announce|ping|dm)", re.I),
             re.compile(r"(send|email|mail|message|notify|reply|forward|post|tweet|sms|share|"
                        r"invite|publish|announce|chat)", re.I)),
    "pay": (re.compile(r"\b(pay|transfer|wire|refund|charg|purchas|buy|order|book|"
                       r"reserv|donat|tip)", re.I),
            re.compile(r"(pay|transfer|wire|refund|charge|purchase|buy|order|book|reserv|"
                       r"donat|checkout|amount)", re.I)),
    "change": (re.compile(r"\b(creat|add|make|writ|sav|edit|updat|chang|modif|set|renam|mov|"
                          r"fix|replac|append|insert|patch|rewrit|refactor|format|instal)",
                          re.I),
               re.compile(r"(create|add|write|save|edit|update|set|rename|move|mv|cp|patch|"
                          r"replace|append|insert|tee|sed -i|install|put|upsert|mkdir|touch)",
                          re.I)),
    "push": (re.compile(r"\b(push|deploy|releas|ship|publish|upload|merge|force)", re.I),
             re.compile(r"(push|deploy|release|publish|upload|merge|apply)", re.I)),
}
"""Intent classes: a request that says "tear down" and a call that deletes agree on one."""


_HARMFUL_INTENTS = frozenset({"delete", "send", "pay", "push"})


def intent_classes(request: str, call: str) -> tuple[set[str], set[str]]:
    """The :data:`INTENT_CLASSES` the request asks for and the call performs."""
    asked = {k for k, (r, _c) in INTENT_CLASSES.items() if r.search(request)}
    return asked, set(_done_classes(call))


@lru_cache(maxsize=64)
def _done_classes(call: str) -> frozenset[str]:
    """The call's side of :func:`intent_classes`, cached: one decision scores the same call
    against the request and each of its clauses."""
    spaced = " ".join(" ".join(w.lower() for w in _CAMEL.findall(t)) or t
                      for t in re.split(r"\s+", call))
    return frozenset(k for k, (_r, c) in INTENT_CLASSES.items()
                     if c.search(call) or c.search(spaced))
_CHANGE_INTENT = re.compile(
    r"\b(creat\w*|add\w*|send\w*|sent|invit\w*|shar\w*|transfer\w*|pay\w*|book\w*|"
    r"order\w*|post\w*|publish\w*|deploy\w*|updat\w*|edit\w*|writ\w*|sav(e|es|ing)\b|"
    r"set\w*|chang\w*|modif\w*|cancel\w*|schedul\w*|submit\w*|upload\w*|reply|"
    r"forward\w*|email\w*|messag\w*|notify\w*|assign\w*|clos\w*|merg\w*|commit\w*|"
    r"tear\w*|undo\w*|revert\w*|go ahead|yes|do it|proceed|confirm\w*)\b", re.I)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP = frozenset("the a an of to in on for and or is it me my i you your this that with "
                  "from by at be as are can please".split())


def _stems(text: str) -> set[str]:
    """Word stems of ``text``: camelCase/snake_case split, lower-cased, cut to 5 letters."""
    out = set()
    for token in _WORD.findall(text):
        for part in re.split(r"[^A-Za-z0-9]+", token):
            for w in _CAMEL.findall(part):
                w = w.lower()
                if len(w) >= 2 and w not in _STOP:
                    out.add(w[:5])
    return out


@lru_cache(maxsize=64)
def _call_stems(text: str) -> frozenset[str]:
    """:func:`_stems` of a call's text or tool name, cached like :func:`_done_classes`."""
    return frozenset(_stems(text))


def call_terms(tool: str, arguments: Any) -> CallTerms:
    """The call's side of the request↔call match (:mod:`~ctxgate.gate.backends.heads.
    matching`): computed once per call, reused for every clause of the request."""
    return _call_terms(tool, arguments, _command_of(arguments))


def requested_features(request: str, call: str, cosine: float,
                       call_destructive_rule: float, *, tool: str | None = None,
                       shell: bool = True, arguments: Any = None,
                       terms: CallTerms | None = None) -> list[float]:
    """The :data:`REQUESTED_FEATURES` for a request, the call text and their cosine.

    ``tool`` is the tool's name for a function call (its words are matched against the
    request on their own); ``shell`` says whether the call is a shell command. ``terms``
    (else computed from ``tool`` and ``arguments``) is the call's side of the match: the
    share of its argument values the request names, whether request and call agree on the
    action, and whether the request states a destructive intent on the call's object.
    """
    if terms is None:
        terms = call_terms(tool or "bash", arguments if arguments is not None else
                           {"command": call.split(": ", 1)[-1]} if shell else {})
    req_terms = request_terms(request)
    req_actions = request_actions(request)
    hit = matched(terms.objects, req_terms)
    missed = len(terms.objects) - hit
    overlap = hit / len(terms.objects) if terms.objects else 0.0
    harmful = terms.actions & HARMFUL_ACTIONS
    rw, cw = _stems(request), _call_stems(call)
    tw = _call_stems(tool) if tool and not shell else frozenset()
    intent = 1.0 if _REQ_INTENT.search(request) else 0.0
    change = 1.0 if _CHANGE_INTENT.search(request) or intent else 0.0
    asked, done = intent_classes(request, call)
    return [
        cosine,
        len(cw & rw) / max(len(cw), 1),
        len(cw & rw) / max(len(rw), 1),
        intent,
        call_destructive_rule,
        call_destructive_rule * (1.0 - intent),
        0.0 if request.strip() else 1.0,
        0.0 if shell else 1.0,
        len(tw & rw) / max(len(tw), 1) if tw else 0.0,
        change,
        call_destructive_rule * (1.0 - change),
        1.0 if asked & done else 0.0,
        1.0 if (done - asked) & _HARMFUL_INTENTS else 0.0,
        overlap,
        1.0 if hit else 0.0,
        0.0 if terms.objects else 1.0,
        1.0 if terms.actions & req_actions else 0.0,
        1.0 if harmful - req_actions else 0.0,
        1.0 if harmful & req_actions and hit else 0.0,
        matched(terms.arg_names, req_terms) / len(terms.arg_names) if terms.arg_names else 0.0,
        min(missed, 6) / 6.0,
        1.0 if harmful & req_actions and not missed else 0.0,
        1.0 if (changes := terms.actions - {"read"}) and req_actions
        and not changes & req_actions else 0.0,
        overlap if harmful - req_actions else 0.0,
    ]
