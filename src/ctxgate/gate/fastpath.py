"""Read-only fast path: shell commands proved harmless are allowed without a model call.

A command is *proved read-only* only when all of these hold; anything else goes to the
decision model (the fast path never denies, it only skips the model for the obvious):

- bashlex parsed it (:func:`ctxgate.shell.parse_command` with ``parsed_ok``); the fallback
  scanner's best effort is not proof;
- no redirection writes a file (``2>/dev/null`` and ``>&2`` are fine, ``> out`` is not);
- every simple command — in pipelines, lists, subshells and command substitutions — runs a
  program from a conservative allow-list, by bare name or from a system bin directory, with
  no environment assignments (``GIT_EXTERNAL_DIFF=x git diff`` runs code) and only the
  wrappers ``time``, ``nice``, ``timeout``, ``command``, ``stdbuf`` and ``xargs`` (the last
  only in front of a program whose every argument is harmless);
- programs with dangerous options (``find``, ``git``, ``sort``, ``uniq``, ``date``, ``rg`` ...)
  use none of them, and have no ``$``/backtick expansion, unquoted glob or brace expansion
  that could smuggle one in (a file named ``-delete`` is a classic; ``{-delete,}`` another);
- nothing hides where bashlex does not look: no ``${…}``/``$[…]``, and no ``$(…)``, backtick
  or ``<(…)`` beyond the substitutions the parse resolved (unquoted heredoc bodies expand them);
- no argument names a sensitive path (``/etc``, ``/root``, ``~/.ssh``, keys, ``.env``,
  credentials, ``/proc``, ``/dev`` devices): reading secrets is not destructive, but it is not
  obviously fine either, so the model judges it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["FastPathResult", "SAFE_ANY_ARGS", "SAFE_WITH_RULES", "is_read_only", "shell_command"]

SAFE_ANY_ARGS = frozenset({
    "cat", "tac", "grep", "egrep", "fgrep", "head", "tail", "wc", "ls", "echo", "printf",
    "pwd", "true", "false", "test", "[", "basename", "dirname", "realpath", "readlink",
    "stat", "du", "df", "nl", "rev", "cut", "tr", "comm", "cmp", "diff", "md5sum", "sha1sum",
    "sha256sum", "sha512sum", "b2sum", "cksum", "whoami", "id", "uname", "nproc", "uptime",
    "free", "ps", "which", "type", "column", "strings", "od", "seq", "sleep", "cd", "paste",
    "fold", "fmt", "expand", "unexpand", "join", "whereis", "groups", "arch", "lsb_release",
})
"""Programs none of whose options or operands write, delete or execute anything."""

SAFE_WITH_RULES = frozenset({"find", "git", "sort", "uniq", "date", "hostname", "file", "tree",
                             "rg", "xxd", "hexdump", "jq"})
"""Programs allowed only without their writing/executing options (see ``_RULES``)."""

_WRAPPERS_OK = frozenset({"time", "nice", "timeout", "command", "stdbuf", "xargs"})
_SYSTEM_BIN = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
_GLOB = re.compile(r"[*?\[]")
_BRACE = re.compile(r"\{[^}]*(,|\.\.)[^}]*\}")  # {a,b} and {1..3} expand into several words

_FIND_BAD = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0",
                       "-fprintf", "-fls"})
_GIT_READ = frozenset({"status", "log", "diff", "show", "blame", "ls-files", "ls-tree",
                       "rev-parse", "describe", "shortlog", "grep", "cat-file", "rev-list",
                       "whatchanged", "reflog", "count-objects", "merge-base", "name-rev"})
_GIT_BAD_OPTS = ("--output", "-O", "--open-files-in-pager", "--ext-diff", "--textconv",
                 "--filters")
_GIT_GLOBAL_WITH_ARG = frozenset({"-C", "--git-dir", "--work-tree", "--namespace"})

_SENSITIVE = re.compile(
    r"(^|[\s/=:'\"])(/etc|/root|/proc|/sys|/boot|/var/log|/dev/(?!null\b))"
    r"|~root|\.ssh|\.gnupg|\.aws|\.kube|\.docker|\.netrc|\.pgpass|\.npmrc|\.pypirc"
    r"|(^|/)\.env\b|id_rsa|id_dsa|id_ecdsa|id_ed25519|\.pem\b|\.key\b|credential|secret"
    r"|token|passw|shadow|private|_history|keychain|wallet|api_?key|_key\b|auth",
    re.IGNORECASE,
)


@dataclass(frozen=True, kw_only=True)
class FastPathResult:
    """Whether a command was proved read-only, and why (not)."""

    read_only: bool
    reason: str
    programs: tuple[str, ...] = ()


def shell_command(tool: str, arguments: Any, shell_tools: Mapping[str, str]) -> str | None:
    """The shell command string of a call to a shell tool, else ``None``."""
    pointer = shell_tools.get(tool)
    if pointer is None:
        return None
    from ctxgate.gate.pointers import resolve

    try:
        value = resolve(arguments, pointer)
    except (KeyError, TypeError):
        return None
    return value if isinstance(value, str) else None


def _no(reason: str) -> FastPathResult:
    return FastPathResult(read_only=False, reason=reason)


def is_read_only(command: str) -> FastPathResult:
    """Try to prove ``command`` read-only (rules in the module docstring); never raises."""
    if not isinstance(command, str) or not command.strip():
        return _no("empty command")
    if "\x00" in command:
        return _no("NUL byte in command")
    from ctxgate.shell import parse_command

    parsed = parse_command(command)
    if not parsed.parsed_ok:
        return _no(f"not parsed by bashlex ({parsed.error})")
    hidden = _unparsed_expansion(command, parsed.substitutions)
    if hidden:
        return _no(hidden)
    if not parsed.segments:
        return _no("no command found")
    for r in parsed.redirections:
        if r.writes_file or r.operator == "<>":
            return _no(f"redirection {r.operator} {r.target} writes a file")
        if _SENSITIVE.search(r.target):
            return _no(f"redirection reads sensitive path {r.target!r}")
    for seg in parsed.segments:
        why = _segment_problem(seg)
        if why:
            return _no(why)
    return FastPathResult(read_only=True, reason="read-only: " + ", ".join(parsed.programs),
                          programs=parsed.programs)


def _unparsed_expansion(command: str, substitutions) -> str | None:
    """Why ``command`` may run something the parse did not show, or None.

    bashlex does not look inside ``${…}`` (``${x:-$(rm -rf /)}`` runs rm) nor into unquoted
    heredoc bodies, so any ``${``/``$[``, and any ``$(``, backtick or ``<(``/``>(`` beyond the
    substitutions the parse recorded (a quoted one is only counted as unproved), is not proof.
    """
    if "${" in command or "$[" in command:
        return "parameter or arithmetic expansion the parser does not look into"
    dollar = command.count("$(") - command.count("$((")
    ticks = command.count("`")
    procs = command.count("<(") + command.count(">(")
    seen_dollar = sum(1 for s in substitutions if s.startswith("$("))
    seen_ticks = 2 * sum(1 for s in substitutions if s.startswith("`"))
    seen_procs = sum(1 for s in substitutions if s.startswith(("<(", ">(")))
    if dollar > seen_dollar or ticks > seen_ticks or procs > seen_procs:
        return "a command substitution the parser did not resolve"
    return None


def _segment_problem(seg) -> str | None:
    program = seg.program
    if not program:
        return f"assignment or empty command {seg.raw!r}"
    word0 = seg.argv[0]
    if "/" in word0 and not word0.startswith(_SYSTEM_BIN):
        return f"program {word0!r} is not a system command"
    if program not in SAFE_ANY_ARGS and program not in SAFE_WITH_RULES:
        return f"{program!r} is not on the read-only allow-list"
    if seg.env:
        return f"environment assignment {seg.env[0]!r} before {program!r}"
    bad_wrappers = [w for w in seg.wrappers if w not in _WRAPPERS_OK]
    if bad_wrappers:
        return f"wrapper {bad_wrappers[0]!r} before {program!r}"
    if "xargs" in seg.wrappers and program not in SAFE_ANY_ARGS:
        return f"xargs feeds unknown arguments to {program!r}"
    for word in seg.argv[1:]:
        if _SENSITIVE.search(word):
            return f"argument {word!r} names a sensitive path"
    if program in SAFE_ANY_ARGS:
        return None
    raw = seg.raw
    if "$" in raw or "`" in raw:
        return f"{program!r} with an expansion that could inject options"
    for word in seg.argv[1:]:
        quoted = f"'{word}'" in raw or f'"{word}"' in raw
        if _GLOB.search(word) and not quoted:
            return f"{program!r} with an unquoted glob {word!r}"
        if _BRACE.search(word) and not quoted:  # find . {-delete,} runs find . -delete
            return f"{program!r} with a brace expansion {word!r}"
    return _RULES[program](seg.argv[1:])


def _find(args) -> str | None:
    bad = [a for a in args if a in _FIND_BAD]
    return f"find {bad[0]} writes or executes" if bad else None


def _git(args) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        opt = args[i]
        if opt == "-c" or opt.startswith("--exec-path") or opt.startswith("--config-env"):
            return f"git {opt} can run configured commands"
        i += 2 if opt in _GIT_GLOBAL_WITH_ARG else 1
    if i >= len(args):
        return "git without a subcommand"
    sub, rest = args[i], args[i + 1:]
    if sub not in _GIT_READ:
        return f"git {sub} is not a read-only subcommand"
    for a in rest:
        if a.startswith(_GIT_BAD_OPTS):
            return f"git {sub} {a} writes a file or runs a program"
    if sub == "reflog" and {"expire", "delete"} & set(rest):
        return "git reflog expire/delete deletes history"
    return None


def _sort(args) -> str | None:
    for a in args:
        if a.startswith(("-o", "--output", "--compress-program")) or (
                a.startswith("-") and not a.startswith("--") and "o" in a[1:]):
            return f"sort {a} writes a file or runs a program"
    return None


def _operands(args) -> list[str]:
    return [a for a in args if not a.startswith("-") or a == "-"]


def _uniq(args) -> str | None:
    return "uniq with an output file" if len(_operands(args)) > 1 else None


def _date(args) -> str | None:
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-s", "--set") or a.startswith("--set="):
            return "date --set changes the clock"
        if a in ("-d", "--date", "-r", "--reference", "-f", "--file"):
            skip = True
            continue
        if not a.startswith(("-", "+")):
            return f"date {a} sets the clock"
    return None


def _hostname(args) -> str | None:
    if any(a in ("-F", "--file", "-b", "--boot") for a in args):
        return "hostname -F/-b sets the host name"
    return "hostname NAME renames the host" if _operands(args) else None


def _file(args) -> str | None:
    return "file -C writes a magic file" if any(a in ("-C", "--compile") for a in args) else None


def _tree(args) -> str | None:
    if any(a.startswith("-o") or a == "-R" for a in args):
        return "tree -o/-R writes files"
    return None


def _rg(args) -> str | None:
    return "rg --pre runs a program" if any(a.startswith("--pre") for a in args) else None


def _xxd(args) -> str | None:
    if any(a.startswith("-r") for a in args):
        return "xxd -r writes binary"
    return "xxd with an output file" if len(_operands(args)) > 1 else None


def _jq(args) -> str | None:
    """jq reads files and stdin only, but ``env``/``$ENV`` print the environment (secrets)."""
    return "jq reading the environment" if any("env" in a.lower() for a in args) else None


_RULES = {"jq": _jq, "find": _find, "git": _git, "sort": _sort, "uniq": _uniq, "date": _date,
          "hostname": _hostname, "file": _file, "tree": _tree, "rg": _rg, "xxd": _xxd,
          "hexdump": lambda args: None}
