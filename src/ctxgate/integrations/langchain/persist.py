"""The byte bound of the current turn as LangGraph persists it (state and checkpoints).

The turn is the messages from the latest real ``HumanMessage`` on. Its record is
``{"turn": [{"type": "ai", "content": …, "tool_calls": …}, {"type": "tool", "result": …},
…]}``, and only the tool results (``turn[*].result``) may be cut: ``bound_record`` levels the
largest ones down by the measured overflow, each ending with ctxgate's marker and its full
original in the archive. The cut results go back into the state as ``ToolMessage``s with the
same ids, which LangGraph's ``add_messages`` reducer replaces in place. A turn whose overflow
is not in tool output is left as it is (logged): the turn is never dropped.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from ctxgate.errors import RecordBoundError
from ctxgate.integrations.langchain.messages import turn_start

__all__ = ["TURN_SELECTORS", "TurnBound"]

log = logging.getLogger("ctxgate.integrations.langchain")

TURN_SELECTORS = ("turn[*].result=both", "turn[*].result[*].text=both")
"""What may be cut in a turn record: tool results (strings, and text blocks of lists)."""


def _entry(message: BaseMessage) -> dict[str, Any]:
    if isinstance(message, ToolMessage):
        return {"type": "tool", "id": message.id or "", "result": message.content}
    entry: dict[str, Any] = {"type": message.type, "id": message.id or "",
                             "content": message.content}
    tool_calls = getattr(message, "tool_calls", None)
    if tool_calls:
        entry["tool_calls"] = [{"name": c.get("name"), "args": c.get("args"),
                                "id": c.get("id")} for c in tool_calls]
    return entry


def _upper_bound(message: BaseMessage) -> int:
    """At least the bytes of ``_entry(message)`` serialized (no code point takes more than 6
    escaped bytes), without serializing it when the content is a string."""
    content = message.content
    size = 6 * len(content) if isinstance(content, str) else 6 * len(
        json.dumps(content, ensure_ascii=False, default=str))
    tool_calls = getattr(message, "tool_calls", None)
    if tool_calls:
        size += 6 * len(json.dumps(tool_calls, ensure_ascii=False, default=str))
    return size + 6 * len(message.id or "") + 64


@dataclass(frozen=True, kw_only=True)
class TurnBound:
    """Bound the current turn's record to ``max_bytes`` UTF-8 bytes."""

    max_bytes: int
    archive: Any = None
    strategy: str = "level"

    def update(self, messages: Sequence[Any]) -> dict[str, Any] | None:
        """The state update that bounds the turn (``None`` when it fits or cannot be cut)."""
        from ctxgate.bound import BoundPolicy, bound_record

        start = turn_start(messages)
        turn = [m for m in messages[start:] if isinstance(m, BaseMessage)]
        if not any(isinstance(m, ToolMessage) for m in turn):
            return None
        if sum(_upper_bound(m) for m in turn) <= self.max_bytes:
            return None  # fits for sure: no need to measure it exactly
        record = {"turn": [_entry(m) for m in turn]}
        policy = BoundPolicy(max_bytes=self.max_bytes, strategy=self.strategy,
                             selectors=TURN_SELECTORS, max_nodes=0, max_depth=0,
                             max_array_length=0, max_object_entries=0, max_key_length=0)
        try:
            result = bound_record(record, policy=policy, archive=self.archive)
        except RecordBoundError as exc:
            log.warning("ctxgate: the turn is over its %d-byte bound outside tool output "
                        "(%s at %s); it is kept whole", self.max_bytes, exc.code, exc.path)
            return None
        if not result.changed:
            return None
        replaced: dict[int, Any] = {}
        cuts: dict[int, list[Any]] = {}
        for cut in result.cuts:
            parts = cut.path.split("/")  # /turn/<i>/result[/<j>/text]
            index = int(parts[2])
            replaced[index] = result.record["turn"][index]["result"]
            cuts.setdefault(index, []).append(cut)
        updates = []
        for index, content in sorted(replaced.items()):
            message = turn[index]
            meta = dict(message.response_metadata.get("ctxgate", {}))
            meta["turn_bound"] = [{"original_bytes": c.original_bytes,
                                   "kept_bytes": c.kept_bytes, "archive_id": c.archive_id}
                                  for c in cuts[index]]
            updates.append(message.model_copy(update={
                "content": content,
                "response_metadata": {**message.response_metadata, "ctxgate": meta}}))
        return {"messages": updates}
