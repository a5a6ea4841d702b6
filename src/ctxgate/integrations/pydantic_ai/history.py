"""Bound a pydantic-ai message history to a byte limit before it is persisted.

pydantic-ai hands the application its history (``result.all_messages()``, a
``ConversationStore``'s entries) to store wherever it keeps conversations — a database row, a
cache value, a queue message — and those stores have size limits. :func:`bound_messages`
measures the history as compact JSON (``ModelMessagesTypeAdapter``'s JSON form, UTF-8 bytes,
ctxgate's :func:`~ctxgate.bound.emit` serialization) and, when it is over the limit, trims
**tool results only** — ``tool-return`` parts of requests and ``builtin-tool-return`` parts of
responses — with :func:`ctxgate.bound.bound_record`: each cut string ends with ctxgate's marker
(true byte counts, and ``ctxgate expand ID`` when an archive stored the original). No message
and no turn is ever dropped; when the overflow is elsewhere (the prompts, the model's own
text) the bound refuses with a structured :class:`~ctxgate.errors.RecordBoundError`. File and
binary items of a multimodal tool result are never cut (half of one is useless). The JSON
record's structural limits (nodes, depth, array length) are not pydantic-ai's and are off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from ctxgate.bound import DEFAULT_BOUND_POLICY, BoundPolicy, Cut, bound_record, emit_bytes

__all__ = ["BoundedMessages", "bound_messages", "tool_output_selectors"]

_TOOL_OUTPUT_KINDS = ("tool-return", "builtin-tool-return")


@dataclass(frozen=True, kw_only=True)
class BoundedMessages:
    """A history that fits, and what was cut to make it fit."""

    messages: list[ModelMessage]
    """The bounded history (the input messages themselves when nothing was cut)."""
    json: bytes
    """Its serialization, exactly the bytes measured (load with
    ``ModelMessagesTypeAdapter.validate_json``)."""
    cuts: list[Cut] = field(default_factory=list)
    """Every cut tool result: JSON pointer (``/3/parts/0/content``), bytes, archive id."""
    max_bytes: int = 0

    @property
    def changed(self) -> bool:
        """Whether any tool result was trimmed."""
        return bool(self.cuts)


def tool_output_selectors(record: Sequence[Any]) -> list[str]:
    """Selectors (``[i].parts[j].content``) of every tool result in a dumped history."""
    selectors: list[str] = []
    for i, message in enumerate(record):
        parts = message.get("parts") if isinstance(message, dict) else None
        for j, part in enumerate(parts or ()):
            if not isinstance(part, dict) or part.get("part_kind") not in _TOOL_OUTPUT_KINDS:
                continue
            content = part.get("content")
            if isinstance(content, list):
                selectors += [f"[{i}].parts[{j}].content[{k}]" for k, item in enumerate(content)
                              if isinstance(item, str) or (isinstance(item, dict)
                                                           and not _is_media(item))]
            elif isinstance(content, (str, dict)) and not (isinstance(content, dict)
                                                          and _is_media(content)):
                selectors.append(f"[{i}].parts[{j}].content")
    return selectors


def _is_media(item: dict[str, Any]) -> bool:
    return "data" in item or "url" in item or item.get("kind") in ("binary", "uploaded-file")


def bound_messages(
    messages: Sequence[ModelMessage],
    max_bytes: int | None = None,
    *,
    archive: Any = None,
    policy: BoundPolicy = DEFAULT_BOUND_POLICY,
) -> BoundedMessages:
    """``messages`` with their tool results trimmed to fit ``max_bytes`` serialized bytes.

    Args:
        messages: a pydantic-ai history (``result.all_messages()``).
        max_bytes: the limit, UTF-8 bytes of the JSON (default ``policy.max_bytes``, 1 MiB).
        archive: where each cut result's full original is stored (its id goes in the marker),
            e.g. the :class:`~ctxgate.archive.Archive` the firewall uses; ``None`` stores none.
        policy: strategy (``level`` shares the overflow, ``widest`` cuts the largest first) and
            cut settings; its selectors and structural limits are replaced as described above.

    Raises:
        RecordBoundError: the history cannot fit by trimming tool results (``code``,
            ``path`` and ``observed``/``limit`` say where and by how much).
    """
    items = list(messages)
    record = ModelMessagesTypeAdapter.dump_python(items, mode="json")
    selectors = tool_output_selectors(record)
    tuned = replace(policy, selectors=tuple(selectors), max_nodes=0, max_depth=0,
                    max_array_length=0, max_object_entries=0, max_key_length=0,
                    **({"max_bytes": max_bytes} if max_bytes is not None else {}))
    result = bound_record(record, tuned.max_bytes, truncatable=selectors, policy=tuned,
                          archive=archive)
    data = emit_bytes(result.record)
    if not result.changed:
        return BoundedMessages(messages=items, json=data, max_bytes=tuned.max_bytes)
    bounded = ModelMessagesTypeAdapter.validate_python(result.record)
    return BoundedMessages(messages=list(bounded), json=data, cuts=list(result.cuts),
                           max_bytes=tuned.max_bytes)
