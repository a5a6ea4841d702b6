"""What a request names: shared readers of the scope checks (file names, numbers, a word named or
excluded, an argument's values).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

_FILE_NAME = re.compile(r"(?<![\w@/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})\b")
_EMAIL_OR_URL = re.compile(r"\S+@\S+|\b[a-z][a-z0-9+.-]*://\S+", re.I)
_ID_KEY = re.compile(r"(^|_)(id|number|num|no|issue|pr|pull|ticket|order|invoice)s?($|_)"
                     r"|(Id|Number|Num)$", re.I)
_INT = re.compile(r"(?<![\w.])#?(\d{1,9})(?![\w.]|\.\d)")


def _values(value: Any, depth: int = 0) -> Iterable[str]:
    from ctxgate.gate.provenance import CONTENT_KEYS

    if isinstance(value, str):
        yield value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)
    elif depth < 6 and isinstance(value, Mapping):
        for k, v in value.items():
            if str(k).lower() not in CONTENT_KEYS:
                yield from _values(v, depth + 1)
    elif depth < 6 and isinstance(value, list | tuple):
        for v in value:
            yield from _values(v, depth + 1)


def _pairs(value: Any, depth: int = 0) -> Iterable[tuple[str, Any]]:
    """Every (key, value) of nested arguments."""
    if depth < 6 and isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k), v
            yield from _pairs(v, depth + 1)
    elif depth < 6 and isinstance(value, list | tuple):
        for v in value:
            yield from _pairs(v, depth + 1)


def _named(word: str, request: str, terms: frozenset[str]) -> bool:
    """Whether the request names ``word`` (as written, or by a stem of one of its words)."""
    from ctxgate.gate.backends.heads.matching import request_terms

    squeezed = re.sub(r"[\W_]+", "", word.lower())
    if word.lower() in request.lower() or (
            squeezed and squeezed in re.sub(r"[\W_]+", "", request.lower())):
        return True  # as written, or with its spaces and separators dropped (git config)
    words = request_terms(word)
    return bool(words) and bool(words & terms)


_EXCLUDING = re.compile(r"\b(except|excluding|other than|apart from|besides|but not|keep|"
                        r"keeping|leave|leaving|preserve|spare|not|never|don'?t|do not|"
                        r"without)\b(?:\W+[\w.-]+){0,3}\W*$", re.I)
_CLAUSE_END = re.compile(r"[.;!?\n,]")


def _excluded(name: str, request: str) -> bool:
    """Whether every place the request names ``name`` excludes it ("everything except
    notes.txt", "without removing notes.txt", "keep main.py")."""
    if len(name) < 2:
        return False
    found = list(re.finditer(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", request, re.I))
    if not found:
        return False
    for m in found:
        starts = [c.end() for c in _CLAUSE_END.finditer(request, 0, m.start())]
        if not _EXCLUDING.search(request[starts[-1] if starts else 0:m.start()]):
            return False
    return True


def _said_numbers(request: str) -> set[int]:
    """The whole numbers the request writes (``#12``, ``42``), not parts of an address."""
    return {int(m.group(1)) for m in _INT.finditer(_EMAIL_OR_URL.sub(" ", request))}


@functools.lru_cache(maxsize=16)
def _segments(command: str) -> tuple[Any, ...]:
    """The segments of a shell command (``ParsedCommand.segments``, immutable), parsed once
    for all the checks of one call rather than once per check."""
    from ctxgate.shell import parse_command

    return parse_command(command).segments


def _said_files(request: str) -> set[str]:
    """The base names (lower case) of the files a request writes out with an extension
    (``notes.txt``, ``src/app.py`` → ``app.py``), addresses and URLs left out."""
    return {m.group(1).rsplit("/", 1)[-1].lower()
            for m in _FILE_NAME.finditer(_EMAIL_OR_URL.sub(" ", request))}
