"""One tool result cut to a byte bound, with ctxgate's marker and the original archived."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxgate.bound.bound import Cut

__all__ = ["bound_result"]


def bound_result(text: str, *, max_bytes: int, archive: Any = None,
                 keep: str = "both") -> tuple[str, Cut | None]:
    """One tool result bounded to ``max_bytes`` UTF-8 bytes of its JSON string.

    The cut keeps head and tail (``keep``), ends with ctxgate's marker and stores the full
    original in ``archive`` when given. Returns the text and the cut (``None``: it fit).
    """
    from ctxgate.bound import bound_record

    # the record is {"result": text}: its 12 bytes of framing count against the bound
    result = bound_record({"result": text}, max_bytes=max_bytes + 12,
                          truncatable=(f"result={keep}",), archive=archive)
    if not result.changed:
        return text, None
    return result.record["result"], result.cuts[0]
