"""The run's conversation as the gate reads it, from the SDK's Responses input items.

The SDK hands every tool call the turn's input (``RunContextWrapper.turn_input``): the
session history the run loaded, then the run's own input. Those are Responses API items;
the gate's request extraction (:mod:`ctxgate.gate.request`) reads chat messages, so each
item becomes one:

* a user / assistant message (``{"role", "content": str | parts}``, with or without
  ``"type": "message"``) keeps its role and its text parts (``input_text``,
  ``output_text``, ``text``); an image or file part stays as a non-text block, so an
  image-only latest message still stops the search (an earlier request is never promoted);
* ``function_call`` and other tool calls are assistant messages without text, their outputs
  ``tool`` messages: neither can be taken for the user's request;
* system / developer messages, reasoning and ``compaction`` items are dropped. A compaction
  item (``OpenAIResponsesCompactionSession``) is opaque; the user messages it keeps are the
  user's own words and still count. A text summary written as a user message starting with
  a compaction marker (``[Summary]`` …) is a boundary, as everywhere in ctxgate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxgate.gate.provenance import MAX_TOOL_TEXT_CHARS

__all__ = ["conversation_from_items"]

_TEXT_PARTS = ("input_text", "output_text", "text")


def _as_mapping(item: Any) -> Mapping[str, Any] | None:
    if isinstance(item, Mapping):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        try:
            dumped = dump(exclude_unset=True)
        except Exception:  # noqa: BLE001 - an item we cannot read is skipped
            return None
        return dumped if isinstance(dumped, Mapping) else None
    return None


def _content(content: Any) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        part = _as_mapping(part) if not isinstance(part, str) else {"type": "text", "text": part}
        if part is None:
            continue
        kind = part.get("type")
        if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "refusal":
            continue
        else:
            blocks.append({"type": str(kind or "other")})
    return blocks


def _output_text(output: Any) -> str:
    """The text of a tool call's output item (a string, or text parts), its end kept."""
    if isinstance(output, str):
        text = output
    elif isinstance(output, list):
        text = "\n".join(str(p.get("text", "")) for p in (_as_mapping(x) for x in output)
                         if p is not None and isinstance(p.get("text"), str))
    else:
        text = ""
    return text[-MAX_TOOL_TEXT_CHARS:]


def conversation_from_items(items: Iterable[Any]) -> list[dict[str, Any]]:
    """Chat messages (oldest first) for :func:`ctxgate.gate.request.extract_user_request`."""
    messages: list[dict[str, Any]] = []
    for raw in items:
        if isinstance(raw, str):
            messages.append({"role": "user", "content": raw})
            continue
        item = _as_mapping(raw)
        if item is None:
            continue
        kind = item.get("type")
        role = item.get("role")
        if kind in (None, "message") and role in ("user", "assistant"):
            messages.append({"role": role, "content": _content(item.get("content"))})
        elif isinstance(kind, str) and kind.endswith("_output"):
            # its text: what only tool output named (the gate's provenance check)
            messages.append({"role": "tool", "content": _output_text(item.get("output"))})
        elif isinstance(kind, str) and kind.endswith("_call"):
            messages.append({"role": "assistant", "content": []})
    return messages
