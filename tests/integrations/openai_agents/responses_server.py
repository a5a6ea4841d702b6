"""A scripted OpenAI Responses / Chat Completions server on 127.0.0.1 for the real Agents SDK.

Standard library only (:mod:`..scripted_http`, ``http.server`` in a thread). ``POST /v1/responses`` is answered from a
script: the N-th request gets the N-th step. A step is a list of output items made with
:func:`call` (a ``function_call``; several in one step are parallel tool calls) and
:func:`text` (an assistant message), or a function of the request body returning such a list
(so a step can read the tool outputs the SDK sent back, e.g. a digest's archive id).
``"stream": true`` requests are answered with the Responses API's server-sent events
(``response.created``, ``response.output_item.added``, ``response.output_text.delta``,
``response.function_call_arguments.delta``, ``response.output_item.done``,
``response.completed``); others with one JSON response. ``POST /v1/chat/completions`` is
answered from the same script as a chat completion (``tool_calls`` / ``content``), streamed as
``chat.completion.chunk`` events ending in ``[DONE]`` when asked. Every request body is
recorded; :func:`function_outputs` reads the tool outputs of either API's request.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from ..scripted_http import Reply, ScriptedServer

__all__ = ["ResponsesServer", "call", "function_outputs", "text", "user_texts"]

Item = dict[str, Any]
Step = list[Item] | Callable[[dict[str, Any]], list[Item]]


def call(name: str, arguments: dict[str, Any], call_id: str) -> Item:
    """A ``function_call`` output item."""
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments), "status": "completed"}


def text(message: str) -> Item:
    """An assistant message output item."""
    return {"type": "message", "id": f"msg_{abs(hash(message)) % 10**8}", "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": message, "annotations": []}]}


def function_outputs(body: dict[str, Any]) -> dict[str, str]:
    """``call_id → output text`` of every tool output in a request (either API)."""
    found: dict[str, str] = {}
    for message in body.get("messages", []) if isinstance(body.get("messages"), list) else []:
        if isinstance(message, dict) and message.get("role") == "tool":
            content = message.get("content")
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            found[str(message.get("tool_call_id"))] = str(content)
    for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            output = item.get("output")
            if isinstance(output, list):
                output = "".join(p.get("text", "") for p in output if isinstance(p, dict))
            found[str(item.get("call_id"))] = str(output)
    return found


def user_texts(body: dict[str, Any]) -> list[str]:
    """The text of every user message in a request's input, oldest first."""
    found = []
    items = body.get("input")
    for item in items if isinstance(items, list) else [{"role": "user", "content": items}]:
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                found.append(content)
            elif isinstance(content, list):
                found.append("".join(p.get("text", "") for p in content if isinstance(p, dict)))
    return found


