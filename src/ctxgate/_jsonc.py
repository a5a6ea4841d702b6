"""``json.dumps`` / ``json.loads`` through the C accelerator alone, for per-call hook processes.

The ``json`` package imports ``re`` (and with it ``enum``) for its pure-Python fallbacks; a
hook that only talks to the decision daemon needs neither. :func:`dumps` and :func:`loads`
call ``_json``'s encoder and scanner directly and give byte-identical results (a test holds
them equal to ``json``); where ``_json`` is missing they use ``json``. Errors are the same
exceptions ``json`` raises (``TypeError``, ``ValueError``/``JSONDecodeError``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["dumps", "loads"]

try:
    import _json
except ImportError:  # pragma: no cover - no C accelerator (PyPy)
    _json = None  # type: ignore[assignment]

_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


def _default(obj: Any) -> Any:
    raise TypeError(f"Object of type {obj.__class__.__name__} is not JSON serializable")


def dumps(obj: Any, *, sort_keys: bool = False, ensure_ascii: bool = True) -> str:
    """``json.dumps(obj, sort_keys=..., ensure_ascii=...)`` with the default separators."""
    if _json is None or getattr(_json, "make_encoder", None) is None:  # pragma: no cover
        import json

        return json.dumps(obj, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    quote = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    if isinstance(obj, str):
        return quote(obj)
    encode = _json.make_encoder({}, _default, quote, None, ": ", ", ", sort_keys, False, True)
    return "".join(encode(obj, 0))


class _Context:
    """The attributes ``_json.make_scanner`` reads from a decoder."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)
    memo: dict = {}


_WS = " \t\n\r"


def loads(text: str) -> Any:
    """``json.loads(text)`` for a ``str``."""
    if _json is None or getattr(_json, "make_scanner", None) is None:  # pragma: no cover
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WS))
    try:
        value, end = _json.make_scanner(_Context())(text, start)
    except StopIteration:
        import json

        return json.loads(text)  # raises the JSONDecodeError json would
    if text[end:].strip(_WS):
        import json

        return json.loads(text)  # "Extra data", as json says it
    return value
