"""Bound what a session persists: an oversized tool result is trimmed, the turn is kept.

A session store may refuse a batch that is too large as a whole (``MongoDBSession``: one
document per batch, 16 MiB; the Conversations API has per-item limits), and then the whole
turn — the user's message, the model's answer and every tool result — is lost.
:class:`BoundedSession` wraps any ``Session`` and bounds each ``add_items`` batch with
:func:`ctxgate.bound.bound_record` first: only tool outputs (the ``output`` of
``function_call_output`` and the other ``*_output`` items) are cut, by the measured
overflow, each with ctxgate's marker (true UTF-8 byte counts and, when an archive is given,
``ctxgate expand <id>`` for the full original, which the agent's ``expand`` tool reads). A
batch whose overflow is not tool output is stored as it is (logged), never dropped.

:func:`bound_items` does the same for any list of input items, e.g.
``result.to_input_list()`` before it is stored elsewhere.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from agents.items import TResponseInputItem
from agents.memory import Session, SessionABC

from ctxgate.bound import BoundPolicy, BoundResult, bound_record
from ctxgate.errors import RecordBoundError

__all__ = ["ITEM_SELECTORS", "BoundedSession", "bound_items"]

log = logging.getLogger("ctxgate.integrations.openai_agents")
log.addHandler(logging.NullHandler())

ITEM_SELECTORS = ("items[*].output=both",)
"""What may be cut in a batch ``{"items": [...]}``: every item's ``output`` (every string in
it, for structured outputs); messages, calls and ids are never cut."""


def _policy(policy: BoundPolicy | None, max_bytes: int | None) -> BoundPolicy:
    base = policy if policy is not None else BoundPolicy()
    # the structural limits are the turn-record validator's, not a session store's: only
    # the byte bound applies to a batch of items
    return replace(base, selectors=ITEM_SELECTORS, max_nodes=0, max_depth=0,
                   max_array_length=0, max_object_entries=0, max_key_length=0,
                   max_bytes=max_bytes if max_bytes is not None else base.max_bytes)


def bound_items(items: list[Any], *, max_bytes: int | None = None, archive: Any = None,
                policy: BoundPolicy | None = None) -> tuple[list[Any], BoundResult | None]:
    """``items`` bounded to ``max_bytes`` UTF-8 bytes (as ``{"items": items}``, compact JSON).

    Returns the items (the same list when nothing was cut) and the bound's result (its
    ``cuts`` say what was cut; ``None`` when the batch could not be bounded and is returned
    unchanged: not JSON, or over the bound outside tool output).
    """
    p = _policy(policy, max_bytes)
    try:
        result = bound_record({"items": items}, policy=p, archive=archive)
    except RecordBoundError as exc:
        log.warning("ctxgate: a batch of %d session items cannot be bounded to %d bytes and "
                    "is kept whole (%s)", len(items), p.max_bytes, exc)
        return items, None
    if not result.changed:
        return items, result
    return list(result.record["items"]), result


class BoundedSession(SessionABC):
    """A ``Session`` whose ``add_items`` batches are bounded (see the module docstring).

    Args:
        inner: the session that stores the items (``SQLiteSession``, ``MongoDBSession`` …).
        max_bytes: the bound per batch, UTF-8 bytes (default ``[bound] max_bytes``, 1 MiB).
        archive: where full originals of cut outputs go (``None``: not stored; the marker
            says so).
        policy: the bound policy (strategy, line snap); its selectors are replaced.
    """

    def __init__(self, inner: Session, *, max_bytes: int | None = None, archive: Any = None,
                 policy: BoundPolicy | None = None) -> None:
        self.inner = inner
        self.session_id = inner.session_id
        self.session_settings = getattr(inner, "session_settings", None)
        self.max_bytes = _policy(policy, max_bytes).max_bytes
        self.archive = archive
        self.policy = policy
        self.last_result: BoundResult | None = None
        """The bound of the latest batch (``cuts`` lists what was trimmed)."""

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        return await self.inner.get_items(limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        bounded, self.last_result = bound_items(list(items), max_bytes=self.max_bytes,
                                                archive=self.archive, policy=self.policy)
        await self.inner.add_items(bounded)

    async def pop_item(self) -> TResponseInputItem | None:
        return await self.inner.pop_item()

    async def clear_session(self) -> None:
        await self.inner.clear_session()
