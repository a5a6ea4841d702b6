"""Which strings of a record are tool output, and so may be cut.

A selector names a node by its path from the record root and says which end of the text to
keep when it is cut::

    toolInvocations[*].result=both        # "<path>=<keep>"; "=both" may be omitted
    content[*].text=head

Path grammar: segments joined by ``.``; a segment is an object key (``result``), ``*`` (any
key), and may carry array steps ``[*]`` (any index) or ``[N]`` (index N). A key containing
``.``, ``[`` or ``=`` cannot be named (use ``*``). A selector selects the node at its path
**and every string below it**: a string result is truncatable, and so is each string inside
a structured result (``{"stdout": ..., "stderr": ...}``, content parts ...). Keys are never
cut, nor numbers, booleans or nulls.

When several selectors match a string, the longest (most specific) one decides the keep mode;
on a tie the first listed wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxgate.errors import ConfigError

__all__ = [
    "ANY_INDEX",
    "ANY_KEY",
    "KEEP_MODES",
    "Selector",
    "parse_selector",
    "parse_selectors",
]

KEEP_MODES = ("head", "tail", "both")
"""Which part of a cut string survives: its start, its end, or both ends."""
ANY_KEY = "*"
"""Path step matching any object key."""
ANY_INDEX = -1
"""Path step matching any array index."""

_SEGMENT = re.compile(r"^([^.\[\]=]*)((?:\[(?:\*|\d+)\])*)$")
_INDEX = re.compile(r"\[(\*|\d+)\]")


@dataclass(frozen=True, kw_only=True)
class Selector:
    """One parsed selector: path steps (``str`` key, ``int`` index, ``ANY_*``) and keep mode."""

    text: str
    """The selector as written (without the keep suffix)."""
    steps: tuple[str | int, ...]
    """Object keys (``str``, ``"*"`` any) and array indexes (``int``, ``-1`` any)."""
    keep: str = "both"
    """``head``, ``tail`` or ``both``."""

    def step_matches(self, position: int, token: str | int) -> bool:
        """Whether path token ``token`` (a key or an index) matches step ``position``."""
        step = self.steps[position]
        if isinstance(token, str):
            return isinstance(step, str) and (step == ANY_KEY or step == token)
        return isinstance(step, int) and (step == ANY_INDEX or step == token)


def parse_selector(spec: str) -> Selector:
    """Parse ``"<path>[=<keep>]"``.

    Raises:
        ConfigError: empty path, bad segment or unknown keep mode; the message shows the spec.
    """
    path, _, keep = spec.strip().partition("=")
    keep = keep.strip() or "both"
    if keep not in KEEP_MODES:
        raise ConfigError(
            f"bound selector {spec!r}: keep mode {keep!r} is not one of {', '.join(KEEP_MODES)}"
        )
    path = path.strip()
    if not path:
        raise ConfigError(f"bound selector {spec!r} has an empty path; e.g. 'content[*].text=both'")
    steps: list[str | int] = []
    for segment in path.split("."):
        match = _SEGMENT.match(segment)
        if match is None or (not match.group(1) and not match.group(2)):
            raise ConfigError(
                f"bound selector {spec!r}: segment {segment!r} is not 'key', '*', 'key[*]' "
                "or 'key[N]'"
            )
        if match.group(1):
            steps.append(match.group(1))
        for index in _INDEX.findall(match.group(2)):
            steps.append(ANY_INDEX if index == "*" else int(index))
    return Selector(text=path, steps=tuple(steps), keep=keep)


def parse_selectors(specs: tuple[str, ...] | list[str]) -> tuple[Selector, ...]:
    """Parse every spec (see :func:`parse_selector`); an empty list selects nothing."""
    return tuple(parse_selector(spec) for spec in specs)
