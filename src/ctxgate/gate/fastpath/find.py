"""``find`` with only the primaries that test and print.

Starting points come first (words that do not start with ``-``, ``(``, ``)``, ``!``, ``,``),
then the expression. Every primary must be in the table below with its argument count; the
writing and running ones (``-delete -exec -execdir -ok -okdir -fprint -fprint0 -fprintf
-fls``) are not, with one exception: ``-exec PROG ARGS… {} ;`` or ``… {} +`` where ``PROG
ARGS`` is itself a command the fast path allows (checked by the caller's ``check_exec``) —
``{}`` stands for a found path, which starts with its starting point and so never with
``-`` (with ``+`` it stands for many paths, so a program with an operand limit is refused).
find does not abbreviate its primaries, so exact matching is the whole story.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ctxgate.gate.fastpath.lexer import Word
from ctxgate.gate.fastpath.options import Refusal

__all__ = ["check_find"]

_ZERO = frozenset("""
-print -print0 -ls -prune -true -false -not -and -or -a -o -empty -readable -writable
-executable -follow -mount -xdev -depth -d -noleaf -quit -nouser -nogroup -daystart
-ignore_readdir_race -noignore_readdir_race -nowarn -warn
""".split())
_ONE = frozenset("""
-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size -mtime
-mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -user -group -uid -gid -perm
-maxdepth -mindepth -links -inum -samefile -regextype -lname -ilname -used -fstype -printf
-newermt -newerct -newerat -newermm -newerma -newermc -neweram -newerac -newercm -newerca
-newerBt -newermB -newerBm
""".split())
_OPERATORS = frozenset({"(", ")", "!", ","})
_GLOBAL_OPTS = frozenset({"-H", "-L", "-P"})


def check_find(args: Sequence[Word],
               check_exec: Callable[[Sequence[Word], bool], None]) -> None:
    """Raise :class:`Refusal` unless ``find ARGS`` only tests and prints."""
    i, n = 0, len(args)
    while i < n and args[i].text in _GLOBAL_OPTS:
        i += 1
    if i < n and args[i].text.startswith("-D") or i < n and args[i].text.startswith("-O"):
        raise Refusal(f"find {args[i].text}: debug and optimisation options are not modelled")
    while i < n and not _is_expression(args[i].text):
        if args[i].glob and not args[i].option_safe:
            raise Refusal(f"find with an unquoted glob {args[i].raw!r} that may expand to a "
                          "primary")
        i += 1
    while i < n:
        w = args[i]
        t = w.text
        if w.glob:
            raise Refusal(f"find with an unquoted glob {w.raw!r} in its expression")
        if t in _OPERATORS or t in _ZERO:
            i += 1
        elif t in _ONE:
            if i + 1 >= n:
                raise Refusal(f"find {t} without its argument")
            if args[i + 1].glob:
                raise Refusal(f"find {t} with an unquoted glob {args[i + 1].raw!r}")
            i += 2
        elif t == "-exec":
            end = i + 1
            while end < n and args[end].text not in (";", "+"):
                end += 1
            if end >= n:
                raise Refusal("find -exec without ';' or '+'")
            inner = args[i + 1:end]
            if not inner:
                raise Refusal("find -exec without a command")
            if args[end].text == "+" and inner[-1].text != "{}":
                raise Refusal("find -exec … + without '{}' before '+'")
            if any(x.glob for x in inner):
                raise Refusal("find -exec with an unquoted glob")
            check_exec(inner, args[end].text == "+")
            i = end + 1
        else:
            raise Refusal(f"find {t}: not an allowed primary (it may write, delete or run "
                          "a program)")


def _is_expression(t: str) -> bool:
    return t.startswith("-") and t != "-" or t in _OPERATORS
