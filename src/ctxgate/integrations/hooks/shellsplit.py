"""Wrap only the output-producing parts of a shell command, so the harness's shell keeps its state.

A harness such as Claude Code runs each ``Bash`` call in its own shell and carries the working
directory over to the next call. Rewriting a whole command into ``ctxgate run -c CMD`` runs it
in a child shell, so a ``cd`` in it no longer reaches the harness. :func:`wrap_outputs`
splits the command at its top-level list operators (``&&``, ``||``, ``;``, newlines) and wraps
only runs of elements that do not change the shell's state:

- ``cd sub && make`` → ``cd sub && ctxgate run -c make``;
- ``export X=1 && pytest`` → ``export X=1 && ctxgate run -c pytest`` (a child inherits exported
  variables, the directory and the umask, so elements after them may still be wrapped);
- after an element that sets state a child would *not* see (a plain assignment, ``alias``,
  a function definition, ``set``/``shopt``, ``source`` of anything but a virtualenv's
  ``activate``, ``eval``, ``read`` …), nothing more is wrapped: ``X=1; echo $X`` stays as it is.

Anything the scanner is unsure of (a heredoc, an unbalanced quote, ``case`` arms) is one
element, and an element that contains a state-changing word anywhere is left in the
harness's shell. Leaving an element unwrapped costs only its digest, never its meaning.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Element", "split_list", "wrap_outputs"]

INHERITED = frozenset({"cd", "pushd", "popd", "export", "unset", "umask"})
"""Builtins whose effect a child process inherits (cwd, environment, umask)."""

LOCAL = frozenset({
    "alias", "unalias", "set", "shopt", "declare", "typeset", "local", "readonly", "source",
    ".", "eval", "exec", "trap", "read", "mapfile", "readarray", "let", "hash", "enable",
    "builtin", "function", "history", "bg", "fg", "jobs", "wait", "disown", "ulimit", "getopts",
    "complete", "compgen", "dirs", "shift", "return", "exit", "logout", "times", "suspend",
    "conda", "nvm", "pyenv", "rbenv", "direnv", "deactivate", "setopt", "unsetopt", "autoload",
})
"""Words that change state only the harness's own shell would keep."""

QUIET = frozenset({"test", "[", "[[", "true", "false", ":"})
"""Programs that print nothing and change nothing: left in the shell, not worth a wrapper."""

_OPEN = frozenset({"if", "for", "while", "until", "case", "select"})
_CLOSE = frozenset({"fi", "done", "esac"})
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_WORD = re.compile(r"[^\s;&|()<>{}]+")
_VENV_ACTIVATE = re.compile(r"^(?:source|\.)\s+\S*activate\s*$")
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"|(?:^|(?<=\s))#[^\n]*")
"""Quoted strings and comments: data, never a command word."""


@dataclass(frozen=True)
class Element:
    """One top-level list element: its text and the operator after it (``""`` at the end)."""

    text: str
    op: str


