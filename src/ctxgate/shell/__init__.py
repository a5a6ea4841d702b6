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

Simple commands (no ``$``, backticks, parentheses, braces, backslashes, heredocs or compound
keywords) skip bashlex: the scanner is exact for them (``parser="simple"``). Modules:
:mod:`.model` (value types), :mod:`.wrappers` (assignments and wrappers), :mod:`.walker`
(bashlex tree), :mod:`.scanner` (the fallback tokenizer), :mod:`.bashlex_tables` (bashlex
imported from cached parser tables: ~15 ms instead of ~0.15-0.25 s per process).

Parsing never raises: a string no parser understands still yields the segments the scanner
could find, with ``parsed_ok=False`` and the reason in ``error``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ctxgate.shell.model import ParsedCommand, Redirection, Segment, _Acc
from ctxgate.shell.scanner import _Scanner
from ctxgate.shell.walker import _BashlexWalker
from ctxgate.shell.wrappers import WRAPPERS

__all__ = [
    "WRAPPERS",
    "ParsedCommand",
    "Redirection",
    "Segment",
    "iter_programs",
    "parse_command",
]
__all__.sort()

_MAX_DEPTH = 8


def parse_command(cmd: str, *, use_bashlex: bool = True) -> ParsedCommand:
    """Parse a shell command string into segments (never raises).

    Simple commands — plain words, quotes, pipes, lists and redirections, with no ``$``,
    backticks, parentheses, braces, backslashes, heredocs or compound keywords — are parsed
    by the scanner alone, which is exact for that subset (``parser="simple"``,
    ``parsed_ok=True``); this keeps even bashlex's cached import off the common path.

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


def _parse(cmd: str, *, depth: int, use_bashlex: bool) -> ParsedCommand:
    acc = _Acc()
    if depth > _MAX_DEPTH:
        return ParsedCommand(source=cmd, parsed_ok=False, parser="fallback",
                             error=f"nesting deeper than {_MAX_DEPTH} levels not parsed")
    bash_error = None
    if use_bashlex and cmd.strip():
        try:
            from ctxgate.shell.bashlex_tables import load_bashlex

            trees = load_bashlex().parse(_unquote_delimiters(cmd))
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


_QUOTED_DELIMITER = re.compile(r"(<<-?[ \t]*)('([A-Za-z_][\w.-]*)'|\"([A-Za-z_][\w.-]*)\"|"
                               r"\\([A-Za-z_][\w.-]*))")


def _unquote_delimiters(cmd: str) -> str:
    """``cmd`` with each quoted here-doc delimiter (``<< 'EOF'``, ``<< "EOF"``, ``<< \\EOF``)
    written bare and padded to the same length, for bashlex, which looks for the quotes on
    the closing line and fails ("delimited by end-of-file"). Offsets are unchanged, so the
    walker still reads the quoted delimiter in the original text (the body stays literal)."""
    if "<<" not in cmd:
        return cmd

    def bare(m: re.Match[str]) -> str:
        word = m.group(3) or m.group(4) or m.group(5)
        return m.group(1) + word + " " * (len(m.group(2)) - len(word))

    return _QUOTED_DELIMITER.sub(bare, cmd)


def _finish(cmd: str, acc: _Acc, *, parsed_ok: bool, parser: str) -> ParsedCommand:
    return ParsedCommand(
        source=cmd, segments=tuple(acc.segments), redirections=tuple(acc.redirections),
        substitutions=tuple(acc.substitutions), heredocs=tuple(acc.heredocs),
        literal_heredocs=tuple(acc.literal_heredocs),
        parsed_ok=parsed_ok, parser=parser, error="; ".join(acc.errors) or None,
    )
