"""LangChain messages as the gate reads them: OpenAI-shaped dicts, summaries as boundaries.

Only what the request extraction needs is converted (role and text; tool results become empty
``tool`` messages, so a long history costs little). The summary message that LangChain's
``SummarizationMiddleware`` puts in place of the summarised history (a ``HumanMessage`` with
``additional_kwargs["lc_source"] == "summarization"``) becomes a user message starting with
the gate's compaction marker: nothing at or before it is taken as the user's request, and a
request it summarised away is found in the run's captured prompt instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from ctxgate.gate.provenance import MAX_TOOL_TEXT_CHARS

__all__ = ["SUMMARY_SOURCE", "gate_messages", "is_summary", "turn_start"]

SUMMARY_SOURCE = "summarization"
"""``additional_kwargs["lc_source"]`` of the message ``SummarizationMiddleware`` writes."""

_SUMMARY_PREFIX = "Here is a summary of the conversation to date:"


def is_summary(message: BaseMessage) -> bool:
    """Whether ``message`` is a summary written by ``SummarizationMiddleware``."""
    if not isinstance(message, HumanMessage):
        return False
    if message.additional_kwargs.get("lc_source") == SUMMARY_SOURCE:
        return True
    content = message.content
    return isinstance(content, str) and content.startswith(_SUMMARY_PREFIX)


def _text_blocks(content: Any) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for block in content or ():
        if isinstance(block, str):
            blocks.append({"type": "text", "text": block})
        elif isinstance(block, dict) and block.get("type") == "text":
            blocks.append({"type": "text", "text": block.get("text") or ""})
        elif isinstance(block, dict):
            blocks.append({"type": str(block.get("type", "other"))})  # an image: no text
    return blocks


def gate_messages(messages: Iterable[Any], boundary_marker: str) -> list[dict[str, Any]]:
    """OpenAI-shaped messages for :func:`ctxgate.gate.request.extract_user_request`.

    Args:
        messages: the agent state's messages (``BaseMessage``; anything else is skipped).
        boundary_marker: the text a summary message is made to start with (the gate
            policy's first compaction marker).
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, HumanMessage):
            if is_summary(m):
                out.append({"role": "user", "content": f"{boundary_marker} {m.text}"})
            else:
                out.append({"role": "user", "content": _text_blocks(m.content)})
        elif isinstance(m, AIMessage):
            out.append({"role": "assistant", "content": _text_blocks(m.content)})
        elif isinstance(m, SystemMessage):
            out.append({"role": "system", "content": ""})
        elif isinstance(m, ToolMessage):  # its text: what only tool output named (provenance)
            out.append({"role": "tool", "content": m.text[-MAX_TOOL_TEXT_CHARS:]})
        elif isinstance(m, BaseMessage):
            out.append({"role": "tool", "content": ""})
    return out


def turn_start(messages: Sequence[Any]) -> int:
    """Index of the first message of the current turn: the latest ``HumanMessage`` that is no
    summary (0 when there is none)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, HumanMessage) and not is_summary(m):
            return i
    return 0