def split_list(command: str) -> list[Element] | None:
    """The top-level list elements of ``command``, or ``None`` when it cannot be split safely.

    Quotes, ``$(…)``, backticks, parentheses, braces and compound commands (``if … fi``) are
    kept whole. A heredoc (``<<``), a background ``&`` or a line continuation makes the
    answer ``None``: the caller then treats the command as one element.
    """
    elements: list[Element] = []
    depth = 0  # (), {}, $()
    kw_depth = 0
    start = 0
    i = 0
    n = len(command)
    at_word_start = True
    cmd_position = True
    while i < n:
        c = command[i]
        if c == "\\":
            if i + 1 < n and command[i + 1] == "\n":
                return None
            i += 2
            at_word_start = False
            continue
        if c == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return None
            i = end + 1
            at_word_start = cmd_position = False
            continue
        if c == '"' or c == "`":
            j = i + 1
            while j < n and command[j] != c:
                j += 2 if command[j] == "\\" else 1
            if j >= n:
                return None
            i = j + 1
            at_word_start = cmd_position = False
            continue
        if c == "#" and at_word_start:
            end = command.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "<" and command.startswith("<<", i):
            return None
        if c in "({":
            depth += 1
            i += 1
            at_word_start = cmd_position = True
            continue
        if c in ")}":
            depth -= 1
            if depth < 0:
                return None
            i += 1
            at_word_start = True
            cmd_position = False
            continue
        if depth == 0 and kw_depth == 0:
            op = ""
            if command.startswith(("&&", "||"), i):
                op = command[i:i + 2]
            elif c in ";\n":
                if command.startswith(";;", i):
                    return None
                op = c
            elif c == "&" and not command.startswith("&>", i) and (i == 0 or command[i - 1] not in "<>|"):
                return None  # a background job: leave the whole command as it is
            if op:
                elements.append(Element(command[start:i], op))
                i += len(op)
                start = i
                at_word_start = cmd_position = True
                continue
        if c.isspace():
            i += 1
            at_word_start = True
            continue
        if c in ";|&" or (c == "\n"):
            i += 1
            at_word_start = cmd_position = True
            continue
        m = _WORD.match(command, i)
        word = m.group(0) if m else c
        if cmd_position and at_word_start:
            if word in _OPEN:
                kw_depth += 1
            elif word in _CLOSE:
                kw_depth -= 1
                if kw_depth < 0:
                    return None
            cmd_position = word in ("then", "do", "else", "elif", "!", "time") or word in _OPEN
        i += len(word)
        at_word_start = False
    if depth != 0 or kw_depth != 0:
        return None
    elements.append(Element(command[start:], ""))
    return elements


def _kind(text: str) -> str:
    """``"inherited"``, ``"local"``, ``"quiet"``, ``"empty"`` or ``"output"`` for one element."""
    body = text.strip()
    if not body:
        return "empty"
    if _VENV_ACTIVATE.match(body):
        return "inherited"  # a virtualenv's activate exports PATH and VIRTUAL_ENV
    unquoted = _QUOTED.sub(" _ ", body)
    words = _WORD.findall(unquoted)
    if not words:
        return "output"
    if _ASSIGN.match(words[0]) and all(_ASSIGN.match(w) for w in words):
        return "local"  # X=1 (no command): a shell variable
    if re.search(r"^\s*(?:function\s+)?[A-Za-z_][\w.-]*\s*\(\s*\)", body) or "((" in unquoted:
        return "local"
    if any(w in LOCAL for w in words) or ("printf" in words and "-v" in words):
        return "local"  # `printf -v NAME` assigns a shell variable
    if words[0] in QUIET and not any(w in INHERITED for w in words):
        return "quiet"
    if words[0] in INHERITED and not any(w in INHERITED for w in words[1:] if w != words[0]):
        return "inherited"
    if any(w in INHERITED for w in words):
        return "local"  # e.g. `if …; then cd x; fi`: the cd must stay in the harness's shell
    return "output"


def wrap_outputs(command: str, wrap: Callable[[str], str]) -> str | None:
    """``command`` with its output-producing runs replaced by ``wrap(run)``, or ``None`` when
    nothing can be wrapped without changing what the harness's shell keeps.

    A command with no state-changing element is wrapped whole (``wrap(command)``).
    """
    elements = split_list(command)
    if elements is None:
        return wrap(command) if _kind(command) == "output" else None
    kinds = [_kind(e.text) for e in elements]
    if all(k in ("output", "empty") for k in kinds):
        return wrap(command)
    if all(k in ("quiet", "empty") for k in kinds):
        return None
    out: list[str] = []
    run: list[Element] = []
    wrapped_any = False
    frozen = False  # after shell-local state, a child shell would no longer see the same world

    def flush() -> None:
        nonlocal wrapped_any
        if not run:
            return
        text = "".join(e.text + e.op for e in run[:-1]) + run[-1].text
        lead = text[:len(text) - len(text.lstrip())]
        trail = text[len(text.rstrip()):]
        out.append(lead + wrap(text.strip()) + trail + run[-1].op)
        wrapped_any = True
        run.clear()

    for element, kind in zip(elements, kinds, strict=True):
        if kind == "output" and not frozen:
            run.append(element)
            continue
        flush()
        out.append(element.text + element.op)
        if kind == "local":
            frozen = True
    flush()
    return "".join(out) if wrapped_any else None
