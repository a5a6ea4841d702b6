"""The user request of a pydantic-ai run, in the shape the gate reads.

A tool call is judged against the run's message history as the model saw it: ``ctx.messages``
at tool time is the history after every history processor (``ProcessHistory`` writes its
result back into it; a capability that changes only what one request sends, not the history,
is not seen), followed by the model response that asked for the call.
:func:`gate_conversation` maps it to OpenAI-shaped messages for
:func:`ctxgate.gate.request.extract_user_request`:

* a ``UserPromptPart`` is a ``user`` message (text items as text blocks, other content as
  non-text blocks, so an image-only prompt still stops the search) — except in a request
  that also carries tool results: there pydantic-ai puts the ``content`` of a tool's
  ``ToolReturn`` as a ``UserPromptPart``, text a tool wrote (a fetched page can say "delete
  everything"), so it counts only when it is the run's own prompt;
* a ``CompactionPart`` — an app- or capability-written summary in a request, or a provider's
  compaction in a response — is a compaction boundary: a ``user`` message starting with the
  gate's first compaction marker, so nothing before it can authorize a call;
* a response's ``TextPart`` text is an ``assistant`` message (the short-reply rule reads it);
* a tool return is a ``tool`` message with its text (never a request; the gate's
  provenance check reads it: a target only tool output named), and so is a tool's
  ``ToolReturn`` content; tool calls, retry prompts and system prompts carry no user request
  and are left out.

:func:`run_prompts` is the run's own prompt (``ctx.prompt``), which the gate uses when the
history holds no user message after the last boundary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai.messages import (
    BaseToolReturnPart,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    TextContent,
    TextPart,
    UserPromptPart,
)

from ctxgate.gate.provenance import MAX_TOOL_TEXT_CHARS
from ctxgate.gate.request import DEFAULT_COMPACTION_MARKERS, DEFAULT_INJECTED_PREFIXES

__all__ = ["gate_conversation", "prompt_text", "run_prompts"]

_TOOL_RESULTS = (BaseToolReturnPart, RetryFeedbackPart, RetryPromptPart)
"""Parts that answer a tool call (returns, failures, retries)."""


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
    injected_prefixes: Sequence[str] = DEFAULT_INJECTED_PREFIXES,
    prompt: Any = None,
) -> list[dict[str, Any]]:
    """``messages`` as OpenAI-shaped messages for the gate (rules in the module docstring).

    ``prompt`` is the run's own prompt (``ctx.prompt``): the one user prompt that counts in a
    request holding tool results.

    Only the tail the gate's rules can reach is converted, walking back from the newest
    message: up to the most recent compaction boundary, or until the latest real user message
    and one more real user message with text before it have been seen (the short-reply rule
    never looks further). The gate selects the same request from it as from the whole
    history, and a long history costs no more per call than a short one.
    """
    marker = compaction_markers[0] if compaction_markers else DEFAULT_COMPACTION_MARKERS[0]
    skip = tuple(compaction_markers) + tuple(injected_prefixes)
    out: list[dict[str, Any]] = []  # newest first
    users = 0
    own = prompt_text(prompt) if prompt is not None else None
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            with_results = any(isinstance(p, _TOOL_RESULTS) for p in message.parts)
            for part in reversed(message.parts):
                if isinstance(part, CompactionPart):
                    out.append(_boundary(marker, part))
                    return out[::-1]
                if isinstance(part, BaseToolReturnPart):  # what only tool output named
                    out.append({"role": "tool", "content": _tool_text(part)})
                    continue
                if isinstance(part, UserPromptPart):
                    if with_results and prompt_text(part.content) != own:
                        # a tool's ToolReturn.content, not the user's words
                        out.append({"role": "tool", "content": prompt_text(
                            part.content)[-MAX_TOOL_TEXT_CHARS:]})
                        continue
                    converted = {"role": "user", "content": _user_blocks(part.content)}
                    out.append(converted)
                    if _any_text_starts(converted["content"], tuple(compaction_markers)):
                        return out[::-1]  # a boundary written as a user message
                    if _first_text(converted["content"]).lstrip().startswith(skip):
                        continue
                    users += 1
                    if users >= 2 and prompt_text(part.content).strip():
                        return out[::-1]
        elif isinstance(message, ModelResponse):
            texts: list[str] = []
            for rpart in reversed(message.parts):
                if isinstance(rpart, CompactionPart):
                    if texts:
                        out.append({"role": "assistant", "content": "\n".join(texts[::-1])})
                    out.append(_boundary(marker, rpart))
                    return out[::-1]
                if isinstance(rpart, TextPart) and rpart.content.strip():
                    texts.append(rpart.content)
            if texts:
                out.append({"role": "assistant", "content": "\n".join(texts[::-1])})
    return out[::-1]


def _tool_text(part: BaseToolReturnPart) -> str:
    """A tool return's text as the model read it, its end kept."""
    try:
        text = part.model_response_str()
    except Exception:  # noqa: BLE001 - a return that cannot be shown has no text to check
        text = ""
    return text[-MAX_TOOL_TEXT_CHARS:]


def _any_text_starts(content: str | list[dict[str, str]], prefixes: tuple[str, ...]) -> bool:
    texts = [content] if isinstance(content, str) else [
        b.get("text", "") for b in content if b.get("type") == "text"]
    return bool(prefixes) and any(t.lstrip().startswith(prefixes) for t in texts)


def _first_text(content: str | list[dict[str, str]]) -> str:
    if isinstance(content, str):
        return content
    return next((b.get("text", "") for b in content if b.get("type") == "text"), "")


def _boundary(marker: str, part: CompactionPart) -> dict[str, Any]:
    """A boundary message: the marker, then the summary (the gate never reads past it)."""
    return {"role": "user", "content": f"{marker} {part.content or ''}".rstrip()}


def run_prompts(prompt: Any) -> list[str]:
    """The run's own prompt (``RunContext.prompt``) as the gate's ``run_prompts``."""
    text = prompt_text(prompt) if prompt is not None else ""
    return [text] if text.strip() else []
