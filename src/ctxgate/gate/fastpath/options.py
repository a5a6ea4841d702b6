"""Option parsing as GNU ``getopt_long`` does it, against an explicit per-program table.

A :class:`Spec` lists every option a program may get on the fast path: short flags, short
options that take an argument, and long options matched **exactly** (GNU accepts any unique
prefix, so ``sort --out=f`` means ``--output=f``; here an abbreviation is simply not in the
table and the command goes to the model). Clusters are split letter by letter (``date -us…``
is ``-u -s…``). Options after operands count (GNU permutes arguments), ``--`` ends options.

Globs: an unquoted glob word whose expansions could start with ``-`` (its first character is
a glob character or ``-``) is refused unless it follows ``--``, or it is ``--name=PATTERN``
with a literal ``--name=`` and ``--name`` takes a value. A glob word may also expand to many
words, so programs with an operand limit refuse globs altogether.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ctxgate.gate.fastpath.lexer import Word

__all__ = ["Parsed", "Refusal", "Spec", "parse_options", "spec"]

_NUMERIC = re.compile(r"-\d+")


class Refusal(Exception):
    """The fast path cannot prove the command harmless; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Parsed:
    """The options (``-x``/``--name`` with their values) and operands of one command."""

    options: tuple[tuple[str, str | None], ...]
    operands: tuple[Word, ...]


@dataclass(frozen=True)
class Spec:
    """What the fast path allows a program: see :func:`spec` for the compact form."""

    short: frozenset[str] = frozenset()
    short_arg: frozenset[str] = frozenset()
    short_opt: frozenset[str] = frozenset()
    """Short options whose argument is optional: only the rest of the cluster is the value."""
    long: frozenset[str] = frozenset()
    long_arg: frozenset[str] = frozenset()
    long_opt: frozenset[str] = frozenset()
    long_arg_separate: bool = True
    """``--opt VALUE`` takes the next word (GNU getopt); else only ``--opt=VALUE`` is allowed."""
    numeric: bool = False
    """``-NUM`` is an option (``head -20``)."""
    max_operands: int | None = None
    """Operands past this many are output files (``uniq in out``): refused, and so are globs."""
    xargs_ok: bool = False
    """No option or operand of this program writes or runs anything, so ``xargs`` may feed it."""
    check: Callable[[Parsed], str | None] | None = field(default=None, compare=False)
    """A further check on the parsed command; returns why it is refused, or ``None``."""


def spec(short: str = "", short_arg: str = "", long: str = "", long_arg: str = "",
         long_opt: str = "", short_opt: str = "", **kw) -> Spec:
    """A :class:`Spec` from space-separated long names (without ``--``) and letter strings."""
    overlap = set(short) & (set(short_arg) | set(short_opt)) | set(short_arg) & set(short_opt)
    if overlap:
        raise ValueError(f"option letters listed twice: {sorted(overlap)}")
    return Spec(short=frozenset(short), short_arg=frozenset(short_arg),
                short_opt=frozenset(short_opt),
                long=frozenset(f"--{n}" for n in long.split()),
                long_arg=frozenset(f"--{n}" for n in long_arg.split()),
                long_opt=frozenset(f"--{n}" for n in long_opt.split()), **kw)


def parse_options(name: str, sp: Spec, args: Sequence[Word]) -> Parsed:
    """Parse ``args`` of program ``name`` against ``sp``; raise :class:`Refusal` if not allowed."""
    options: list[tuple[str, str | None]] = []
    operands: list[Word] = []
    i, n, ended = 0, len(args), False
    while i < n:
        w = args[i]
        t = w.text
        i += 1
        if w.glob and sp.max_operands is not None:
            raise Refusal(f"{name} with a glob {w.raw!r}: its expansion may add an output file")
        if ended:
            operands.append(w)
            continue
        if w.glob and not w.option_safe:
            head = w.raw.split("=", 1)[0]
            if "=" in w.raw and head.startswith("--") and not set(head) & set("*?[\\'\""):
                if head not in sp.long_arg and head not in sp.long_opt:
                    raise Refusal(f"{name} {head}: not an allowed option")
                options.append((head, t.split("=", 1)[1]))
                continue
            raise Refusal(f"{name} with an unquoted glob {w.raw!r} that may expand to an option")
        if t == "--":
            ended = True
            continue
        if t.startswith("--"):
            opt, eq, value = t.partition("=")
            if opt in sp.long and not eq:
                options.append((opt, None))
            elif opt in sp.long_opt:
                options.append((opt, value if eq else None))
            elif opt in sp.long_arg:
                if not eq:
                    if not sp.long_arg_separate:
                        raise Refusal(f"{name} {opt} VALUE: only {opt}=VALUE is modelled")
                    value = _value(name, opt, args, i)
                    i += 1
                options.append((opt, value))
            else:
                raise Refusal(f"{name} {opt}: not an allowed option (long options must be "
                              "spelled in full)")
            continue
        if t.startswith("-") and t != "-":
            if sp.numeric and _NUMERIC.fullmatch(t):
                options.append(("-n", t[1:]))
                continue
            j = 1
            while j < len(t):
                c = t[j]
                if c in sp.short:
                    options.append((f"-{c}", None))
                    j += 1
                elif c in sp.short_opt:
                    options.append((f"-{c}", t[j + 1:] or None))
                    break
                elif c in sp.short_arg:
                    value = t[j + 1:]
                    if not value:
                        value = _value(name, f"-{c}", args, i)
                        i += 1
                    options.append((f"-{c}", value))
                    break
                else:
                    raise Refusal(f"{name} -{c}: not an allowed option")
            continue
        operands.append(w)
    if sp.max_operands is not None and len(operands) > sp.max_operands:
        raise Refusal(f"{name} with {len(operands)} operands (more than {sp.max_operands} "
                      "writes a file)")
    parsed = Parsed(options=tuple(options), operands=tuple(operands))
    if sp.check is not None:
        why = sp.check(parsed)
        if why:
            raise Refusal(why)
    return parsed


def _value(name: str, opt: str, args: Sequence[Word], i: int) -> str:
    """The next word as the value of ``opt``; a glob there could expand to extra options."""
    if i >= len(args):
        raise Refusal(f"{name} {opt} without its value")
    if args[i].glob:
        raise Refusal(f"{name} {opt} with a glob value {args[i].raw!r}")
    return args[i].text
