"""The simple commands a shell command line would really run, parsed with bashlex.

Wrappers (``sudo``, ``env``, ``timeout``, ``nice``, ``xargs`` …) are stripped and recorded;
``$(…)``, backticks, ``bash -c '…'``, ``eval`` and ``find -exec`` are followed; heredoc bodies
are data unless a shell reads them (``bash <<EOF``, ``ssh host <<EOF``, ``… | sh``) or an
unquoted body holds ``$(…)``. A line bashlex cannot parse falls back to a quote-aware split,
and :func:`parse_commands` says which path was taken. Pure and deterministic.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass
from typing import Any

__all__ = ["SHELLS", "WRAPPERS", "SimpleCommand", "executed_commands", "parse_commands",
           "strip_heredocs"]

_MAX_DEPTH = 4
WRAPPERS = frozenset(
    "sudo doas env nohup nice ionice timeout time command exec builtin stdbuf chroot "
    "unbuffer setsid strace ltrace watch flock runuser su".split()
)
SHELLS = frozenset("bash sh zsh dash ksh fish busybox".split())
_SAFE_TARGETS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")


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
        if head == "command" and len(words) > 1 and words[1] in ("-v", "-V"):
            break  # `command -v rm` only looks rm up: the program that runs is `command`
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


PAGER_HOOKS = frozenset("LESSOPEN LESSCLOSE PAGER MANPAGER GIT_PAGER EDITOR VISUAL "
                        "GIT_EDITOR GIT_SSH_COMMAND BROWSER".split())
"""Environment variables whose value another program runs as a command."""
AWKS = frozenset("awk gawk mawk nawk busybox-awk".split())
_AWK_SYSTEM = re.compile(r"""\bsystem\s*\(\s*"((?:[^"\\]|\\.)*)"|"((?:[^"\\]|\\.)*)"\s*\|\s*getline""")


def _from_words(words: list[str], overwrites: list[str], via: list[str], depth: int,
                out: list[SimpleCommand], appends: list[str] | None = None,
                herestrings: list[str] | None = None) -> None:
    words = _strip_wrappers(words, via)
    if not words:
        if overwrites or appends:  # `> f`, `>> f`: a redirection alone still writes the file
            out.append(SimpleCommand(program=":", argv=(), overwrites=tuple(overwrites),
                                     appends=tuple(appends or ()), via=tuple(via)))
        return
    program = words[0].rsplit("/", 1)[-1]
    argv = tuple(words[1:])
    out.append(SimpleCommand(program=program, argv=argv, overwrites=tuple(overwrites),
                             appends=tuple(appends or ()), via=tuple(via)))
    if depth >= _MAX_DEPTH:
        return
    if program in SHELLS or program == "eval":
        for text in herestrings or ():  # `sh <<<'git reset --hard'` runs the string
            out.extend(executed_commands(text, _depth=depth + 1, _via=(*via, program + " <<<")))
    if program in AWKS:
        for arg in argv:
            for m in _AWK_SYSTEM.finditer(arg):
                inner = (m.group(1) or m.group(2) or "").replace('\\"', '"')
                out.extend(executed_commands(inner, _depth=depth + 1, _via=(*via, "awk system")))
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
        herestrings: list[str] = []
        for part in node.parts:
            if part.kind == "word":
                words.append(part.word)
            elif part.kind == "assignment":
                name, _, value = part.word.partition("=")
                if name in PAGER_HOOKS and value.strip().lstrip("|").strip():
                    # LESSOPEN='|rm …' less f: the pager runs the value as a command
                    out.extend(executed_commands(value.strip().lstrip("|").strip(),
                                                 _depth=depth + 1, _via=(*via, name)))
            elif part.kind == "redirect" and part.type == "<<<":
                target = part.output
                if getattr(target, "kind", "") == "word":
                    herestrings.append(target.word)
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
        _from_words(words, overwrites, list(via), depth, out, appends, herestrings)
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
    return list(parse_commands(command, _depth, _via)[0])


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
def parse_commands(command: str, depth: int,
           via: tuple[str, ...]) -> tuple[tuple[SimpleCommand, ...], bool]:
    """``(commands, parsed_ok)``, memoised: the features and the executed text of one call
    share one parse (bashlex is pure Python, ~1 ms per line)."""
    from ctxgate.shell.bashlex_tables import load_bashlex

    bashlex = load_bashlex()  # cached parser tables: no 0.15 s table build per process

    out: list[SimpleCommand] = []
    if "<<" in command:
        command = strip_heredocs(command)
    try:
        for node in bashlex.parse(command):
            _walk(node, depth, via, out)
        return tuple(out), True
    except Exception:  # bashlex raises several unrelated types on unsupported syntax
        return tuple(_fallback(command, depth, via)), False
