"""A scripted Anthropic Messages API server for driving the real Claude Code CLI in tests.

Standard library only (:mod:`.scripted_http`, ``http.server`` in a thread). ``POST /v1/messages`` is answered from
a script: the main conversation (a request that offers the ``Bash`` tool) gets, for its
N-th assistant turn, the N-th scripted :class:`Turn` — a ``tool_use`` block or a final
text. Any other request the CLI makes on the side (a title or topic from a small model,
``count_tokens``, a quota probe) gets a short generic answer. Streaming requests
(``"stream": true``) are answered with the Messages API's server-sent events
(``message_start`` … ``message_stop``); others with one JSON message.

Every request is recorded (method, path, parsed body) so a test can read what the CLI sent
back after a tool ran, e.g. the ``tool_result`` that carries the hook's digest or block.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .scripted_http import RecordedRequest, Reply, ScriptedServer

__all__ = ["MessagesServer", "RecordedRequest", "Turn", "tool_results"]


@dataclass(frozen=True)
class Turn:
    """One scripted assistant turn: a tool call (``tool`` and ``tool_input``) or ``text``."""

    text: str = ""
    tool: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)


def _offers_tool(body: Any, name: str) -> bool:
    tools = body.get("tools") if isinstance(body, dict) else None
    return isinstance(tools, list) and any(
        isinstance(t, dict) and t.get("name") == name for t in tools)


def tool_results(body: Any) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of every user message in a Messages request body."""
    found: list[dict[str, Any]] = []
    for message in body.get("messages", []) if isinstance(body, dict) else []:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            found.extend(b for b in content
                         if isinstance(b, dict) and b.get("type") == "tool_result")
    return found


def _not_found(path: str) -> Reply:
    return Reply(404, {"type": "error", "error": {"type": "not_found_error",
                                                  "message": f"no {path} here"}})


class MessagesServer(ScriptedServer):
    """The server; use as a context manager, then point ``ANTHROPIC_BASE_URL`` at :attr:`url`."""

    def __init__(self, script: list[Turn], *, main_tool: str = "Bash") -> None:
        super().__init__()
        self.script = script
        self.main_tool = main_tool

    def get(self, path: str) -> Reply:
        return _not_found(path)

    def post(self, path: str, body: Any) -> Reply:
        if path.endswith("/count_tokens"):
            return Reply(json={"input_tokens": 100})
        if not path.endswith("/v1/messages") or not isinstance(body, dict):
            return _not_found(path)
        blocks, stop = self._answer(body)
        model = str(body.get("model", "scripted"))
        if not body.get("stream"):
            return Reply(json={
                "id": self.next_id("msg"), "type": "message", "role": "assistant",
                "model": model, "content": blocks, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5}})
        return Reply(events=_sse_events(self.next_id("msg"), model, blocks, stop))

    def main_requests(self) -> list[dict[str, Any]]:
        """Bodies of the main conversation's requests (those offering the main tool)."""
        return [b for b in self.posted("") if _offers_tool(b, self.main_tool)]

    def _answer(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        if not _offers_tool(body, self.main_tool):
            return [{"type": "text", "text": "Scripted reply"}], "end_turn"
        turn_no = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        turn = self.script[turn_no] if turn_no < len(self.script) else Turn(text="Done.")
        if turn.tool is None:
            return [{"type": "text", "text": turn.text}], "end_turn"
        blocks: list[dict[str, Any]] = []
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        blocks.append({"type": "tool_use", "id": self.next_id("toolu"), "name": turn.tool,
                       "input": turn.tool_input})
        return blocks, "tool_use"


def _sse_events(msg_id: str, model: str, blocks: list[dict[str, Any]],
                stop: str) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta", "text": block["text"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {**block, "input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": json.dumps(block["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}
