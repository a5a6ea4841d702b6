"""The user request of a pydantic-ai run, in the shape the gate reads.

A tool call is judged against the run's message history as the model saw it: ``ctx.messages``
at tool time is the history after every history processor (``ProcessHistory`` capabilities
and ``history_processors`` write their result back into it), followed by the model response
that asked for the call. :func:`gate_conversation` maps it to OpenAI-shaped messages for
:func:`ctxgate.gate.request.extract_user_request`:

* a ``UserPromptPart`` is a ``user`` message (text items as text blocks, other content as
  non-text blocks, so an image-only prompt still stops the search);
* a ``CompactionPart`` — an app- or capability-written summary in a request, or a provider's
  compaction in a response — is a compaction boundary: a ``user`` message starting with the
  gate's first compaction marker, so nothing before it can authorize a call;
* a response's ``TextPart`` text is an ``assistant`` message (the short-reply rule reads it);
* tool calls, tool returns, retry prompts and system prompts carry no user request and are
  left out.

:func:`run_prompts` is the run's own prompt (``ctx.prompt``), which the gate uses when the
history holds no user message after the last boundary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextContent,
    TextPart,
    UserPromptPart,
)

from ctxgate.gate.request import DEFAULT_COMPACTION_MARKERS

__all__ = ["gate_conversation", "prompt_text", "run_prompts"]


def prompt_text(content: Any) -> str:
    """The text of a user prompt's content (a string, or the text items of a sequence)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "\n".join(item if isinstance(item, str) else item.content
                         for item in content if isinstance(item, (str, TextContent)))
    return ""


def _user_blocks(content: Any) -> str | list[dict[str, str]]:
    if isinstance(content, str):
        return content
    blocks: list[dict[str, str]] = []
    for item in content if isinstance(content, Sequence) else ():
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
        elif isinstance(item, TextContent):
            blocks.append({"type": "text", "text": item.content})
        else:
            blocks.append({"type": str(getattr(item, "kind", "file"))})
    return blocks


def gate_conversation(
    messages: Sequence[ModelMessage],
    *,
    compaction_markers: Sequence[str] = DEFAULT_COMPACTION_MARKERS,
) -> list[dict[str, Any]]:
    """``messages`` as OpenAI-shaped messages for the gate (rules in the module docstring)."""
    marker = compaction_markers[0] if compaction_markers else DEFAULT_COMPACTION_MARKERS[0]
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    out.append({"role": "user", "content": _user_blocks(part.content)})
                elif isinstance(part, CompactionPart):
                    out.append(_boundary(marker, part))
        elif isinstance(message, ModelResponse):
            texts: list[str] = []
            for rpart in message.parts:
                if isinstance(rpart, CompactionPart):
                    if texts:
                        out.append({"role": "assistant", "content": "\n".join(texts)})
                        texts = []
                    out.append(_boundary(marker, rpart))
                elif isinstance(rpart, TextPart) and rpart.content.strip():
                    texts.append(rpart.content)
            if texts:
                out.append({"role": "assistant", "content": "\n".join(texts)})
    return out


def _boundary(marker: str, part: CompactionPart) -> dict[str, Any]:
    """A boundary message: the marker, then the summary (the gate never reads past it)."""
    return {"role": "user", "content": f"{marker} {part.content or ''}".rstrip()}


def run_prompts(prompt: Any) -> list[str]:
    """The run's own prompt (``RunContext.prompt``) as the gate's ``run_prompts``."""
    text = prompt_text(prompt) if prompt is not None else ""
    return [text] if text.strip() else []
