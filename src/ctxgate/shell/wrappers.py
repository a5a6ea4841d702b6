"""Wrappers and assignments: from a simple command's words to the program it really runs."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from ctxgate.shell.model import Redirection, Segment, _Acc

__all__ = ["WRAPPERS"]


@dataclass(frozen=True, kw_only=True, slots=True)
class _WrapperSpec:
    short_with_arg: str = ""
    """Short options taking a value (``-u root`` or ``-uroot``)."""
    long_with_arg: tuple[str, ...] = ()
    """Long options taking a value (``--user root`` or ``--user=root``)."""
    positionals: int = 0
    """Operands before the wrapped command (``timeout 10 CMD`` has one)."""
    assignments: bool = False
    """Whether ``NAME=value`` words may follow the options (``env``, ``sudo``)."""


WRAPPERS: dict[str, _WrapperSpec] = {
    "sudo": _WrapperSpec(short_with_arg="ugpCDrtUTRh",
                         long_with_arg=("--user", "--group", "--prompt", "--chdir", "--role",
                                        "--type", "--other-user", "--close-from", "--host",
                                        "--command-timeout", "--chroot"),
                         assignments=True),
    "doas": _WrapperSpec(short_with_arg="uC"),
    "env": _WrapperSpec(short_with_arg="uCS", long_with_arg=("--unset", "--chdir",
                                                             "--split-string"),
                        assignments=True),
    "time": _WrapperSpec(short_with_arg="fo", long_with_arg=("--format", "--output")),
    "nice": _WrapperSpec(short_with_arg="n", long_with_arg=("--adjustment",)),
    "ionice": _WrapperSpec(short_with_arg="cnp", long_with_arg=("--class", "--classdata")),
    "timeout": _WrapperSpec(short_with_arg="sk", long_with_arg=("--signal", "--kill-after"),
                            positionals=1),
    "xargs": _WrapperSpec(short_with_arg="InLPsdEa",
                          long_with_arg=("--max-args", "--max-lines", "--max-procs",
                                         "--max-chars", "--delimiter", "--eof", "--arg-file",
                                         "--process-slot-var")),
    "command": _WrapperSpec(),
    "builtin": _WrapperSpec(),
    "exec": _WrapperSpec(short_with_arg="a"),
    "stdbuf": _WrapperSpec(short_with_arg="ioe", long_with_arg=("--input", "--output",
                                                                "--error")),
    "nohup": _WrapperSpec(),
    "unbuffer": _WrapperSpec(),
    "watch": _WrapperSpec(short_with_arg="nqd", long_with_arg=("--interval",)),
}
"""Wrapper programs skipped to reach the real program, with their option grammar."""


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


def _segment(words: list[str], raw: str, context: str, acc: _Acc, depth: int,
             use_bashlex: bool, redirections: tuple[Redirection, ...] = ()) -> None:
    """Resolve assignments and wrappers of one simple command and record its segment(s)."""
    env: list[str] = []
    wrappers: list[str] = []
    i, n = 0, len(words)
    while i < n and _ASSIGNMENT.match(words[i]):
        env.append(words[i])
        i += 1
    while i < n:
        word = words[i]
        base = _basename(word)
        spec = WRAPPERS.get(base)
        if spec is None:
            break
        if base in ("command", "builtin") and i + 1 < n and words[i + 1] in ("-v", "-V"):
            break  # `command -v rm` only names rm: the program is `command` itself
        j, split = _skip_options(words, i + 1, spec)
        if split is not None:  # env -S "cmd args": the string is the rest of the command
            try:
                words = words[:j] + shlex.split(split) + words[j:]
                n = len(words)
            except ValueError:
                pass
        j = min(n, j + spec.positionals) if j < n else j
        while spec.assignments and j < n and _ASSIGNMENT.match(words[j]):
            env.append(words[j])
            j += 1
        if j >= n:  # a wrapper with nothing to wrap is the program itself
            break
        wrappers.append(base)
        i = j
    argv = tuple(words[i:])
    program = _basename(argv[0]) if argv else ""
    acc.segments.append(Segment(program=program, argv=argv, wrappers=tuple(wrappers),
                                env=tuple(env), raw=raw.strip(), context=context,
                                redirections=redirections))
    body = _shell_body(program, argv)
    if body is not None:
        from ctxgate.shell import _parse

        acc.merge(_parse(body, depth=depth + 1, use_bashlex=use_bashlex), "shell_c")


def _skip_options(words: list[str], j: int, spec: _WrapperSpec) -> tuple[int, str | None]:
    split = None
    n = len(words)
    while j < n and words[j].startswith("-") and words[j] != "-":
        opt = words[j]
        if opt == "--":
            return j + 1, split
        if opt.startswith("--"):
            name = opt.split("=", 1)[0]
            takes = name in spec.long_with_arg
            if takes and "=" not in opt:
                if name == "--split-string" and j + 1 < n:
                    split = words[j + 1]
                j += 2
            else:
                if name == "--split-string":
                    split = opt.split("=", 1)[1]
                j += 1
            continue
        letters = opt[1:]
        consumed = 1
        for k, letter in enumerate(letters):
            if letter in spec.short_with_arg:
                value = letters[k + 1:]
                if not value and j + 1 < n:
                    value = words[j + 1]
                    consumed = 2
                if letter == "S":
                    split = value
                break
        j += consumed
    return j, split


def _shell_body(program: str, argv: tuple[str, ...]) -> str | None:
    """The command string run by ``sh -c STRING`` or ``eval ARGS``, if this is one."""
    if program == "eval" and len(argv) > 1:
        return " ".join(argv[1:])
    if program in _SHELLS:
        for k, arg in enumerate(argv[1:], start=1):
            if arg == "--":
                return None
            if not arg.startswith("-"):
                return None
            if "c" in arg[1:] and not arg.startswith("--") and k + 1 < len(argv):
                return argv[k + 1]
    return None


def _basename(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1] if "/" in word else word
