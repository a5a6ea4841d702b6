"""The marker left where tool output was cut, and its parser.

The marker names true UTF-8 byte counts of the string's text (not code units, not escaped
bytes): how many were kept and how many there were, the record bound, which part survived,
and, when an archive stored the full original, the id to re-fetch it with::

    [ctxgate: kept 1046528 of 4194304 bytes of this tool output (head and tail) to fit the
    1048576-byte record bound; full original: ctxgate expand 3fa9c2e1ab12]

(one line). Without an archive the ending is ``; the full original was not stored]``.
``kept`` counts the surviving head plus tail; the marker itself is not counted. The marker
sits after the head (``head``), before the tail (``tail``) or between them (``both``),
separated from kept text by one newline; binary data dropped whole (``none``) is replaced by
the bare marker. :func:`parse_marker` reads it back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Marker", "format_marker", "marker_block", "parse_marker"]

_PART = {"head": "head", "tail": "tail", "both": "head and tail", "drop": "none"}
_KEEP = {label: keep for keep, label in _PART.items()}

_MARKER = re.compile(
    r"\[ctxgate: kept (\d+) of (\d+) bytes of this tool output \((head|tail|head and tail|none)\)"
    r" to fit the (\d+)-byte record bound; "
    r"(?:full original: ctxgate expand ([0-9A-Za-z_-]+)|the full original was not stored)\]"
)


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


def marker_block(
    *, kept_bytes: int, original_bytes: int, bound_bytes: int, keep: str, archive_id: str | None
) -> str:
    """The marker with the newline(s) that separate it from the kept text."""
    text = format_marker(kept_bytes=kept_bytes, original_bytes=original_bytes,
                         bound_bytes=bound_bytes, keep=keep, archive_id=archive_id)
    if keep == "head":
        return "\n" + text
    if keep == "tail":
        return text + "\n"
    if keep == "both":
        return "\n" + text + "\n"
    return text


def parse_marker(text: str) -> Marker | None:
    """The first ctxgate marker in ``text``, or ``None`` when there is none."""
    match = _MARKER.search(text)
    if match is None:
        return None
    kept, original, part, bound, archive_id = match.groups()
    return Marker(kept_bytes=int(kept), original_bytes=int(original), bound_bytes=int(bound),
                  keep=_KEEP[part], archive_id=archive_id)
