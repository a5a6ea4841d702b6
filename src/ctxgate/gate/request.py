"""The user request a tool call is judged against, taken from the conversation.

Accepts OpenAI chat messages (``{"role", "content": str | [{"type": "text", ...}]}``) and
Anthropic messages (``content`` blocks ``text``/``image``/``tool_use``/``tool_result``).

Rules, in order:

1. Nothing at or before the most recent **compaction boundary** is trusted (a user message
   with a text block starting with a compaction marker): compaction keeps the session head,
   which may hold an old, unrelated request.
2. The **latest real user message** after it: messages the agent loop injected (first text
   block starting with a loop/compaction prefix) and tool results are skipped. The search
   stops at that message even when it holds no text (an image): an earlier request is never
   promoted in its place.
3. **Short reply**: when its text is under ``short_reply_chars`` and the nearest assistant
   message with text before it ends with a question (once code blocks, inline code and URLs
   are set aside), the request carries that question and the earlier request.
4. Otherwise the run's own prompts; none → ``None`` (the gate denies and asks to restate).

Extra context widens the gate toward allowing, which is why rule 3 is strict.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "DEFAULT_COMPACTION_MARKERS",
    "DEFAULT_INJECTED_PREFIXES",
    "REPLY_MARK",
    "SHORT_REPLY_CHARS",
    "UserRequest",
    "ends_with_question",
    "extract_user_request",
    "message_text",
]

DEFAULT_COMPACTION_MARKERS: tuple[str, ...] = (
    "[Context compacted",
    "[Summary]",
    "This session is being continued from a previous conversation",
)
"""Text a compaction boundary message starts with (prefix match on a text block)."""

DEFAULT_INJECTED_PREFIXES: tuple[str, ...] = (
    "[You have called",
    "[Agent stopped",
    "[Loop aborted",
    "<task-notification>",
)
"""Prefixes of user-role messages the agent loop wrote (besides the compaction markers)."""

REPLY_MARK = "\n\nLatest user message: "
"""What stands before the user's short reply in a request built from the assistant's
question and that reply (rule 3): readers of the request find the reply after it."""

SHORT_REPLY_CHARS = 40
"""A latest message under this many code points may be a reply to an assistant question."""

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s<>\"'`]+")
_CLOSING = "*_)\"'”’»]>"


@dataclass(frozen=True, kw_only=True)
class UserRequest:
    """The selected request and where it came from."""

    text: str
    """What the gate sends as ``user_request`` (before the 8,000-character cut)."""
    source: Literal["explicit", "conversation", "run_prompts"]
    latest: str = ""
    """The latest real user message's text ("" for image-only)."""
    question: str | None = None
    """The assistant question a short reply answers, when rule 3 fired."""
    earlier_request: str | None = None
    """The user text before that question, when rule 3 fired."""


def message_text(message: Mapping[str, Any]) -> str:
    """Every non-blank text block of a message joined with newlines."""
    content = message.get("content")
    if isinstance(content, str):
        return content if content.strip() else ""
    parts: list[str] = []
    if isinstance(content, Sequence):
        for block in content:
            if isinstance(block, str):
                text = block
            elif isinstance(block, Mapping) and block.get("type") in ("text", "input_text"):
                text = block.get("text") or ""
            else:
                continue
            if isinstance(text, str) and text.strip():
                parts.append(text)
    return "\n".join(parts)


def _first_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        for block in content:
            if isinstance(block, str):
                return block
            if isinstance(block, Mapping) and block.get("type") in ("text", "input_text"):
                return block.get("text") or ""
    return ""


def _has_tool_result(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    if isinstance(content, str) or not isinstance(content, Sequence):
        return False
    return any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content)


def _is_boundary(message: Mapping[str, Any], markers: Sequence[str]) -> bool:
    content = message.get("content")
    blocks = [content] if isinstance(content, str) else content
    if not isinstance(blocks, Sequence):
        return False
    for block in blocks:
        text = block if isinstance(block, str) else (
            block.get("text") if isinstance(block, Mapping) else None)
        if isinstance(text, str) and text.lstrip().startswith(tuple(markers)):
            return True
    return False


