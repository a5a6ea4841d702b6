"""RFC 6901 JSON pointers: building, parsing, validating and matching full views.

A pointer is ``""`` (the whole document) or a sequence of ``/segment``; inside a segment
``~`` is written ``~0`` and ``/`` is written ``~1``, so the key ``a/b`` is ``"/a~1b"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ctxgate.errors import ConfigError

__all__ = [
    "escape_segment",
    "is_full_view",
    "join",
    "resolve",
    "split",
    "validate_pointer",
]

_BAD_TILDE = re.compile(r"~(?![01])")


def escape_segment(segment: str) -> str:
    """One reference token, escaped (``~`` → ``~0`` first, then ``/`` → ``~1``)."""
    return segment.replace("~", "~0").replace("/", "~1")


def join(pointer: str, segment: str | int) -> str:
    """``pointer`` extended by one segment."""
    return f"{pointer}/{escape_segment(str(segment))}"


def validate_pointer(pointer: str, *, what: str = "JSON pointer") -> str:
    """Return ``pointer`` if it is a valid RFC 6901 pointer.

    Raises:
        ConfigError: it neither is empty nor starts with ``/``, or has a ``~`` not followed
            by ``0`` or ``1``.
    """
    if not isinstance(pointer, str):
        raise ConfigError(f"{what} must be a string, got {pointer!r}")
    if pointer and not pointer.startswith("/"):
        raise ConfigError(
            f'{what} {pointer!r} is not a JSON pointer: write "/{pointer}" '
            '(RFC 6901; "" means every argument)'
        )
    if _BAD_TILDE.search(pointer):
        raise ConfigError(
            f'{what} {pointer!r} has a "~" not followed by 0 or 1; write "~0" for "~" and '
            '"~1" for "/" inside a key (RFC 6901)'
        )
    return pointer


def split(pointer: str) -> list[str]:
    """The unescaped segments of a valid pointer."""
    if not pointer:
        return []
    return [s.replace("~1", "/").replace("~0", "~") for s in pointer[1:].split("/")]


def resolve(document: Any, pointer: str) -> Any:
    """The value at ``pointer``; ``KeyError`` when it does not exist."""
    node = document
    for seg in split(pointer):
        if isinstance(node, dict):
            node = node[seg]
        elif isinstance(node, list) and seg.isdigit():
            try:
                node = node[int(seg)]
            except IndexError as exc:
                raise KeyError(pointer) from exc
        else:
            raise KeyError(pointer)
    return node


def is_full_view(pointer: str, full_views: Iterable[str]) -> bool:
    """Whether ``pointer`` is at or under one of ``full_views`` (whole segments only).

    ``"/edits"`` covers ``"/edits/0/new"`` but not ``"/edits_old"``; ``""`` covers everything.
    """
    for view in full_views:
        if not view or pointer == view:
            return True
        if pointer.startswith(view) and pointer[len(view)] == "/":
            return True
    return False
