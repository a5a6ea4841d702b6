"""The exact UTF-8 byte length of ctxgate's serialization, computed per node.

**The serialization** (what :func:`emit` returns and every size in this package measures) is
compact JSON as ``json.dumps(value, ensure_ascii=False, separators=(",", ":"),
allow_nan=False)`` produces it, encoded as UTF-8, with one change: a surrogate code point
(U+D800..U+DFFF, which a Python ``str`` may hold alone) is written as the six-byte escape
``\\udxxx`` (lowercase hex), never raw, so the output is always valid UTF-8. Concretely:

- ``null``/``true`` 4 bytes, ``false`` 5; an integer or float as Python's ``repr`` (finite
  floats only); an array ``2 + (n-1)`` bytes of brackets and commas plus its elements; an
  object ``2 + (n-1)`` plus, per entry, the key as a string, one colon and the value.
- a string: 2 quotes, then per code point: ``"`` ``\\`` and BS FF LF CR TAB 2 bytes
  (short escapes); any other control below U+0020 6 bytes (``\\u00xx``); a surrogate 6
  bytes; anything else its UTF-8 length (1-4; U+007F, U+2028 and U+2029 are not escaped).

Sizes are computed without building the whole document: each string is measured with the
C-accelerated string encoder of the :mod:`json` module (the same code ``json.dumps`` runs),
so measuring costs about one ``json.dumps`` and allocates one string at a time.
"""

from __future__ import annotations

import codecs
import json
import re
from json.encoder import encode_basestring as _quote  # C implementation when available

__all__ = [
    "SURROGATE_ERRORS",
    "emit",
    "emit_bytes",
    "escaped_size",
    "measure",
    "scalar_size",
    "string_size",
    "text_bytes",
]

SURROGATE_ERRORS = "ctxgate-json-surrogate"
"""Codec error handler that writes a surrogate code point as a JSON ``\\udxxx`` escape."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\]')


def _escape_surrogates(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    bad = exc.object[exc.start:exc.end]
    return "".join(f"\\u{ord(c):04x}" for c in bad), exc.end


codecs.register_error(SURROGATE_ERRORS, _escape_surrogates)


def emit(value: object) -> str:
    """The serialization of ``value`` as text (its UTF-8 encoding is :func:`emit_bytes`)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def emit_bytes(value: object) -> bytes:
    """The serialization of ``value`` as UTF-8 bytes; ``len()`` of it equals :func:`measure`."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8", SURROGATE_ERRORS)


def _surrogates(text: str) -> int:
    return len(_SURROGATE.findall(text))


def text_bytes(text: str) -> int:
    """UTF-8 bytes of ``text`` itself (not escaped); a lone surrogate counts 3 (as WTF-8)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def escaped_size(text: str) -> int:
    """Bytes ``text`` occupies inside a serialized string, quotes excluded."""
    if text.isascii():
        if _NEEDS_ESCAPE.search(text) is None:
            return len(text)
        return len(_quote(text)) - 2
    escaped = len(_quote(text)) - 2
    try:
        extra = len(text.encode("utf-8")) - len(text)
    except UnicodeEncodeError:
        # surrogatepass writes 3 bytes per surrogate; the JSON escape takes 6.
        extra = len(text.encode("utf-8", "surrogatepass")) - len(text) + 3 * _surrogates(text)
    return escaped + extra


def string_size(text: str) -> int:
    """Bytes of ``text`` serialized as a JSON string, quotes included."""
    return escaped_size(text) + 2


def scalar_size(value: object) -> int:
    """Bytes of a serialized non-container value.

    Raises:
        TypeError: not a JSON scalar. ValueError: a non-finite float, or an integer too long
            for Python's ``int`` to ``str`` conversion.
    """
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, str):
        return string_size(value)
    if isinstance(value, int):
        return len(int.__repr__(value))
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{value!r} is not a JSON number")
        return len(float.__repr__(value))
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def measure(value: object) -> int:
    """Exact UTF-8 bytes of ``emit(value)``, computed node by node (no document is built).

    Raises:
        TypeError: a value that is not JSON (set, bytes, non-string key ...).
        ValueError: a non-finite float.
    """
    if isinstance(value, dict):
        total = 1 + len(value) if value else 2
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"object key {key!r} is not a string")
            total += string_size(key) + 1 + measure(item)
        return total
    if isinstance(value, list | tuple):
        total = 1 + len(value) if value else 2
        for item in value:
            total += measure(item)
        return total
    return scalar_size(value)
