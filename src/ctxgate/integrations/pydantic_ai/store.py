"""BoundedConversationStore: pydantic-ai's conversation store, each stored message bounded.

A ``ConversationStore`` keeps a conversation as a log of entries, one message each, in a
backend (a database table, a key-value store) that usually limits the size of one row or
value. :class:`BoundedConversationStore` wraps any store and, in ``write_record``, passes each
new message through :func:`.history.bound_messages` with the per-message limit: a message over
it loses bytes from its tool results only, each cut ending with ctxgate's marker (the full
original in the archive, when one is given); no entry is ever dropped, and a message whose
overflow is elsewhere is refused with :class:`~ctxgate.errors.RecordBoundError` before
anything is written. Reads go to the wrapped store unchanged.

The conversation object a run holds keeps its untrimmed messages; continuing it and saving
again appends after them as usual (``new_message_index``). A conversation loaded back holds
the trimmed ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai.conversation_store import ConversationEntry, ConversationRecord, ConversationStore

from ctxgate.bound import DEFAULT_BOUND_POLICY, BoundPolicy, Cut
from ctxgate.integrations.pydantic_ai.history import bound_messages

__all__ = ["BoundedConversationStore"]


class BoundedConversationStore(ConversationStore):
    """Wrap ``inner`` so no stored message is over ``max_message_bytes`` (see the module doc).

    Args:
        inner: the store that keeps the entries (``InMemoryConversationStore``, your backend).
        max_message_bytes: the limit of one stored message, UTF-8 bytes of its JSON.
        archive: where cut originals go (``ctxgate expand ID`` in the marker); ``None``: none.
        policy: strategy and cut settings of the bound.

    Attributes:
        cuts: every cut made, as ``(entry id, Cut)``, oldest first.
    """

    def __init__(self, inner: ConversationStore, max_message_bytes: int = 1_048_576, *,
                 archive: Any = None, policy: BoundPolicy = DEFAULT_BOUND_POLICY) -> None:
        if not isinstance(inner, ConversationStore):
            raise TypeError(f"inner must be a ConversationStore, got {type(inner).__name__}")
        self.inner = inner
        self.max_message_bytes = max_message_bytes
        self.archive = archive
        self.policy = policy
        self.cuts: list[tuple[str, Cut]] = []

    async def write_record(self, record: ConversationRecord, *,
                           new_entries: Sequence[ConversationEntry] = (),
                           expected_revision: str | None) -> None:
        bounded: list[ConversationEntry] = []
        cuts: list[tuple[str, Cut]] = []
        for entry in new_entries:
            result = bound_messages([entry.message], self.max_message_bytes,
                                    archive=self.archive, policy=self.policy)
            if result.changed:
                entry = replace(entry, message=result.messages[0])
                cuts += [(entry.id, cut) for cut in result.cuts]
            bounded.append(entry)
        await self.inner.write_record(record, new_entries=bounded,
                                      expected_revision=expected_revision)
        self.cuts += cuts

    async def read_record(self, conversation_id: str) -> ConversationRecord | None:
        return await self.inner.read_record(conversation_id)

    async def read_records(self, *, scope: str | None = None,
                           limit: int | None = None) -> Sequence[ConversationRecord]:
        return await self.inner.read_records(scope=scope, limit=limit)

    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        await self.inner.delete_record(conversation_id, expected_revision=expected_revision)

    async def read_entry(self, entry_id: str) -> ConversationEntry:
        return await self.inner.read_entry(entry_id)

    async def read_history(self, head_id: str | None, *,
                           limit: int | None = None) -> list[ConversationEntry]:
        return await self.inner.read_history(head_id, limit=limit)
