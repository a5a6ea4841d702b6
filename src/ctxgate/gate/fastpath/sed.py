"""``sed`` scripts that only print: the fast path reads each script as GNU sed compiles it.

Allowed: addresses (``N``, ``$``, ``/re/``, ``\\cREc``, ``first~step``, ``addr,addr``,
``addr,+N``, ``addr,~N``, ``0,/re/``, the flags ``I``/``M``, ``!``), blocks ``{ … }`` and the
commands ``p P = l d D n N g G h H x z q Q F``, ``s/re/repl/flags`` with flags among
``g p i I m M`` and digits, ``y/src/dst/`` and ``#`` comments. Anything else is refused, in
particular ``w W r R e`` and the ``s`` flags ``w`` and ``e`` (they write files or run
commands), and ``a i c b t T : v`` (not modelled). A delimiter is the first unescaped
delimiter character; newer GNU sed skips one inside a bracket expression of a regex
(``s/[/]/g;/w d/p`` writes ``d/p`` with sed 4.9) and older versions do not, so a regex is
accepted only where its bracket expressions close before the delimiter with neither a
backslash nor the delimiter inside: then both readings agree.
"""

from __future__ import annotations

__all__ = ["sed_script_problem"]

_SIMPLE = frozenset("pP=dDnNgGhHxzF")
_WITH_NUMBER = frozenset("qQl")
_S_FLAGS = frozenset("gpiImM0123456789")
_END = frozenset(" \t\n;}")


class _Bad(Exception):
    pass


def sed_script_problem(script: str) -> str | None:
    """Why ``script`` may write or run something (or is not modelled), or ``None``."""
    try:
        _Script(script).run()
    except _Bad as exc:
        return f"sed script {script!r}: {exc}"
    return None


class _Script:
    def __init__(self, s: str) -> None:
        self.s = s
        self.i = 0
        self.depth = 0

    def peek(self) -> str:
        return self.s[self.i:self.i + 1]

    def skip_blanks(self, newlines: bool = False) -> None:
        while self.peek() in (" ", "\t") or (newlines and self.peek() in ("\n", ";")):
            if not self.peek():
                return
            self.i += 1

    def run(self) -> None:
        while True:
            self.skip_blanks(newlines=True)
            if self.i >= len(self.s):
                break
            if self.peek() == "#":
                end = self.s.find("\n", self.i)
                self.i = len(self.s) if end < 0 else end
                continue
            if self.peek() == "}":
                self.close()
                continue
            self.address()
            self.skip_blanks()
            while self.peek() == "!":
                self.i += 1
                self.skip_blanks()
            self.command()
        if self.depth:
            raise _Bad("unmatched '{'")

    def close(self) -> None:
        if not self.depth:
            raise _Bad("unexpected '}'")
        self.depth -= 1
        self.i += 1
        self.end_of_command()

    def address(self) -> None:
        if not self.one_address(first=True):
            return
        self.skip_blanks()
        if self.peek() == ",":
            self.i += 1
            self.skip_blanks()
            if self.peek() in ("+", "~"):
                self.i += 1
                self.number(required=True)
            elif not self.one_address(first=False):
                raise _Bad("missing second address")

    def one_address(self, *, first: bool) -> bool:
        c = self.peek()
        if c.isdigit():
            self.number(required=True)
            if first and self.peek() == "~":
                self.i += 1
                self.number(required=True)
            return True
        if c == "$":
            self.i += 1
            return True
        if c in ("/", "\\"):
            if c == "\\":
                self.i += 1
                c = self.peek()
                if not c or c in "\n\\":
                    raise _Bad("bad regex delimiter")
            self.i += 1
            self.until(c, regex=True)
            while self.peek() in ("I", "M"):
                self.i += 1
            return True
        return False

    def number(self, *, required: bool) -> None:
        start = self.i
        while self.peek().isdigit():
            self.i += 1
        if required and self.i == start:
            raise _Bad("expected a number")

    def until(self, delim: str, *, regex: bool = False) -> None:
        """Move past the next unescaped ``delim`` (sed's ``match_slash``).

        Newer GNU sed skips the delimiter inside a bracket expression of a regex
        (``s/[/]/x/``), older versions do not; a regex is accepted only where both readings
        agree: every ``[`` closes before the delimiter, without a backslash or the delimiter
        inside.
        """
        s, start = self.s, self.i
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "\n":
                raise _Bad("newline inside a regex or replacement")
            self.i += 1
            if c == delim:
                if regex or "[" in s[start:self.i - 1]:
                    _check_brackets(s[start:self.i - 1], delim)
                return
        raise _Bad("unterminated regex or replacement")

    def command(self) -> None:
        c = self.peek()
        if not c:
            raise _Bad("address without a command")
        self.i += 1
        if c == "{":
            self.depth += 1
            return
        if c in _SIMPLE:
            self.end_of_command()
        elif c in _WITH_NUMBER:
            self.skip_blanks()
            self.number(required=False)
            self.end_of_command()
        elif c in ("s", "y"):
            delim = self.peek()
            if not delim or delim in "\n\\":
                raise _Bad(f"bad delimiter for {c!r}")
            self.i += 1
            self.until(delim, regex=True)
            self.until(delim, regex=c == "y")
            if c == "s":
                while self.peek() and self.peek() not in _END:
                    if self.peek() not in _S_FLAGS:
                        raise _Bad(f"s flag {self.peek()!r} writes a file, runs a command or "
                                   "is not modelled")
                    self.i += 1
            self.end_of_command()
        else:
            raise _Bad(f"command {c!r} writes a file, reads one, runs a command or is not "
                       "modelled")

    def end_of_command(self) -> None:
        self.skip_blanks()
        c = self.peek()
        if c in ("", "\n", ";"):
            if c:
                self.i += 1
            return
        if c == "}" or c == "#":
            return
        raise _Bad(f"unexpected {c!r} after a command")


def _check_brackets(text: str, delim: str) -> None:
    """Raise unless each bracket expression in ``text`` closes inside it, plainly."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c != "[":
            i += 1
            continue
        j = i + 1
        if text[j:j + 1] == "^":
            j += 1
        if text[j:j + 1] == "]":
            j += 1
        while True:
            if j >= n:
                raise _Bad("a bracket expression that does not close before the delimiter")
            if text[j] in ("\\", delim):
                raise _Bad("a backslash or the delimiter inside a bracket expression")
            if text[j] == "[" and text[j + 1:j + 2] in (":", ".", "="):
                end = text.find(text[j + 1] + "]", j + 2)
                if end < 0:
                    raise _Bad("an unterminated character class")
                j = end + 2
                continue
            if text[j] == "]":
                break
            j += 1
        i = j + 1
