"""A scripted OpenAI Responses API server for driving the real Codex CLI in tests.

Standard library only (``http.server`` in a thread). ``POST …/responses`` is answered, for
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
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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


class ResponsesServer:
    """Use as a context manager; point a Codex model provider's ``base_url`` at :attr:`url`."""

    def __init__(self, script: list[Call], *, final_text: str = "Done.") -> None:
        self.script = script
        self.final_text = final_text
        self.requests: list[tuple[str, str, Any]] = []
        self._lock = threading.Lock()
        self._ids = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                server._record("GET", self.path, None)
                if self.path.split("?")[0].endswith("/models"):
                    self._json(200, {"object": "list", "data": [], "models": []})
                else:
                    self._json(404, {"error": {"message": f"no {self.path} here"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = None
                server._record("POST", self.path, body)
                if not self.path.split("?")[0].endswith("/responses") or not isinstance(body, dict):
                    self._json(404, {"error": {"message": f"no {self.path} here"}})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event in server._events(body):
                    self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                                     .encode())
                self.wfile.flush()
                self.close_connection = True

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ResponsesServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _record(self, method: str, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append((method, path, body))

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_{self._ids:04d}"

    def conversation(self) -> list[dict[str, Any]]:
        """Bodies of the ``/responses`` requests, in order."""
        with self._lock:
            return [b for m, p, b in self.requests
                    if m == "POST" and p.split("?")[0].endswith("/responses")
                    and isinstance(b, dict)]

    def _events(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        turn = len(call_outputs(body))
        rid = self._next_id("resp")
        if turn < len(self.script):
            call = self.script[turn]
            item: dict[str, Any] = {"type": "function_call", "id": self._next_id("fc"),
                                    "call_id": self._next_id("call"), "name": call.name,
                                    "arguments": json.dumps(call.arguments), "status": "completed"}
        else:
            item = {"type": "message", "id": self._next_id("msg"), "role": "assistant",
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
