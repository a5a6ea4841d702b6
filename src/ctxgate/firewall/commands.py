"""Dataset commands: programs whose stdout the caller already narrowed, detected shell-aware.

Head/tail elision of a query result deletes exactly the interior rows where the answer lives
(lean-ctx #1260), so output of ``sqlite3``, ``psql``, ``duckdb``, ``jq`` … is delivered
verbatim (up to ``verbatim_max_tokens``). Detection uses :mod:`ctxgate.shell`: every segment
of every pipeline, list, subshell and substitution counts, environment assignments and
wrappers (``sudo``, ``env``, ``time``, ``timeout N``, ``xargs`` …) are skipped, the program
path is reduced to its basename, and quoted text or heredoc bodies never match.

``gh`` counts only with ``--json``/``--jq``/``-q`` (plain ``gh`` output is prose).

With ``line_selectors`` on, explicit line selections are treated the same way (lean-ctx #1084,
#842): ``sed -n`` with an address, ``head``/``tail`` with an explicit count ending the pipeline,
``awk`` programs selecting ``NR``, and a bare ``cat FILE`` (one file, no pipe).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # ctxgate.shell (and bashlex) load only when a command needs parsing
    from ctxgate.shell import ParsedCommand, Segment

__all__ = ["CommandClass", "classify_command", "is_dataset_command", "is_search_command"]

_GH_DATA_FLAGS = ("--json", "--jq", "-q", "--template", "-t")
_SED_ADDRESS = re.compile(r"^\s*(\d+|\$|/)")
_AWK_NR = re.compile(r"\bNR\s*(==|<=|>=|<|>|%)")
_COUNT = re.compile(r"^-?\d+$")
_SELECTOR_PROGRAMS = frozenset({"sed", "head", "tail", "awk", "gawk", "mawk", "cat"})


@dataclass(frozen=True, kw_only=True, slots=True)
class CommandClass:
    """Why a command's output counts as already narrowed, if it does."""

    kind: str
    """``"dataset"``, ``"line_selection"``, ``"file_read"`` or ``""`` (ordinary output)."""
    program: str = ""
    """The program that made it so (``"psql"``, ``"sed"``, ``"cat"``)."""

    def __bool__(self) -> bool:
        return bool(self.kind)

    def describe(self) -> str:
        """Human text for ``--explain``."""
        if self.kind == "dataset":
            return f"dataset command `{self.program}`"
        if self.kind == "line_selection":
            return f"explicit line selection (`{self.program}`)"
        if self.kind == "file_read":
            return "bare `cat FILE` (a file read)"
        return "ordinary command"


def is_dataset_command(command: str | None, dataset_commands: Iterable[str]) -> str | None:
    """The dataset program run by ``command`` in any segment, or None.

    Args:
        command: a shell command string (``None`` or empty → None).
        dataset_commands: program basenames (``gh`` is special: only with data flags).
    """
    if not command:
        return None
    names = frozenset(dataset_commands)
    if not names or not any(name in command for name in names):
        return None
    from ctxgate.shell import parse_command

    return _dataset_program(parse_command(command), names)


def classify_command(
    command: str | None, dataset_commands: Iterable[str], *, line_selectors: bool = True
) -> CommandClass:
    """Classify ``command``: dataset program, explicit line selection, bare file read, or none."""
    if not command or not command.strip():
        return CommandClass(kind="")
    names = frozenset(dataset_commands)
    candidates = names | (_SELECTOR_PROGRAMS if line_selectors else frozenset())
    if not any(name in command for name in candidates):
        return CommandClass(kind="")  # no program of interest is even spelled: skip parsing
    from ctxgate.shell import parse_command

    parsed = parse_command(command)
    program = _dataset_program(parsed, names)
    if program:
        return CommandClass(kind="dataset", program=program)
    if line_selectors:
        return _line_selection(parsed)
    return CommandClass(kind="")


def _dataset_program(parsed: ParsedCommand, names: frozenset[str]) -> str | None:
    for seg in parsed.segments:
        if seg.program not in names:
            continue
        if seg.program == "gh" and not _gh_data(seg):
            continue
        return seg.program
    return None


def _gh_data(seg: Segment) -> bool:
    return any(
        arg in _GH_DATA_FLAGS or arg.startswith(("--json=", "--jq=", "--template="))
        for arg in seg.args
    )


_SEARCH_PROGRAMS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git"})


def is_search_command(command: str | None) -> bool:
    """Whether the last command of the pipeline is a search (``grep -rn``, ``rg``, ``git
    grep`` …) whose output lines are ``path:…`` matches, worth grouping per file."""
    if not command or not any(name in command for name in _SEARCH_PROGRAMS):
        return False
    from ctxgate.shell import parse_command

    top = [s for s in parse_command(command).segments if s.context in ("top", "subshell")]
    if not top or top[-1].program not in _SEARCH_PROGRAMS:
        return False
    last = top[-1]
    return last.program != "git" or (len(last.args) > 0 and last.args[0] == "grep")


def _line_selection(parsed: ParsedCommand) -> CommandClass:
    top = [s for s in parsed.segments if s.context in ("top", "subshell")]
    if not top:
        return CommandClass(kind="")
    last = top[-1]
    if last.program == "sed" and _sed_selects(last):
        return CommandClass(kind="line_selection", program="sed -n")
    if last.program in ("head", "tail") and _explicit_count(last):
        return CommandClass(kind="line_selection", program=f"{last.program} -n")
    if last.program in ("awk", "gawk", "mawk") and any(_AWK_NR.search(a) for a in last.args):
        return CommandClass(kind="line_selection", program=last.program)
    if (len(top) == 1 and last.program == "cat" and len(last.args) == 1
            and not last.args[0].startswith("-") and not parsed.redirections
            and not parsed.substitutions):
        return CommandClass(kind="file_read", program="cat")
    return CommandClass(kind="")


def _sed_selects(seg: Segment) -> bool:
    args = seg.args
    if not any(a == "-n" or (a.startswith("-") and not a.startswith("--") and "n" in a[1:])
               for a in args):
        return False
    scripts = [a for a in args if not a.startswith("-")]
    return bool(scripts) and _SED_ADDRESS.match(scripts[0]) is not None


def _explicit_count(seg: Segment) -> bool:
    args = seg.args
    for k, arg in enumerate(args):
        if arg in ("-n", "--lines") and k + 1 < len(args):
            return True
        if arg.startswith(("--lines=",)) or (arg.startswith("-n") and len(arg) > 2):
            return True
        if _COUNT.match(arg) and arg.startswith("-"):  # head -20
            return True
    return False
