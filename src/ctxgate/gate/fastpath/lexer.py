"""A strict tokenizer for the small subset of bash the read-only fast path models exactly.

It splits a command line into simple commands, their words (after quote removal, as bash
produces them) and their redirections, and raises :class:`LexError` for anything outside
the subset, so a command the fast path cannot model goes to the decision model:

- words: unquoted characters from a safe set (``~`` only where bash keeps it literal),
  ``'single quotes'``, ``"double quotes"`` without ``$`` or backtick (a backslash inside
  them is removed only before ``$ ` " \\``, as bash does, and kept before anything else),
  and ``\\X`` outside quotes (``X`` literal);
- unquoted ``* ? [`` make a word a glob (:attr:`Word.glob`); the caller decides where a
  glob may stand; a leading ``~`` only as ``~`` or ``~/…`` (``$HOME``); the word ``{}`` is
  literal;
- operators ``|``, ``&&``, ``||``, ``;`` and newline; ``#`` at a word start begins a comment
  that runs to the end of the line;
- redirections: ``>``/``>>``/``&>``/``&>>`` and ``N>``/``N>>`` only to ``/dev/null``,
  ``N>&M`` with ``N`` and ``M`` in 1 and 2, and ``< file``/``0< file``;
- everything else is refused: ``$`` in any form, backticks, ``( )``, unquoted ``{ }`` and
  ``!`` (except ``!`` as a word of its own, which only a command's first word makes special),
  heredocs and here-strings, ``&`` (background), ``|&``, ``;;``, backslash-newline,
  unterminated quotes, other redirections, control characters.

A digit run directly before ``<`` or ``>`` is a descriptor, as in bash (``echo 2>x`` redirects
descriptor 2; ``echo a2>x`` passes ``a2``); ``> 2`` writes a file named ``2`` and is refused
like any other target but ``/dev/null``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GLOB_CHARS", "LexError", "Redirect", "SimpleCommand", "Word", "lex"]

GLOB_CHARS = frozenset("*?[")
"""Characters that make an unquoted word a pathname-expansion pattern."""

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                  "_-./,:=+@%^]")
"""Unquoted characters that are plain literal characters to bash in every word position."""

_DQ_ESCAPABLE = frozenset('$`"\\')
_BLANK = frozenset(" \t")


class LexError(ValueError):
    """The command uses shell syntax outside the modelled subset; ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Word:
    """One shell word: its value after quote removal, its source text, and how it expands."""

    text: str
    raw: str
    glob: bool = False
    """It has an unquoted ``*``, ``?`` or ``[``: bash may replace it by matching file names."""
    quoted: bool = False

    @property
    def option_safe(self) -> bool:
        """Whether no expansion of the word can start with ``-`` (or differ from ``text``)."""
        if not self.glob:
            return True
        return self.text[:1] not in GLOB_CHARS and not self.text.startswith("-") and \
            not self.raw.startswith(("*", "?", "["))


@dataclass(frozen=True)
class Redirect:
    """A redirection the subset allows: ``op`` is one of ``> >> &> &>> >& <``."""

    fd: int | None
    op: str
    target: str


@dataclass(frozen=True)
class SimpleCommand:
    """Words and redirections of one simple command, and the operator that follows it."""

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    operator: str
    """``|``, ``&&``, ``||``, ``;`` (also for a newline) or ``""`` at the end."""


def lex(command: str) -> tuple[SimpleCommand, ...]:
    """Split ``command`` into simple commands, or raise :class:`LexError` with the reason."""
    return _Lexer(command).run()


