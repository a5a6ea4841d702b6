"""A scripted OpenAI Responses API server for driving the real Codex CLI in tests.

Standard library only (:mod:`.scripted_http`, ``http.server`` in a thread). ``POST …/responses`` is answered, for
the N-th request of the conversation (counted by the ``function_call_output`` items it
carries back), with the N-th scripted :class:`Call` — a function call such as
``exec_command`` — or, past the script, a final assistant message. Answers are server-sent
events (``response.created``, ``response.output_item.done`` …, ``response.completed``), the
stream Codex reads. ``GET …/models`` answers an empty list. Every request is recorded, so a
test reads the ``function_call_output`` Codex sent back after its hooks ran — what the model
would see.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .scripted_http import Reply, ScriptedServer

__all__ = ["Call", "ResponsesServer", "call_outputs"]


@dataclass(frozen=True)
class Call:
    """One scripted function call."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


def call_outputs(body: Any) -> list[dict[str, Any]]:
    """The ``function_call_output`` items of a Responses request body, in order."""
    items = body.get("input", []) if isinstance(body, dict) else []
    return [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]


class ResponsesServer(ScriptedServer):
    """Use as a context manager; point a Codex model provider's ``base_url`` at :attr:`url`."""

    url_suffix = "/v1"

    def __init__(self, script: list[Call], *, final_text: str = "Done.") -> None:
        super().__init__()
        self.script = script
        self.final_text = final_text

    def get(self, path: str) -> Reply:
        if path.endswith("/models"):
            return Reply(json={"object": "list", "data": [], "models": []})
        return super().get(path)

    def post(self, path: str, body: Any) -> Reply:
        if not path.endswith("/responses") or not isinstance(body, dict):
            return Reply(404, {"error": {"message": f"no {path} here"}})
        return Reply(events=((e["type"], e) for e in self._events(body)))

    def conversation(self) -> list[dict[str, Any]]:
        """Bodies of the ``/responses`` requests, in order."""
        return [b for b in self.posted("/responses") if isinstance(b, dict)]

    def _events(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        turn = len(call_outputs(body))
        rid = self.next_id("resp")
        if turn < len(self.script):
            call = self.script[turn]
            item: dict[str, Any] = {"type": "function_call", "id": self.next_id("fc"),
                                    "call_id": self.next_id("call"), "name": call.name,
                                    "arguments": json.dumps(call.arguments), "status": "completed"}
        else:
            item = {"type": "message", "id": self.next_id("msg"), "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": self.final_text,
                                 "annotations": []}]}
        response = {"id": rid, "object": "response", "status": "in_progress", "output": []}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 15}
        return [
            {"type": "response.created", "response": response},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed",
             "response": {**response, "status": "completed", "output": [item], "usage": usage}},
        ]
