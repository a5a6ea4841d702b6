"""The marker left where tool output was cut, and its parser: anchored, so it cannot be forged.

The marker names true UTF-8 byte counts of the string's text (not code units, not escaped
bytes): how many were kept and how many there were, the record bound, which part survived,
and, when an archive stored the full original, the id to re-fetch it with::

    [ctxgate: kept 1046528 of 4194304 bytes of this tool output (head and tail) to fit the
    1048576-byte record bound; full original: ctxgate expand 3fa9c2e1ab12]

(one line). Without an archive the ending is ``; the full original was not stored]``.
``kept`` counts the surviving head plus tail; nothing the bound adds is counted.

**Where it is written (the anchor).** The marker is always the *last line* of a cut string,
so text the tool produced can never come after it:

- ``head``: ``<head>\\n<marker>``
- ``tail``: ``<gap>\\n<tail>\\n<marker>``
- ``both``: ``<head>\\n<gap>\\n<tail>\\n<marker>``
- ``drop`` (binary data dropped whole): ``<marker>``

where ``<gap>`` is the fixed line :data:`GAP_LINE` showing the reader where text was removed
(it carries no numbers and is never parsed).

**How it is read.** :func:`parse_marker` looks only at the text after the last newline (the
whole string for ``drop``), which must be exactly what :func:`format_marker` writes for the
numbers it names (no other spelling, no leading zeros, ASCII digits only), and checks the
layout: the ``gap`` line where the keep mode puts it, ``kept`` equal to the UTF-8 bytes of
the text left around them, and ``kept < original``. Marker-shaped text anywhere else in the
string — tool output quoting a marker, a record that was bounded before — is ignored. Text
alone cannot tell a cut string from an uncut tool output that itself ends in a
self-consistent marker line; which strings the bound cut is said by ``BoundResult.cuts``,
and :meth:`ctxgate.bound.BoundResult.marker` reads a marker only where a cut was made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxgate.bound.measure import text_bytes

__all__ = ["GAP_LINE", "Marker", "cut_string", "format_marker", "marker_block", "parse_marker"]

_PART = {"head": "head", "tail": "tail", "both": "head and tail", "drop": "none"}
_KEEP = {label: keep for keep, label in _PART.items()}

GAP_LINE = "[ctxgate: text cut here; the marker at the end says how much]"
"""The line put where text was removed from the start or the middle (``tail``/``both``)."""

_NUMBER = r"(0|[1-9][0-9]*)"
_MARKER = re.compile(
    rf"\[ctxgate: kept {_NUMBER} of {_NUMBER} bytes of this tool output "
    r"\((head|tail|head and tail|none)\)"
    rf" to fit the {_NUMBER}-byte record bound; "
    r"(?:full original: ctxgate expand ([0-9A-Za-z_-]+)|the full original was not stored)\]",
    re.ASCII,
)
_GAP_BYTES = text_bytes(GAP_LINE) + 1  # with its newline


@dataclass(frozen=True, kw_only=True)
class Marker:
    """What a marker says."""

    kept_bytes: int
    """UTF-8 bytes of the original text still present (head plus tail)."""
    original_bytes: int
    """UTF-8 bytes of the original text."""
    bound_bytes: int
    """The record bound the cut was made for (bytes)."""
    keep: str
    """``head``, ``tail``, ``both`` or ``drop``."""
    archive_id: str | None
    """Id (short form) of the stored full original, or ``None``."""


def format_marker(
    *, kept_bytes: int, original_bytes: int, bound_bytes: int, keep: str, archive_id: str | None
) -> str:
    """The marker text (one line, no surrounding newlines)."""
    tail = (f"full original: ctxgate expand {archive_id}" if archive_id
            else "the full original was not stored")
    return (
        f"[ctxgate: kept {kept_bytes} of {original_bytes} bytes of this tool output "
        f"({_PART[keep]}) to fit the {bound_bytes}-byte record bound; {tail}]"
    )


def cut_string(
    head: str, tail: str, *, kept_bytes: int, original_bytes: int, bound_bytes: int, keep: str,
    archive_id: str | None,
) -> str:
    """The cut string: the kept text laid out around the gap line, the marker last."""
    marker = format_marker(kept_bytes=kept_bytes, original_bytes=original_bytes,
                           bound_bytes=bound_bytes, keep=keep, archive_id=archive_id)
    if keep == "head":
        return f"{head}\n{marker}"
    if keep == "tail":
        return f"{GAP_LINE}\n{tail}\n{marker}"
    if keep == "both":
        return f"{head}\n{GAP_LINE}\n{tail}\n{marker}"
    return marker


def marker_block(
    *, kept_bytes: int, original_bytes: int, bound_bytes: int, keep: str, archive_id: str | None
) -> str:
    """Everything the bound adds to a cut string (gap line, newlines, marker), concatenated.

    Its escaped size is what the cut costs beyond the kept text (escaping is per code point,
    so the size of the parts' concatenation is the sum of their sizes).
    """
    return cut_string("", "", kept_bytes=kept_bytes, original_bytes=original_bytes,
                      bound_bytes=bound_bytes, keep=keep, archive_id=archive_id)


def parse_marker(text: str) -> Marker | None:
    """The marker the bound wrote at the end of ``text``, or ``None``.

    Only the last line is read, and only when the string is laid out as the bound lays out a
    cut (see the module docstring); marker-shaped text elsewhere is never returned.
    """
    body, newline, last = text.rpartition("\n")
    if not last.startswith("[ctxgate: kept "):
        return None
    match = _MARKER.fullmatch(last)
    if match is None:
        return None
    kept_s, original_s, part, bound_s, archive_id = match.groups()
    marker = Marker(kept_bytes=int(kept_s), original_bytes=int(original_s),
                    bound_bytes=int(bound_s), keep=_KEEP[part], archive_id=archive_id)
    if marker.kept_bytes >= marker.original_bytes:
        return None  # a cut always removes something
    keep = marker.keep
    if keep == "drop":
        present = 0 if not newline else -1  # the bare marker is the whole string
    elif not newline:
        return None
    elif keep == "head":
        present = text_bytes(body)
    elif keep == "tail":
        present = (text_bytes(body) - _GAP_BYTES
                   if body.startswith(GAP_LINE) and body[len(GAP_LINE):len(GAP_LINE) + 1] == "\n"
                   else -1)
    else:  # both: the gap line sits between head and tail, each side of it a newline
        present = text_bytes(body) - _GAP_BYTES - 1 if f"\n{GAP_LINE}\n" in body else -1
    return marker if present == marker.kept_bytes else None
