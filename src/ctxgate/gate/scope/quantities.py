"""How many and how much: object numbers, amounts of money, and tools or ids that act on
everything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ctxgate.gate.scope.words import _ID_KEY, _said_numbers


def _numbers(args: Mapping[str, Any], request: str) -> list[str]:
    """Numbers under id arguments of a function call, when the request names numbers and not
    these."""
    said = _said_numbers(request)
    if not said:
        return []
    out = []
    for key, value in args.items():
        if not _ID_KEY.search(str(key)) or isinstance(value, bool):
            continue
        if isinstance(value, int) or (isinstance(value, str) and value.isdigit()
                                      and len(value) < 10):
            if int(value) not in said:
                out.append(f"{key} {value}")
    return out


_AMOUNT_KEY = re.compile(r"^(amount|amount_cents|amount_minor|value|total|price|sum|"
                         r"payment_amount|transfer_amount)$", re.I)
_MONEY = re.compile(r"(?:[$€£¥]\s*(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s*(?:[$€£¥]|"
                    r"usd|eur|gbp|jpy|chf|dollars?|euros?|pounds?|cents?)\b)", re.I)


def _amounts(args: Mapping[str, Any], request: str) -> list[str]:
    """An amount of money in the call that is none the request names (as written, or in
    cents), when the request names one: "pay invoice 42 (120 EUR)" → ``amount: 12000`` is
    120.00 in cents; ``amount: 1200`` is no amount the user gave."""
    said: set[float] = set()
    for m in _MONEY.finditer(request):
        n = float((m.group(1) or m.group(2)).replace(",", ""))
        said |= {round(n, 2), round(n * 100, 2)}
    if not said:
        return []
    out = []
    for key, value in args.items():
        if not _AMOUNT_KEY.match(str(key)) or isinstance(value, bool):
            continue
        try:
            n = round(float(value), 2)
        except (TypeError, ValueError):
            continue
        if n not in said:
            out.append(f"{key} {value} (the request names {_MONEY.search(request).group(0)})")
    return out


_ALL_SAID = re.compile(r"\b(all|every|each|everything|everyone|entire|whole|bulk|batch|mass|"
                       r"any|clear|empty|wipe|purge)\b", re.I)
_BULK_WORDS = frozenset({"all", "bulk", "batch", "mass", "every", "everything", "entire"})


def _bulk(tool: str, args: Mapping[str, Any], request: str) -> list[str]:
    """A tool that acts on everything (``cancel_all_events``, ``bulk_delete``) or an id of
    ``all``/``*``, when the request never says all, every or each ("cancel my 3pm meeting")."""
    from ctxgate.gate.effects.names import name_words

    if _ALL_SAID.search(request):
        return []
    out = []
    words = set(name_words(tool))
    if words & _BULK_WORDS:
        out.append(f"everything the tool acts on (its name says "
                   f"{sorted(words & _BULK_WORDS)[0]!r}; the request names no 'all')")
    for key, value in args.items():
        if _ID_KEY.search(str(key)) and isinstance(value, str) \
                and value.strip().lower() in ("all", "*", "any", "%"):
            out.append(f"{key} {value!r} (every one; the request names no 'all')")
    return out
