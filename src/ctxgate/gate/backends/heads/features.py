"""Features of a tool call for the local heads: what a shell command really executes.

The destructive head must not be fooled by text that merely *mentions* a destructive command
(``echo "rm -rf /"``, a heredoc written to a file, a grep pattern) and must see through the
ways commands hide (``sudo``/``env``/``timeout`` wrappers, ``xargs rm``, ``$(…)``, backticks,
``bash -c '…'``, ``find -delete`` / ``-exec rm``). So the command is parsed with bashlex
into the *simple commands that would run*, each as ``(program, argv, redirect targets)``, and
the features count destructive patterns over those only. A command bashlex cannot parse
falls back to a quote-aware split (``parsed_ok`` = 0, itself a feature).

Everything here is pure and deterministic: same call → same features, byte for byte.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DESTRUCTIVE_FEATURES",
    "HARD_RULES",
    "REQUESTED_FEATURES",
    "RULE_FLOOR",
    "SimpleCommand",
    "call_text",
    "destructive_features",
    "executed_commands",
    "executed_text",
    "requested_features",
    "rule_floor",
    "strip_heredocs",
    "window_text",
]

_MAX_DEPTH = 4
WRAPPERS = frozenset(
    "sudo doas env nohup nice ionice timeout time command exec builtin stdbuf chroot "
    "unbuffer setsid strace ltrace watch flock runuser su".split()
)
SHELLS = frozenset("bash sh zsh dash ksh fish busybox".split())
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
    "history locate man help".split()
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
    r"reboot\w*|push\w*|send\w*|upload\w*|post\w*|compress\w*|empt\w*|permission\w*|chmod)\b",
    re.I,
)
_WORD = re.compile(r"[A-Za-z0-9_.\-/~]{2,}")
_SAFE_TARGETS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")
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


@dataclass(frozen=True, kw_only=True)
class SimpleCommand:
    """One command that would run: wrappers stripped, arguments as the shell splits them."""

    program: str
    argv: tuple[str, ...]
    overwrites: tuple[str, ...] = ()
    """Targets of ``>`` / ``>|`` redirections (not ``>>``, not /dev/null)."""
    appends: tuple[str, ...] = ()
    """Targets of ``>>`` redirections (not /dev/null)."""
    via: tuple[str, ...] = ()
    """Wrappers and launchers it was found under (``sudo``, ``xargs``, ``$()``, ``bash -c``)."""


def _strip_wrappers(words: list[str], via: list[str]) -> list[str]:
    while words:
        head = words[0].rsplit("/", 1)[-1]
        if head in WRAPPERS:
            via.append(head)
            words = words[1:]
            # wrapper options and their values (timeout 5, nice -n 10, env A=1, sudo -u x)
            while words and (words[0].startswith("-") or "=" in words[0]
                             or (head in ("timeout", "watch") and words[0][:1].isdigit())):
                opt = words[0]
                words = words[1:]
                if opt in ("-u", "-g", "-n", "-c", "-s", "-k", "-C", "-p") and words \
                        and head != "su":
                    words = words[1:]
            continue
        if head == "xargs":
            via.append("xargs")
            words = words[1:]
            while words and words[0].startswith("-"):
                opt = words[0]
                words = words[1:]
                if opt in ("-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a") and words:
                    words = words[1:]
            continue
        break
    return words


def _from_words(words: list[str], overwrites: list[str], via: list[str], depth: int,
                out: list[SimpleCommand], appends: list[str] | None = None) -> None:
    words = _strip_wrappers(words, via)
    if not words:
        return
    program = words[0].rsplit("/", 1)[-1]
    argv = tuple(words[1:])
    out.append(SimpleCommand(program=program, argv=argv, overwrites=tuple(overwrites),
                             appends=tuple(appends or ()), via=tuple(via)))
    if depth >= _MAX_DEPTH:
        return
    if (program in SHELLS and "-c" in argv) or program == "eval":
        idx = argv.index("-c") + 1 if program != "eval" else 0
        script = " ".join(argv[idx:idx + 1] if program != "eval" else argv)
        out.extend(executed_commands(script, _depth=depth + 1, _via=(*via, program)))
    if program == "find":
        for i, a in enumerate(argv):
            if a in ("-exec", "-execdir", "-ok", "-okdir"):
                inner = []
                for b in argv[i + 1:]:
                    if b in (";", "\\;", "+"):
                        break
                    inner.append(b)
                _from_words(inner, [], [*via, "find -exec"], depth + 1, out)


def _walk(node: Any, depth: int, via: tuple[str, ...], out: list[SimpleCommand]) -> None:
    kind = getattr(node, "kind", "")
    if kind == "command":
        words: list[str] = []
        overwrites: list[str] = []
        appends: list[str] = []
        for part in node.parts:
            if part.kind == "word":
                words.append(part.word)
            elif part.kind == "redirect":
                target = part.output
                if getattr(target, "kind", "") == "word" and target.word not in _SAFE_TARGETS \
                        and not target.word.startswith("&"):
                    if part.type in (">", ">|", "&>"):
                        overwrites.append(target.word)
                    elif part.type in (">>", "&>>"):
                        appends.append(target.word)
            for sub in getattr(part, "parts", None) or []:
                _walk_subst(sub, depth, via, out)
            if part.kind == "redirect" and getattr(part.output, "parts", None):
                for sub in part.output.parts:
                    _walk_subst(sub, depth, via, out)
        _from_words(words, overwrites, list(via), depth, out, appends)
        return
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or []:
            _walk(child, depth, via, out)
    if kind in ("commandsubstitution", "processsubstitution"):
        _walk(node.command, depth, (*via, "$()"), out)


def _walk_subst(node: Any, depth: int, via: tuple[str, ...], out: list[SimpleCommand]) -> None:
    if node.kind in ("commandsubstitution", "processsubstitution"):
        _walk(node.command, depth + 1, (*via, "$()"), out)
    for child in getattr(node, "parts", None) or []:
        _walk_subst(child, depth, via, out)


def _fallback(command: str, depth: int, via: tuple[str, ...]) -> list[SimpleCommand]:
    """Quote-aware split on ; & | ( ) and newlines when bashlex cannot parse."""
    out: list[SimpleCommand] = []
    lex = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()<>")
    lex.whitespace_split = True
    words: list[str] = []
    overwrites: list[str] = []
    appends: list[str] = []
    pending: list[str] | None = None
    try:
        tokens = list(lex)
    except ValueError:  # unbalanced quotes: split on whitespace
        tokens = command.replace("\n", " ; ").split()
    for tok in [*tokens, ";"]:
        if pending is not None:
            if tok not in _SAFE_TARGETS:
                pending.append(tok)
            pending = None
            continue
        if tok in (">", ">|"):
            pending = overwrites
        elif tok == ">>":
            pending = appends
        elif tok and set(tok) <= set(";&|()<>"):
            if words:
                _from_words(words, overwrites, list(via), depth, out, appends)
            words, overwrites, appends = [], [], []
        else:
            words.append(tok)
    return out


def executed_commands(command: str, *, _depth: int = 0,
                      _via: tuple[str, ...] = ()) -> list[SimpleCommand]:
    """The simple commands ``command`` would run, in order (nested ones included)."""
    return list(_parse(command, _depth, _via)[0])


_HEREDOC = re.compile(r"(?<!<)<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
_SUBST = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")


_SHELL_READER = re.compile(
    r"^\s*(?:(?:sudo|env|nohup|time|exec)\s+(?:-\S+\s+)*)*(?:\S*/)?"
    r"(?:bash|sh|zsh|dash|ksh|fish|ssh|su)\b|\|\s*(?:sudo\s+)?(?:\S*/)?(?:bash|sh|zsh|dash|ksh)\b")


def _feeds_a_shell(line: str) -> bool:
    """Whether a heredoc on this line is read by a shell (its body then runs as commands)."""
    return bool(_SHELL_READER.search(line))


def strip_heredocs(command: str) -> str:
    """``command`` with heredoc bodies removed (their operator becomes ``< heredoc``).

    A body is data, not commands — except when a shell reads it (``bash <<EOF``,
    ``ssh host <<EOF``, ``cat <<EOF | sh``), where every body line is kept as a command, and
    except that an *unquoted* delimiter lets ``$(…)`` and backticks in the body run; those
    are kept, each on its own line after the command.
    """
    lines = command.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        marks = list(_HEREDOC.finditer(line))
        out.append(_HEREDOC.sub("< heredoc", line) if marks else line)
        i += 1
        for m in marks:
            strip_tabs, quoted, delim = m.group(1) == "-", bool(m.group(2)), m.group(3)
            body: list[str] = []
            while i < len(lines):
                text = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                if text == delim:
                    break
                body.append(text)
            if _feeds_a_shell(line):  # bash <<EOF, ssh host <<EOF, cat <<EOF | sh: commands
                out.extend(body)
            elif not quoted:
                for sm in _SUBST.finditer("\n".join(body)):
                    out.append(sm.group(1) if sm.group(1) is not None else sm.group(2))
    return "\n".join(out)


@functools.lru_cache(maxsize=32)
def _parse(command: str, depth: int,
           via: tuple[str, ...]) -> tuple[tuple[SimpleCommand, ...], bool]:
    """Parse once per command: the features and the executed text of one call share it
    (bashlex is pure Python, ~1 ms per line)."""
    import bashlex

    out: list[SimpleCommand] = []
    if "<<" in command:
        command = strip_heredocs(command)
    try:
        for node in bashlex.parse(command):
            _walk(node, depth, via, out)
        return tuple(out), True
    except Exception:  # bashlex raises several unrelated types on unsupported syntax
        return tuple(_fallback(command, depth, via)), False


def call_text(tool: str, arguments: Any) -> str:
    """The call as one line of text: ``bash: <command>`` or ``tool {json args}``."""
    cmd = _command_of(arguments)
    if cmd is not None:
        return f"{tool}: {cmd}"
    return f"{tool} {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}"


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
        argv = c.argv
        if c.program in _PRINTERS:  # what they print or search for is text, not an action
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
)

HARD_RULES = ("deleter", "find_delete", "disk", "git_destructive", "sql", "killer",
              "in_place_edit", "tool_delete")
"""Features that, when they fire on a command that really runs, floor P(destructive)."""
RULE_FLOOR = 0.9
"""The floor those rules put under P(destructive): deterministic rules in front of the head."""
_TOOL_DELETE = re.compile(r"(delete|remove|drop|destroy|kill|truncate|purge|wipe|erase)", re.I)
_DESTRUCTIVE_TOKEN = re.compile(
    r"(^|[-_:/.= ])(rm|rmdir|del|delete|destroy|drop|purge|prune|remove|wipe|erase|kill|"
    r"terminate|truncate|shred|uninstall|revoke)([-_:/. ]|$)", re.I)
_PRINTERS = frozenset("echo printf grep egrep fgrep rg man help".split())


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
    return 0.0, ""


def _git_destructive(argv: tuple[str, ...]) -> bool:
    if not argv:
        return False
    sub, rest = argv[0], set(argv[1:])
    return (
        (sub == "push" and bool(rest & {"-f", "--force", "--delete", "-d", "--mirror",
                                        "--force-with-lease"} or any(a.startswith(":")
                                                                     for a in argv[1:])))
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
    cmds, ok = _parse(cmd, 0, ())
    f["parsed_ok"] = 1.0 if ok else 0.0
    f["n_commands"] = min(len(cmds), 20) / 20.0
    for i, c in enumerate(cmds):
        p, argv = c.program, c.argv
        sets = set(argv)
        flags = {a for a in argv if a.startswith("-")}
        if c.via and any(v in ("$()", "xargs", "find -exec", *SHELLS, "eval") for v in c.via):
            f["hidden"] = 1.0
        if p in DELETERS:
            f["deleter"] = 1.0
        if p == "find" and sets & {"-delete", "-exec", "-execdir", "-ok"}:
            f["find_delete"] = 1.0 if "-delete" in sets else max(f["find_delete"], 0.5)
        if c.overwrites:
            f["overwrite_redirect"] = 1.0
        if c.appends:
            f["append_redirect"] = 1.0
        if p in DISK or p.startswith("mkfs") or (p == "dd" and any(a.startswith("of=")
                                                                  for a in argv)):
            f["disk"] = 1.0
        if p == "git" and _git_destructive(argv):
            f["git_destructive"] = 1.0
        if p in SQL_CLIENTS and any(_SQL.search(a) for a in argv):
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
        c.program in READ_ONLY and not c.overwrites and not (c.program == "find" and set(c.argv)
                                                             & {"-delete", "-exec", "-execdir"})
        and not (c.program == "git" and c.argv[:1] and c.argv[0] not in
                 ("status", "log", "diff", "show", "branch", "remote", "rev-parse", "blame",
                  "ls-files", "grep", "describe"))
        and not (c.program == "sed" and any(a.startswith("-i") for a in c.argv))
        for c in cmds) else 0.0
    return [f[k] for k in DESTRUCTIVE_FEATURES]


REQUESTED_FEATURES = (
    "cosine", "call_words_in_request", "request_words_in_call", "request_intent",
    "call_destructive_rule", "destructive_unasked", "request_empty",
)


def _words(text: str) -> set[str]:
    return {w.lower().strip(".-/") for w in _WORD.findall(text)} - {""}


def requested_features(request: str, call: str, cosine: float,
                       call_destructive_rule: float) -> list[float]:
    """The :data:`REQUESTED_FEATURES` for a request, the call text and their cosine."""
    rw, cw = _words(request), _words(call)
    intent = 1.0 if _REQ_INTENT.search(request) else 0.0
    return [
        cosine,
        len(cw & rw) / max(len(cw), 1),
        len(cw & rw) / max(len(rw), 1),
        intent,
        call_destructive_rule,
        call_destructive_rule * (1.0 - intent),
        0.0 if request.strip() else 1.0,
    ]
