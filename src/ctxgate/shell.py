"""Shell-aware parsing of a command string: segments, programs, redirections, substitutions.

Used by the firewall (dataset-command detection) and the gate (read-only fast path, shell
features of the local classifier). A command string is parsed with ``bashlex`` when it can
be; ``bashlex`` rejects a fair amount of everyday bash (``time``, ``[[ ]]``, ``case``,
``$(( ))``, quoted heredoc delimiters), and then a careful hand-written scanner takes over
and :attr:`ParsedCommand.parsed_ok` is ``False``. Both paths give the same structure:

- every simple command of every pipeline and list (``|``, ``|&``, ``||``, ``&&``, ``;``, ``&``,
  newlines), of subshells and groups, of ``$(…)``/backtick command substitutions, of ``<(…)``
  process substitutions and of ``sh -c STRING`` / ``eval STRING`` bodies is one :class:`Segment`;
- leading environment assignments (``FOO=1 psql``) and wrapper commands with their options
  (``sudo -u x``, ``env -i``, ``time -p``, ``nice -n 5``, ``timeout 10``, ``xargs -n1``,
  ``command``, ``exec``, ``stdbuf -oL``, ``nohup``, …) are skipped to reach the real program,
  whose path is reduced to its basename;
- quoted text and heredoc bodies are data, never commands: ``echo 'a; psql x'`` has one
  segment, ``echo``.

Parsing never raises: a string no parser understands still yields the segments the scanner
could find, with ``parsed_ok=False`` and the reason in ``error``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = [
    "ParsedCommand",
    "Redirection",
    "Segment",
    "WRAPPERS",
    "iter_programs",
    "parse_command",
]


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
_RESERVED = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done",
                       "while", "until", "esac", "function"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_DISCARD_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_MAX_DEPTH = 8


@dataclass(frozen=True, kw_only=True, slots=True)
class Segment:
    """One simple command: the program it runs once wrappers and assignments are skipped."""

    program: str
    """Basename of the program (``/usr/bin/psql`` → ``psql``); ``""`` for a bare assignment."""
    argv: tuple[str, ...]
    """The program word as written, then its arguments (quotes removed)."""
    wrappers: tuple[str, ...] = ()
    """Wrapper programs skipped, outermost first (``("sudo", "timeout")``)."""
    env: tuple[str, ...] = ()
    """Environment assignments skipped (``("FOO=1",)``)."""
    raw: str = ""
    """The source text of this simple command."""
    context: str = "top"
    """Where it sits: ``top``, ``subshell``, ``substitution``, ``process_substitution``,
    ``shell_c`` (body of ``sh -c``/``eval``)."""

    @property
    def args(self) -> tuple[str, ...]:
        """The arguments after the program word."""
        return self.argv[1:]

    def has_option(self, *names: str) -> bool:
        """Whether an argument is one of ``names`` or ``NAME=value`` for a long option."""
        for arg in self.args:
            for name in names:
                if arg == name or (name.startswith("--") and arg.startswith(name + "=")):
                    return True
        return False


@dataclass(frozen=True, kw_only=True, slots=True)
class Redirection:
    """One redirection of any segment (``2>/dev/null``, ``>> log``, ``<<EOF``)."""

    operator: str
    """``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``>&``, ``<``, ``<<``, ``<<-``, ``<<<``, ``<>``."""
    target: str
    """File name, fd number (``"1"`` for ``2>&1``) or heredoc delimiter."""
    fd: int | None = None
    """Explicit source descriptor (``2`` in ``2>x``), else None."""

    @property
    def writes_file(self) -> bool:
        """True when output goes to a real file (not ``/dev/null``, not another descriptor)."""
        if self.operator not in (">", ">>", ">|", "&>", "&>>", ">&", "<>"):
            return False
        if self.target.isdigit() or self.target == "-":
            return False
        return self.target not in _DISCARD_TARGETS

    @property
    def discards(self) -> bool:
        """True for output thrown away (``> /dev/null``)."""
        return self.target == "/dev/null" and self.operator not in ("<", "<<", "<<-", "<<<")


@dataclass(frozen=True, kw_only=True, slots=True)
class ParsedCommand:
    """The parse of a command string."""

    source: str
    segments: tuple[Segment, ...] = ()
    redirections: tuple[Redirection, ...] = ()
    substitutions: tuple[str, ...] = ()
    """Source text of each ``$(…)``, backtick and ``<(…)``/``>(…)`` substitution."""
    heredocs: tuple[str, ...] = ()
    """Heredoc bodies (data, never parsed as commands)."""
    parsed_ok: bool = True
    """True when bashlex parsed the string, or it was simple enough for the scanner to be
    exact (``parser="simple"``); False when the fallback scanner stood in for bashlex."""
    parser: str = "bashlex"
    """``"bashlex"``, ``"simple"`` or ``"fallback"``."""
    error: str | None = None
    """Why bashlex (and, if so, the scanner) could not parse the string."""

    @property
    def programs(self) -> tuple[str, ...]:
        """Program basenames of all segments, empty ones left out.

        Order is execution order, roughly: a substitution's programs come before the
        command that uses its output, otherwise source order.
        """
        return tuple(s.program for s in self.segments if s.program)

    @property
    def writes_files(self) -> bool:
        """Whether any redirection writes to a real file."""
        return any(r.writes_file for r in self.redirections)


def parse_command(cmd: str, *, use_bashlex: bool = True) -> ParsedCommand:
    """Parse a shell command string into segments (never raises).

    Simple commands — plain words, quotes, pipes, lists and redirections, with no ``$``,
    backticks, parentheses, braces, backslashes, heredocs or compound keywords — are parsed
    by the scanner alone, which is exact for that subset (``parser="simple"``,
    ``parsed_ok=True``); this keeps bashlex's ~0.1 s import off the common path.

    Args:
        cmd: the command as a shell would receive it (``bash -c CMD``).
        use_bashlex: try bashlex first (default); ``False`` forces the fallback scanner.
    """
    if use_bashlex and _is_simple(cmd):
        acc = _Acc()
        _Scanner(cmd, acc, 0).run()
        if not acc.errors:
            return _finish(cmd, acc, parsed_ok=True, parser="simple")
    return _parse(cmd, depth=0, use_bashlex=use_bashlex)


_SIMPLE_CHARS = re.compile(r"[^$`(){}\\\x00]*")
_COMPOUND_WORDS = frozenset({"if", "then", "else", "elif", "fi", "for", "do", "done", "while",
                             "until", "case", "esac", "select", "function", "coproc", "[[",
                             "eval", "sh", "bash", "zsh", "dash", "ksh", "ash", "env"})


def _is_simple(cmd: str) -> bool:
    """Whether ``cmd`` is in the subset the scanner parses exactly (see parse_command)."""
    if not _SIMPLE_CHARS.fullmatch(cmd) or "<<" in cmd:
        return False
    return _COMPOUND_WORDS.isdisjoint(cmd.replace("|", " ").replace(";", " ")
                                      .replace("&", " ").split())


def iter_programs(cmd: str) -> Iterator[str]:
    """The program basenames of every segment of ``cmd`` (see :attr:`ParsedCommand.programs`)."""
    yield from parse_command(cmd).programs


# ---------------------------------------------------------------- shared builder


@dataclass
class _Acc:
    segments: list[Segment] = field(default_factory=list)
    redirections: list[Redirection] = field(default_factory=list)
    substitutions: list[str] = field(default_factory=list)
    heredocs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def merge(self, other: ParsedCommand, context: str) -> None:
        for seg in other.segments:
            keep = seg.context if seg.context != "top" else context
            self.segments.append(_replace_context(seg, keep))
        self.redirections.extend(other.redirections)
        self.substitutions.extend(other.substitutions)
        self.heredocs.extend(other.heredocs)
        if other.error:
            self.errors.append(other.error)


def _replace_context(seg: Segment, context: str) -> Segment:
    return Segment(program=seg.program, argv=seg.argv, wrappers=seg.wrappers, env=seg.env,
                   raw=seg.raw, context=context)


def _parse(cmd: str, *, depth: int, use_bashlex: bool) -> ParsedCommand:
    acc = _Acc()
    if depth > _MAX_DEPTH:
        return ParsedCommand(source=cmd, parsed_ok=False, parser="fallback",
                             error=f"nesting deeper than {_MAX_DEPTH} levels not parsed")
    bash_error = None
    if use_bashlex and cmd.strip():
        try:
            import bashlex

            trees = bashlex.parse(cmd)
        except Exception as exc:  # bashlex raises several unrelated types
            bash_error = f"bashlex: {type(exc).__name__}: {exc}"
        else:
            try:
                for tree in trees:
                    _BashlexWalker(cmd, acc, depth).walk(tree, "top")
            except Exception as exc:  # an unexpected node shape: use the scanner instead
                bash_error = f"bashlex walk: {type(exc).__name__}: {exc}"
                acc = _Acc()
            else:
                return _finish(cmd, acc, parsed_ok=True, parser="bashlex")
    _Scanner(cmd, acc, depth).run()
    if bash_error:
        acc.errors.insert(0, bash_error)
    return _finish(cmd, acc, parsed_ok=False, parser="fallback")


def _finish(cmd: str, acc: _Acc, *, parsed_ok: bool, parser: str) -> ParsedCommand:
    return ParsedCommand(
        source=cmd, segments=tuple(acc.segments), redirections=tuple(acc.redirections),
        substitutions=tuple(acc.substitutions), heredocs=tuple(acc.heredocs),
        parsed_ok=parsed_ok, parser=parser, error="; ".join(acc.errors) or None,
    )


def _segment(words: list[str], raw: str, context: str, acc: _Acc, depth: int,
             use_bashlex: bool) -> None:
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
                                env=tuple(env), raw=raw.strip(), context=context))
    body = _shell_body(program, argv)
    if body is not None:
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


# ---------------------------------------------------------------- bashlex path


class _BashlexWalker:
    def __init__(self, source: str, acc: _Acc, depth: int):
        self.source = source
        self.acc = acc
        self.depth = depth

    def walk(self, node, context: str) -> None:
        kind = node.kind
        if kind == "command":
            self.command(node, context)
        elif kind == "compound":
            inner = context
            first = node.list[0] if node.list else None
            if first is not None and getattr(first, "word", None) == "(" and context == "top":
                inner = "subshell"
            for part in node.list:
                self.walk(part, inner)
            for redirect in getattr(node, "redirects", []) or []:
                self.redirect(redirect, context)
        elif kind in ("list", "pipeline", "if", "for", "while", "until", "function"):
            for part in node.parts:
                self.walk(part, context)
        elif kind in ("word", "assignment"):
            self.scan_word(node, context)
        elif kind == "redirect":
            self.redirect(node, context)

    def scan_word(self, node, context: str) -> None:
        for part in getattr(node, "parts", []) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                start, end = part.pos
                self.acc.substitutions.append(self.source[start:end])
                sub = ("substitution" if part.kind == "commandsubstitution"
                       else "process_substitution")
                self.walk(part.command, sub)
            else:
                self.scan_word(part, context)

    def command(self, node, context: str) -> None:
        words: list[str] = []
        for part in node.parts:
            if part.kind in ("word", "assignment"):
                words.append(part.word)
                self.scan_word(part, context)
            elif part.kind == "redirect":
                self.redirect(part, context)
            else:
                self.walk(part, context)
        start, end = node.pos
        _segment(words, self.source[start:end], context, self.acc, self.depth, True)

    def redirect(self, node, context: str) -> None:
        out = node.output
        if isinstance(out, int):
            target = str(out)
        else:
            target = out.word
            self.scan_word(out, context)
        fd = node.input if isinstance(node.input, int) else None
        self.acc.redirections.append(Redirection(operator=node.type, target=target, fd=fd))
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None:
            value = heredoc.value
            body = value.rsplit("\n", 1)[0] + "\n" if "\n" in value else ""
            self.acc.heredocs.append(body)


# ---------------------------------------------------------------- fallback scanner

_OPERATORS = ("&&", "||", "|&", ";;", "|", ";", "&", "\n", "(", ")")
_REDIRECT = re.compile(r"(\d*)(&>>|&>|>>|>\||>&|<<<|<<-|<<|<&|<>|>|<)")


class _Scanner:
    """Hand-written tokenizer for what bashlex rejects: quotes, escapes, substitutions,
    heredocs, comments, operators and redirections, without executing anything."""

    def __init__(self, source: str, acc: _Acc, depth: int):
        self.s = source
        self.acc = acc
        self.depth = depth
        self.i = 0
        self.pending_heredocs: list[tuple[str, bool]] = []

    def run(self) -> None:
        words: list[str] = []
        start = 0
        context_stack = ["top"]
        expect_target: tuple[str, int | None] | None = None
        case_pattern = False
        comment_at: int | None = None
        s = self.s
        while True:
            self.skip_blanks()
            if self.i >= len(s):
                break
            ch = s[self.i]
            if ch == "#" and (self.i == 0 or s[self.i - 1] in " \t\n;&|()"):
                comment_at = self.i if comment_at is None else comment_at
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
                continue
            m = _REDIRECT.match(s, self.i)
            if m and expect_target is None and (m.group(1) or ch in "<>&"):
                if not (ch == "&" and not m.group(2).startswith("&")):
                    op = m.group(2)
                    if op in ("<", ">") and s.startswith("(", m.end()):  # <( … ) process subst
                        m = None
                    else:
                        fd = int(m.group(1)) if m.group(1) else None
                        self.i = m.end()
                        if op in (">&", "<&"):
                            self.skip_blanks()
                        expect_target = (op, fd)
                        continue
            op = next((o for o in _OPERATORS if s.startswith(o, self.i)), None)
            if op is not None:
                if op == ")" and (case_pattern or (words and words[0] == "case")):
                    # `case` header or pattern list: words before `)` are patterns, not commands
                    case_pattern = False
                    words = []
                    self.i += 1
                    start = self.i
                    continue
                self.flush(words, s[start:comment_at or self.i], context_stack[-1])
                comment_at = None
                case_pattern = op == ";;"
                words = []
                self.i += len(op)
                if op == "\n":
                    self.read_heredoc_bodies()
                if op == "(":
                    context_stack.append("subshell" if context_stack[-1] == "top"
                                         else context_stack[-1])
                elif op == ")" and len(context_stack) > 1:
                    context_stack.pop()
                start = self.i
                continue
            word = self.read_word(context_stack[-1])
            if expect_target is not None:
                op_, fd = expect_target
                expect_target = None
                if op_ in ("<<", "<<-"):
                    self.pending_heredocs.append((word[0], op_ == "<<-"))
                self.acc.redirections.append(Redirection(operator=op_, target=word[0], fd=fd))
                continue
            if not words and word[0] in _RESERVED and not word[1]:
                case_pattern = case_pattern and word[0] != "esac"
                start = self.i  # keywords (`then`, `do`, `{`, `!`) start no program
                continue
            words.append(word[0])
        self.flush(words, s[start:comment_at or len(s)], context_stack[-1])
        if self.pending_heredocs:
            self.acc.errors.append("heredoc without body")

    def flush(self, words: list[str], raw: str, context: str) -> None:
        if not words:
            return
        if words[0] in ("for", "case", "select"):
            return  # loop/case headers: their bodies are separate segments
        _segment(words, raw, context, self.acc, self.depth, False)

    def skip_blanks(self) -> None:
        s = self.s
        while self.i < len(s):
            if s[self.i] in " \t":
                self.i += 1
            elif s.startswith("\\\n", self.i):
                self.i += 2
            else:
                break

    def read_word(self, context: str) -> tuple[str, bool]:
        """One word with quotes removed; returns (text, was_quoted)."""
        s = self.s
        out: list[str] = []
        quoted = False
        while self.i < len(s):
            ch = s[self.i]
            if ch in " \t\n;&|()":
                break
            if ch in "<>":
                if not s.startswith("(", self.i + 1):
                    break  # a redirection starts here
                end = self.matching(self.i + 2, ")")
                self.record_subst(self.i, end, "process_substitution")
                out.append(s[self.i:end])
                self.i = end
                continue
            if ch == "\\":
                if self.i + 1 < len(s):
                    if s[self.i + 1] != "\n":
                        out.append(s[self.i + 1])
                    self.i += 2
                else:
                    self.i += 1
                quoted = True
                continue
            if ch == "'":
                end = s.find("'", self.i + 1)
                if end == -1:
                    self.acc.errors.append("unterminated single quote")
                    end = len(s)
                out.append(s[self.i + 1:end])
                self.i = end + 1
                quoted = True
                continue
            if ch == "$" and s.startswith("$'", self.i):
                end = self.i + 2
                while end < len(s) and s[end] != "'":
                    end += 2 if s[end] == "\\" else 1
                out.append(s[self.i + 2:end])
                self.i = end + 1
                quoted = True
                continue
            if ch == '"':
                self.i += 1
                buf: list[str] = []
                while self.i < len(s) and s[self.i] != '"':
                    c = s[self.i]
                    if c == "\\" and self.i + 1 < len(s):
                        nxt = s[self.i + 1]
                        buf.append(nxt if nxt in '"\\$`\n' else c + nxt)
                        self.i += 2
                    elif c == "$" and s.startswith("$(", self.i) and not s.startswith("$((", self.i):
                        end = self.matching(self.i + 2, ")")
                        self.record_subst(self.i, end, "substitution")
                        buf.append(s[self.i:end])
                        self.i = end
                    elif c == "`":
                        end = self.backtick_end(self.i + 1)
                        self.record_subst(self.i, end, "substitution")
                        buf.append(s[self.i:end])
                        self.i = end
                    else:
                        buf.append(c)
                        self.i += 1
                if self.i >= len(s):
                    self.acc.errors.append("unterminated double quote")
                out.append("".join(buf))
                self.i += 1
                quoted = True
                continue
            if ch == "$" and s.startswith("$((", self.i):
                end = self.matching(self.i + 3, "))")
                out.append(s[self.i:end])
                self.i = end
                continue
            if ch == "$" and s.startswith("$(", self.i):
                end = self.matching(self.i + 2, ")")
                self.record_subst(self.i, end, "substitution")
                out.append(s[self.i:end])
                self.i = end
                continue
            if ch == "`":
                end = self.backtick_end(self.i + 1)
                self.record_subst(self.i, end, "substitution")
                out.append(s[self.i:end])
                self.i = end
                continue
            out.append(ch)
            self.i += 1
        return "".join(out), quoted

    def matching(self, j: int, closer: str) -> int:
        """Index just past the ``closer`` that ends a construct opened before ``j``."""
        s = self.s
        level = 1
        while j < len(s):
            if s.startswith(closer, j) and level == 1:
                return j + len(closer)
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == "'":
                k = s.find("'", j + 1)
                j = len(s) if k == -1 else k + 1
                continue
            if c == '"':
                j += 1
                while j < len(s) and s[j] != '"':
                    j += 2 if s[j] == "\\" else 1
                j += 1
                continue
            if c == "(":
                level += 1
            elif c == ")":
                level -= 1
            j += 1
        self.acc.errors.append(f"unterminated {closer!r}")
        return len(s)

    def backtick_end(self, j: int) -> int:
        s = self.s
        while j < len(s) and s[j] != "`":
            j += 2 if s[j] == "\\" else 1
        if j >= len(s):
            self.acc.errors.append("unterminated backtick")
            return len(s)
        return j + 1

    def record_subst(self, start: int, end: int, context: str) -> None:
        text = self.s[start:end]
        self.acc.substitutions.append(text)
        if text.startswith("`"):
            inner = text[1:-1] if text.endswith("`") and len(text) > 1 else text[1:]
        else:
            inner = text[2:-1] if text.endswith(")") else text[2:]
        self.acc.merge(_parse(inner, depth=self.depth + 1, use_bashlex=False), context)

    def read_heredoc_bodies(self) -> None:
        s = self.s
        while self.pending_heredocs:
            delim, strip_tabs = self.pending_heredocs.pop(0)
            body: list[str] = []
            while self.i < len(s):
                end = s.find("\n", self.i)
                line = s[self.i:] if end == -1 else s[self.i:end]
                self.i = len(s) if end == -1 else end + 1
                check = line.lstrip("\t") if strip_tabs else line
                if check == delim:
                    break
                body.append(line + "\n")
            self.acc.heredocs.append("".join(body))
