"""Read-only fast path: shell commands proved harmless are allowed without a model call.

Sound by construction: the fast path allows only what it models completely and refuses the
rest (refusal means "the decision model decides"; the fast path never denies):

- the command is in the bash subset of :mod:`~ctxgate.gate.fastpath.lexer` — no ``$``,
  backticks, parentheses, braces, heredocs, background jobs; redirections only to
  ``/dev/null``, between descriptors 1 and 2, and ``< file``;
- every simple command runs a program from :mod:`~ctxgate.gate.fastpath.programs` (exact
  option tables: long options spelled in full, clusters split, ``--`` honoured, operand
  limits where an extra operand is an output file), ``git`` (:mod:`.git`, including the
  repository's configured programs and hooks), ``find`` (:mod:`.find`), ``sed`` printing
  scripts (:mod:`.sed`), ``jq`` without ``env``/``$ENV``, ``xxd`` with one operand,
  ``echo``, ``printf`` (no ``-v``), ``test``/``[`` (no ``-v``/``-R``: bash evaluates array
  subscripts there), ``cd``, ``command -v``, ``type``, ``which``, and ``xargs`` in front of
  a program none of whose arguments can write;
- the program is a bare name (and every ``PATH`` entry is absolute) or an absolute path in a
  system bin directory that ``os.path.normpath`` leaves unchanged; no assignment prefixes;
  wrappers only ``time`` and ``timeout DURATION``;
- an unquoted glob stands only where no expansion can start with ``-`` (``src/*.py``), or
  after ``--``;
- no ``BASH_ENV`` and no exported shell functions in the environment (they could redefine any
  name); the fast path judges with its own environment, the agent's shell should match it;
- no argument names a sensitive path (``/etc``, ``/root``, ``~/.ssh``, keys, ``.env``,
  credentials, ``/proc``, ``/dev`` devices …): reading secrets is not destructive, but it is
  not obviously fine either, so the model judges it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxgate.gate.fastpath.find import check_find
from ctxgate.gate.fastpath.git import check_git, git_config_problem
from ctxgate.gate.fastpath.lexer import LexError, SimpleCommand, Word, lex
from ctxgate.gate.fastpath.named import check_man, is_help_call
from ctxgate.gate.fastpath.options import Refusal, parse_options, spec
from ctxgate.gate.fastpath.programs import PROGRAMS, SPECIAL

__all__ = ["FastPathResult", "is_read_only", "shell_command"]

_SYSTEM_BIN = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"})
_DURATION = re.compile(r"\d+(\.\d+)?[smhd]?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_SENSITIVE = re.compile(
    r"(^|[\s/=:'\"])(/etc|/root|/proc|/sys|/boot|/var/log|/dev/(?!null\b))"
    r"|~root|\.ssh|\.gnupg|\.aws|\.kube|\.docker|\.netrc|\.pgpass|\.npmrc|\.pypirc"
    r"|(^|/)\.env\b|id_rsa|id_dsa|id_ecdsa|id_ed25519|\.pem\b|\.key\b|credential|secret"
    r"|token|passw|shadow|private|_history|keychain|wallet|api_?key|_key\b|auth",
    re.IGNORECASE,
)

_XARGS = spec("0rt", "nLdPs", long="null no-run-if-empty verbose",
              long_arg="max-args max-lines delimiter max-procs max-chars")
_JQ_FLAGS = frozenset("rjacnesSCMR")
_JQ_LONG = frozenset({"--raw-output", "--join-output", "--ascii-output", "--compact-output",
                      "--null-input", "--exit-status", "--slurp", "--sort-keys",
                      "--color-output", "--monochrome-output", "--raw-input", "--tab", "--seq",
                      "--stream", "--args", "--jsonargs", "--raw-output0"})
_JQ_ARGS = {"--indent": 1, "--arg": 2, "--argjson": 2, "--slurpfile": 2, "--rawfile": 2}
_XXD_FLAGS = frozenset({"-p", "-ps", "-postscript", "-plain", "-u", "-i", "-b", "-bits", "-e",
                        "-C", "-a", "-autoskip", "-d"})
_XXD_ARGS = frozenset({"-l", "-len", "-s", "-seek", "-c", "-cols", "-g", "-groupsize", "-o",
                       "-offset", "-n", "-name"})
_TEST_BAD = frozenset({"-v", "-R"})


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


def is_read_only(command: str, *, cwd: str | None = None) -> FastPathResult:
    """Try to prove ``command`` read-only (rules in the module docstring); never raises.

    ``cwd`` is the directory the command will start in (default: this process's); ``git``
    is allowed only if the configuration there, and in every directory a ``cd`` in the
    command may reach, names no program.
    """
    if not isinstance(command, str) or not command.strip():
        return _no("empty command")
    if "\x00" in command:
        return _no("NUL byte in command")
    try:
        commands = lex(command)
    except LexError as exc:
        return _no(f"shell syntax the fast path does not model: {exc.reason}")
    if os.environ.get("BASH_ENV") or any(k.startswith("BASH_FUNC_") for k in os.environ):
        return _no("the environment gives bash a startup file or exported functions")
    try:
        start = os.path.abspath(cwd) if cwd is not None else os.getcwd()
    except OSError:
        return _no("the working directory is not known")
    checker = _Checker(start)
    try:
        for cmd in commands:
            checker.command(cmd)
    except Refusal as exc:
        return _no(exc.reason)
    except Exception as exc:  # the fast path must never raise; anything odd goes to the model
        return _no(f"fast path error: {type(exc).__name__}: {exc}")
    programs = tuple(dict.fromkeys(checker.programs))
    return FastPathResult(read_only=True, reason="read-only: " + ", ".join(programs),
                          programs=programs)


class _Checker:
    def __init__(self, cwd: str) -> None:
        self.dirs: list[str] = [cwd]
        self.programs: list[str] = []

    def command(self, cmd: SimpleCommand) -> None:
        for r in cmd.redirects:
            if r.op == "<" and _SENSITIVE.search(r.target):
                raise Refusal(f"redirection reads sensitive path {r.target!r}")
        words = list(cmd.words)
        first = words[0]
        wrapped = False
        if first.text == "time" and not first.quoted:
            words, wrapped = words[1:], True
            if words and words[0].text == "-p":
                words = words[1:]
        elif first.text == "timeout" and not first.quoted:
            if len(words) < 3 or not _DURATION.fullmatch(words[1].text):
                raise Refusal("timeout other than 'timeout DURATION PROGRAM'")
            words, wrapped = words[2:], True
        if not words:
            raise Refusal("a wrapper without a program")
        if wrapped and words[0].text in ("cd", "time", "timeout", "command", "type"):
            raise Refusal(f"{words[0].text!r} after a wrapper")
        self.run(words[0], words[1:])

    def run(self, word0: Word, args: Sequence[Word], *, many: bool = False) -> None:
        name = self.program(word0, named_only=is_help_call(word0.text.rsplit("/", 1)[-1], args))
        for w in args:
            # a long option's name names no path (--author); its value may
            text = w.text.partition("=")[2] if w.text.startswith("--") else w.text
            if _SENSITIVE.search(text):
                raise Refusal(f"argument {w.text!r} names a sensitive path")
        self.programs.append(name)
        if name not in PROGRAMS and name not in SPECIAL:
            return  # `rm --help`: a program of named.HELP_PROGRAMS only prints (program())
        if name == "rg" and os.environ.get("RIPGREP_CONFIG_PATH"):
            raise Refusal("rg reads options from RIPGREP_CONFIG_PATH")
        if name in PROGRAMS:
            sp = PROGRAMS[name]
            if many and sp.max_operands is not None:
                raise Refusal(f"{name} given many paths by find -exec … +")
            parse_options(name, sp, args)
            return
        getattr(self, "_" + {"[": "test"}.get(name, name))(name, args)

    def program(self, w: Word, *, named_only: bool = False) -> str:
        """The program ``w`` runs; ``named_only``: its arguments only print its help or
        version (:func:`.named.is_help_call`), so any program of ``HELP_PROGRAMS`` will do."""
        t = w.text
        if w.glob:
            raise Refusal(f"program name {w.raw!r} is a glob")
        if "=" in t and _NAME.fullmatch(t.split("=", 1)[0].split("[", 1)[0]):
            raise Refusal(f"assignment {t!r}")
        if "/" in t:
            if os.path.normpath(t) != t or os.path.dirname(t) not in _SYSTEM_BIN:
                raise Refusal(f"program {t!r} is not in a system bin directory")
            name = os.path.basename(t)
        else:
            name = t
            if not all(os.path.isabs(p) for p in os.environ.get("PATH", "").split(":")):
                raise Refusal("PATH has a relative entry, so a bare name may run a local file")
        if (name not in PROGRAMS and name not in SPECIAL and not named_only) \
                or name in ("time", "timeout"):
            raise Refusal(f"{name!r} is not a program the fast path models")
        if "/" in t and name in ("cd", "command", "type"):
            raise Refusal(f"{t!r} is not the shell builtin")
        return name

    # -- programs with dedicated checks ------------------------------------------------------
    @staticmethod
    def _globs(name: str, args: Sequence[Word]) -> None:
        for w in args:
            if w.glob and not w.option_safe:
                raise Refusal(f"{name} with an unquoted glob {w.raw!r} that may expand to an "
                              "option")

    def _echo(self, name: str, args: Sequence[Word]) -> None:
        self._globs(name, args)

    def _printf(self, name: str, args: Sequence[Word]) -> None:
        self._globs(name, args)
        if args and args[0].text.startswith("-") and args[0].text != "--":
            raise Refusal(f"printf {args[0].text}: -v assigns a variable (and evaluates array "
                          "subscripts)")
        if not args or args[0].text == "--" and len(args) == 1:
            raise Refusal("printf without a format")

    def _test(self, name: str, args: Sequence[Word]) -> None:
        self._globs(name, args)
        for w in args:
            if w.text in _TEST_BAD:
                raise Refusal(f"{name} {w.text}: bash evaluates array subscripts in variable "
                              "names")

    def _cd(self, name: str, args: Sequence[Word]) -> None:
        if len(args) != 1 or args[0].glob or args[0].text.startswith("-") or not args[0].text:
            raise Refusal("cd other than 'cd DIRECTORY'")
        target = args[0].text
        if not target.startswith(("/", ".")) and os.environ.get("CDPATH"):
            raise Refusal("cd with CDPATH set may go elsewhere")
        reached = [os.path.normpath(os.path.join(d, target)) for d in self.dirs]
        self.dirs.extend(d for d in reached if d not in self.dirs)  # cd may also fail
        if len(self.dirs) > 8:
            raise Refusal("too many directories the command may be in after its cd's")

    def _command(self, name: str, args: Sequence[Word]) -> None:
        if not args or args[0].text not in ("-v", "-V") or len(args) < 2:
            raise Refusal("command other than 'command -v NAME'")
        self._globs(name, args)
        if any(w.text.startswith("-") for w in args[1:]):
            raise Refusal("command -v with another option")

    def _type(self, name: str, args: Sequence[Word]) -> None:
        self._globs(name, args)
        ok = {"-a", "-t", "-p", "-P", "-f"}
        if not args or any(w.text.startswith("-") and w.text not in ok for w in args):
            raise Refusal("type with an option the fast path does not model")

    def _git(self, name: str, args: Sequence[Word]) -> None:
        check_git(args)
        for d in self.dirs:
            why = git_config_problem(d)
            if why:
                raise Refusal(why)

    def _man(self, name: str, args: Sequence[Word]) -> None:
        check_man(args)

    def _find(self, name: str, args: Sequence[Word]) -> None:
        check_find(args, lambda inner, many: self.run(inner[0], inner[1:], many=many))

    def _xargs(self, name: str, args: Sequence[Word]) -> None:
        i = 0
        while i < len(args) and args[i].text.startswith("-"):
            t = args[i].text
            if t == "--":
                i += 1
                break
            if t in ("-n", "-L", "-d", "-P", "-s"):
                i += 2
            else:
                i += 1
        opts, rest = args[:i], args[i:]
        parse_options("xargs", _XARGS, opts)
        if not rest:
            raise Refusal("xargs without a program (it would run echo)")
        prog = self.program(rest[0])
        sp = PROGRAMS.get(prog)
        if sp is None or not sp.xargs_ok:
            raise Refusal(f"xargs feeds unknown arguments to {prog!r}")
        self.run(rest[0], rest[1:])

    def _jq(self, name: str, args: Sequence[Word]) -> None:
        i, operands = 0, []
        while i < len(args):
            w = args[i]
            t = w.text
            i += 1
            if w.glob and not w.option_safe:
                raise Refusal(f"jq with an unquoted glob {w.raw!r}")
            if t in _JQ_LONG:
                continue
            if t in _JQ_ARGS:
                i += _JQ_ARGS[t]
                if i > len(args):
                    raise Refusal(f"jq {t} without its values")
                continue
            if t.startswith("-") and t != "-" and not t.startswith("--") and \
                    set(t[1:]) <= _JQ_FLAGS:
                continue
            if t.startswith("-") and t != "-":
                raise Refusal(f"jq {t}: not an allowed option")
            operands.append(w)
        if not operands:
            raise Refusal("jq without a filter")
        if operands[0].glob:
            raise Refusal("jq filter is a glob")
        if "env" in operands[0].text.lower() or "input_filename" in operands[0].text:
            raise Refusal("jq filter reads the environment")

    def _xxd(self, name: str, args: Sequence[Word]) -> None:
        i, operands = 0, []
        while i < len(args):
            w = args[i]
            i += 1
            if w.glob:
                raise Refusal("xxd with a glob: an expansion may add an output file")
            if w.text in _XXD_FLAGS:
                continue
            if w.text in _XXD_ARGS:
                i += 1
                if i > len(args):
                    raise Refusal(f"xxd {w.text} without its value")
                continue
            if w.text.startswith("-") and w.text != "-":
                raise Refusal(f"xxd {w.text}: not an allowed option (xxd matches prefixes; "
                              "-r writes binary)")
            operands.append(w)
        if len(operands) > 1:
            raise Refusal("xxd with a second operand writes that file")