def ends_with_question(text: str) -> bool:
    """Whether ``text`` ends with ``?`` once fenced code, inline code and URLs are set aside."""
    kept: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```") or line.lstrip().startswith("~~~"):
            fenced = not fenced
            continue
        if not fenced:
            kept.append(line)
    prose = "\n".join(kept)
    prose = "".join(seg for i, seg in enumerate(prose.split("`")) if i % 2 == 0)
    prose = _URL.sub(lambda m: m.group(0)[len(m.group(0).rstrip("?.,!;:)")):], prose)
    prose = prose.rstrip().rstrip(_CLOSING).rstrip()
    return prose.endswith(("?", "？"))


def extract_user_request(
    messages: Sequence[Mapping[str, Any]] = (),
    *,
    run_prompts: Sequence[str] = (),
    compaction_markers: Sequence[str] = DEFAULT_COMPACTION_MARKERS,
    injected_prefixes: Sequence[str] = DEFAULT_INJECTED_PREFIXES,
    short_reply_chars: int = SHORT_REPLY_CHARS,
) -> UserRequest | None:
    """Select the user request for a tool call (rules in the module docstring).

    Args:
        messages: the conversation, oldest first, OpenAI or Anthropic shaped.
        run_prompts: the prompts this run was given (compaction cannot remove them).
        compaction_markers: prefixes marking a compaction boundary.
        injected_prefixes: prefixes of loop-injected user messages.
        short_reply_chars: the short-reply limit, code points.

    Returns:
        The request, or ``None`` when no user request survives.
    """
    msgs = [m for m in messages if isinstance(m, Mapping)]
    start = 0
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i].get("role") == "user" and _is_boundary(msgs[i], compaction_markers):
            start = i + 1
            break
    skip = tuple(compaction_markers) + tuple(injected_prefixes)

    def is_real_user(m: Mapping[str, Any]) -> bool:
        if m.get("role") != "user" or _has_tool_result(m):
            return False
        return not _first_text(m).lstrip().startswith(skip)

    latest_i = next((i for i in range(len(msgs) - 1, start - 1, -1) if is_real_user(msgs[i])), None)
    if latest_i is not None:
        latest = message_text(msgs[latest_i])
        if latest.strip():
            reply = _short_reply(msgs, start, latest_i, latest, is_real_user, short_reply_chars)
            if reply is not None:
                return reply
            return UserRequest(text=latest, source="conversation", latest=latest)
    prompts = [p for p in run_prompts if isinstance(p, str) and p.strip()]
    if not prompts:
        return None
    text = prompts[0] if len(prompts) == 1 else "\n\n".join(f"User: {p}" for p in prompts)
    return UserRequest(text=text, source="run_prompts", latest="" if latest_i is not None else text)


def _short_reply(msgs, start, latest_i, latest, is_real_user, limit) -> UserRequest | None:
    if len(latest) >= limit:
        return None
    asst_i = None
    for i in range(latest_i - 1, start - 1, -1):
        if is_real_user(msgs[i]):
            return None  # never look past the previous real user message
        if msgs[i].get("role") == "assistant" and message_text(msgs[i]).strip():
            asst_i = i
            break
    if asst_i is None:
        return None
    question = message_text(msgs[asst_i])
    if not ends_with_question(question):
        return None
    earlier = None
    for i in range(asst_i - 1, start - 1, -1):
        if is_real_user(msgs[i]) and message_text(msgs[i]).strip():
            earlier = message_text(msgs[i])
            break
    parts = [f"Earlier user request: {earlier}"] if earlier else []
    parts += [f"Assistant: {question}"]
    return UserRequest(text="\n\n".join(parts) + REPLY_MARK + latest, source="conversation", latest=latest,
                       question=question, earlier_request=earlier)