def _response(rid: str, output: list[Item], status: str = "completed") -> dict[str, Any]:
    return {"id": rid, "object": "response", "created_at": 1_700_000_000, "model": "scripted",
            "status": status, "output": output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [], "temperature": 1.0, "top_p": 1.0,
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def _events(rid: str, output: list[Item]) -> Iterator[dict[str, Any]]:
    seq = iter(range(10_000))
    yield {"type": "response.created", "sequence_number": next(seq),
           "response": _response(rid, [], "in_progress")}
    for index, item in enumerate(output):
        if item["type"] == "message":
            empty = dict(item, status="in_progress", content=[])
            yield {"type": "response.output_item.added", "sequence_number": next(seq),
                   "output_index": index, "item": empty}
            part = {"type": "output_text", "text": "", "annotations": []}
            yield {"type": "response.content_part.added", "sequence_number": next(seq),
                   "item_id": item["id"], "output_index": index, "content_index": 0,
                   "part": part}
            whole = item["content"][0]["text"]
            for start in range(0, len(whole), 16):
                yield {"type": "response.output_text.delta", "sequence_number": next(seq),
                       "item_id": item["id"], "output_index": index, "content_index": 0,
                       "delta": whole[start:start + 16], "logprobs": []}
            yield {"type": "response.output_text.done", "sequence_number": next(seq),
                   "item_id": item["id"], "output_index": index, "content_index": 0,
                   "text": whole, "logprobs": []}
            yield {"type": "response.content_part.done", "sequence_number": next(seq),
                   "item_id": item["id"], "output_index": index, "content_index": 0,
                   "part": item["content"][0]}
        else:
            yield {"type": "response.output_item.added", "sequence_number": next(seq),
                   "output_index": index, "item": dict(item, arguments="",
                                                       status="in_progress")}
            yield {"type": "response.function_call_arguments.delta",
                   "sequence_number": next(seq), "item_id": item["id"],
                   "output_index": index, "delta": item["arguments"]}
            yield {"type": "response.function_call_arguments.done",
                   "sequence_number": next(seq), "item_id": item["id"],
                   "output_index": index, "arguments": item["arguments"],
                   "name": item["name"]}
        yield {"type": "response.output_item.done", "sequence_number": next(seq),
               "output_index": index, "item": item}
    yield {"type": "response.completed", "sequence_number": next(seq),
           "response": _response(rid, output)}


def _chat_message(output: list[Item]) -> dict[str, Any]:
    calls = [{"id": i["call_id"], "type": "function",
              "function": {"name": i["name"], "arguments": i["arguments"]}}
             for i in output if i["type"] == "function_call"]
    texts = [i["content"][0]["text"] for i in output if i["type"] == "message"]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _chat(rid: str, output: list[Item]) -> dict[str, Any]:
    message = _chat_message(output)
    return {"id": rid, "object": "chat.completion", "created": 1_700_000_000,
            "model": "scripted",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _chat_chunks(rid: str, output: list[Item]) -> Iterator[dict[str, Any]]:
    message = _chat_message(output)

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": rid, "object": "chat.completion.chunk", "created": 1_700_000_000,
                "model": "scripted",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    whole = message["content"] or ""
    for start in range(0, len(whole), 16):
        yield chunk({"content": whole[start:start + 16]})
    for index, tool_call in enumerate(message.get("tool_calls", [])):
        yield chunk({"tool_calls": [{"index": index, "id": tool_call["id"], "type": "function",
                                     "function": {"name": tool_call["function"]["name"],
                                                  "arguments": ""}}]})
        yield chunk({"tool_calls": [{"index": index, "function": {
            "arguments": tool_call["function"]["arguments"]}}]})
    last = chunk({}, "tool_calls" if "tool_calls" in message else "stop")
    last["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    yield last


class ResponsesServer(ScriptedServer):
    """The server; a context manager. Point ``AsyncOpenAI(base_url=server.url)`` at it.

    :attr:`requests` holds the scripted API requests' bodies, in order; :attr:`errors` what
    went wrong on the server's side (a request past the script, a step that raised).
    """

    url_suffix = "/v1"

    def __init__(self, script: list[Step]) -> None:
        super().__init__()
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []

    def post(self, path: str, body: Any) -> Reply:
        body = body if isinstance(body, dict) else {}
        chat = path.rstrip("/").endswith("/chat/completions")
        if not chat and not path.rstrip("/").endswith("/responses"):
            return Reply(404, {"error": {"message": f"no route {path}"}})
        with self._lock:
            n = len(self.requests)
            self.requests.append(body)
        if n >= len(self.script):
            self.errors.append(f"request {n + 1} has no scripted step")
            return Reply(500, {"error": {"message": "script exhausted"}})
        step = self.script[n]
        try:
            output = step(body) if callable(step) else step
        except Exception as exc:  # noqa: BLE001 - reported to the test
            self.errors.append(f"step {n + 1} failed: {exc!r}")
            return Reply(500, {"error": {"message": repr(exc)}})
        rid = f"resp_{n + 1}"
        if chat and body.get("stream"):
            return Reply(events=(("", c) for c in _chat_chunks(rid, output)), named=False,
                         done=True)
        if chat:
            return Reply(json=_chat(rid, output))
        if body.get("stream"):
            return Reply(events=((e["type"], e) for e in _events(rid, output)))
        return Reply(json=_response(rid, output))