class _Lexer:
    def __init__(self, src: str) -> None:
        self.src = src
        self.i = 0
        self.commands: list[SimpleCommand] = []
        self.words: list[Word] = []
        self.redirects: list[Redirect] = []

    # -- structure ---------------------------------------------------------------------------
    def run(self) -> tuple[SimpleCommand, ...]:
        src, n = self.src, len(self.src)
        for ch in src:
            if ch != "\n" and ch != "\t" and (ord(ch) < 32 or ord(ch) == 127):
                raise LexError(f"control character {ch!r}")
        while self.i < n:
            ch = src[self.i]
            if ch in _BLANK:
                self.i += 1
            elif ch == "#":
                end = src.find("\n", self.i)
                self.i = n if end < 0 else end
            elif ch == "\n" or ch == ";":
                if src.startswith(";;", self.i) or src.startswith(";&", self.i):
                    raise LexError("case terminator ';;' or ';&'")
                self.i += 1
                self._end(";", allow_empty=ch == "\n")
            elif ch == "|":
                if src.startswith("||", self.i):
                    self.i += 2
                    self._end("||")
                elif src.startswith("|&", self.i):
                    raise LexError("'|&' pipes standard error")
                else:
                    self.i += 1
                    self._end("|")
            elif ch == "&":
                if src.startswith("&&", self.i):
                    self.i += 2
                    self._end("&&")
                elif src.startswith("&>", self.i):
                    self._redirect(None)
                else:
                    raise LexError("'&' runs a command in the background")
            elif ch in "<>":
                self._redirect(None)
            else:
                self._word()
        if self.words or self.redirects:
            self._end("", allow_empty=False)
        elif self.commands and self.commands[-1].operator in ("|", "&&", "||"):
            raise LexError(f"command line ends with {self.commands[-1].operator!r}")
        if not self.commands:
            raise LexError("no command")
        return tuple(self.commands)

    def _end(self, operator: str, *, allow_empty: bool = False) -> None:
        if not self.words:
            if self.redirects:
                raise LexError("a redirection without a command")
            if allow_empty and (not self.commands or self.commands[-1].operator in (";",)):
                return  # blank line
            if allow_empty and self.commands and self.commands[-1].operator in ("|", "&&",
                                                                                 "||"):
                return  # bash continues a list after '&&' and a newline
            raise LexError(f"{operator or 'end'!r} without a command before it")
        self.commands.append(SimpleCommand(words=tuple(self.words),
                                           redirects=tuple(self.redirects), operator=operator))
        self.words, self.redirects = [], []

    # -- words -------------------------------------------------------------------------------
    def _word(self) -> None:
        word = self._read_word(fd_ok=True)
        if isinstance(word, int):
            self._redirect(word)
            return
        self.words.append(word)

    def _read_word(self, *, fd_ok: bool) -> Word | int:
        """Read one word at ``self.i``; a digit run directly before ``<``/``>`` is a descriptor."""
        src, n, start = self.src, len(self.src), self.i
        out: list[str] = []
        glob = quoted = False
        if src[start] == "~":
            nxt = src[start + 1:start + 2]
            if nxt not in ("", "/", " ", "\t", "\n", ";", "|", "&"):
                raise LexError("tilde expansion other than '~' or '~/'")
            out.append(_home())
            self.i += 1
        while self.i < n:
            ch = src[self.i]
            if ch in _BLANK or ch in "\n;|&<>":
                if ch in "<>" and fd_ok and out and not quoted and self.i > start and \
                        src[start:self.i].isdigit():
                    return int(src[start:self.i]) if len(out) < 4 else _fd_error()
                break
            if ch == "'":
                end = src.find("'", self.i + 1)
                if end < 0:
                    raise LexError("unterminated single quote")
                out.append(src[self.i + 1:end])
                quoted = True
                self.i = end + 1
            elif ch == '"':
                self.i += 1
                out.append(self._double_quoted())
                quoted = True
            elif ch == "\\":
                nxt = src[self.i + 1:self.i + 2]
                if nxt == "":
                    raise LexError("backslash at the end of the command")
                if nxt == "\n":
                    raise LexError("backslash-newline line continuation")
                out.append(nxt)
                quoted = True
                self.i += 2
            elif ch in GLOB_CHARS:
                out.append(ch)
                glob = True
                self.i += 1
            elif ch in _SAFE:
                out.append(ch)
                self.i += 1
            elif ch == "~":
                if "=" in src[start:self.i]:
                    raise LexError("'~' after '=' (bash expands it in assignment-like words)")
                out.append(ch)
                self.i += 1
            elif ch in "{}":
                if src.startswith("{}", self.i) and self.i == start and \
                        _ends_word(src, self.i + 2):
                    out.append("{}")
                    self.i += 2
                else:
                    raise LexError("brace expansion or group '{'/'}'")
            elif ch == "$":
                raise LexError("'$' expansion")
            elif ch == "`":
                raise LexError("backtick command substitution")
            elif ch in "()":
                raise LexError("parenthesis: subshell, function or substitution")
            elif ch == "!":
                if self.i != start or not _ends_word(src, self.i + 1):
                    raise LexError("unquoted '!' inside a word")
                out.append(ch)  # a lone '!' argument (find . ! -name x) is literal
                self.i += 1
            elif ch == "#":
                out.append(ch)  # '#' inside a word is literal
                self.i += 1
            elif ord(ch) > 127 and ch.isprintable():
                out.append(ch)
                self.i += 1
            else:
                raise LexError(f"unquoted {ch!r}")
        raw = src[start:self.i]
        if not raw:
            raise LexError("empty word")
        if raw == "[":
            glob = False  # a lone '[' is no valid pattern: bash keeps it as it is
        return Word(text="".join(out), raw=raw, glob=glob, quoted=quoted)

    def _double_quoted(self) -> str:
        src, n = self.src, len(self.src)
        out: list[str] = []
        while self.i < n:
            ch = src[self.i]
            if ch == '"':
                self.i += 1
                return "".join(out)
            if ch in "$`":
                raise LexError(f"{ch!r} inside double quotes")
            if ch == "\\":
                nxt = src[self.i + 1:self.i + 2]
                if nxt == "\n":
                    raise LexError("backslash-newline inside double quotes")
                if nxt in _DQ_ESCAPABLE and nxt:
                    out.append(nxt)
                    self.i += 2
                    continue
                out.append("\\")
                self.i += 1
                continue
            out.append(ch)
            self.i += 1
        raise LexError("unterminated double quote")

    # -- redirections ------------------------------------------------------------------------
    def _redirect(self, fd: int | None) -> None:
        src = self.src
        for op in ("&>>", "&>", ">>", ">&", ">|", "<<", "<&", "<>", ">", "<"):
            if src.startswith(op, self.i):
                break
        else:  # pragma: no cover - callers only come here on '<', '>' or '&>'
            raise LexError("redirection")
        if op in ("<<", "<&", "<>", ">|"):
            raise LexError(f"redirection {op!r} (heredoc, here-string, descriptor or clobber)")
        if src.startswith("<<<", self.i):
            raise LexError("here-string '<<<'")
        if op.startswith("&") and fd is not None:
            raise LexError("descriptor before '&>'")
        self.i += len(op)
        while self.i < len(src) and src[self.i] in _BLANK:
            self.i += 1
        if self.i >= len(src) or src[self.i] in "\n;|&<>":
            raise LexError(f"redirection {op!r} without a target")
        if src[self.i] in "#(":
            raise LexError(f"redirection {op!r} to {src[self.i]!r}")
        target = self._read_word(fd_ok=False)
        assert isinstance(target, Word)
        if target.glob:
            raise LexError(f"redirection target {target.raw!r} is a glob")
        if op == ">&":
            if fd not in (None, 1, 2) or target.raw not in ("1", "2"):
                raise LexError(f"redirection {fd or ''}>&{target.raw} (only 1>&2 and 2>&1)")
        elif op == "<":
            if fd not in (None, 0):
                raise LexError(f"redirection {fd}< opens another descriptor")
        elif target.text != "/dev/null":
            raise LexError(f"redirection {op} {target.text!r} writes a file")
        self.redirects.append(Redirect(fd=fd, op=op, target=target.text))


def _ends_word(src: str, i: int) -> bool:
    return i >= len(src) or src[i] in " \t\n;|&<>"


def _fd_error() -> int:
    raise LexError("a descriptor number with more than three digits")


def _home() -> str:
    """``~`` expands to ``$HOME``; the fast path only models it when ``HOME`` is a path."""
    import os

    home = os.environ.get("HOME", "")
    if not home.startswith("/"):
        raise LexError("'~' with HOME unset or not absolute")
    return home
