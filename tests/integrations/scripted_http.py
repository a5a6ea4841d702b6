"""The plumbing the scripted model endpoints share: a local HTTP server in a thread.

:class:`ScriptedServer` binds ``127.0.0.1`` on a free port, serves from a daemon thread while
used as a context manager, records every request (method, path, parsed body) in :attr:`ScriptedServer.recorded` and answers
through :meth:`ScriptedServer.get` / :meth:`ScriptedServer.post`, which a subclass writes in
terms of :class:`Reply`: one JSON body, or a stream of server-sent events. The wire formats
themselves (Anthropic Messages, OpenAI Responses / Chat Completions) live in the modules that
speak them: ``messages_server``, ``responses_server``, ``openai_agents/responses_server``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["RecordedRequest", "Reply", "ScriptedServer"]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    body: Any


@dataclass(frozen=True)
class Reply:
    """What to send: ``json`` with ``status``, or ``events`` as server-sent events.

    ``named`` writes an ``event: TYPE`` line before each ``data:`` line (the Messages and
    Responses streams); ``done`` ends the stream with ``data: [DONE]`` (Chat Completions).
    """

    status: int = 200
    json: Any = None
    events: Iterable[tuple[str, Any]] | None = None
    named: bool = True
    done: bool = False


class ScriptedServer:
    """Subclass and override :meth:`post` (and :meth:`get`); use as a context manager."""

    url_suffix = ""
    """Appended to ``http://127.0.0.1:PORT`` in :attr:`url` (e.g. ``/v1``)."""

    def __init__(self) -> None:
        self.recorded: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    return json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    return raw.decode("utf-8", "replace")

            def _send(self, reply: Reply) -> None:
                if reply.events is None:
                    data = json.dumps(reply.json).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(reply.status)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for name, data in reply.events:
                    head = f"event: {name}\n" if reply.named else ""
                    self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                if reply.done:
                    self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                server._record("GET", self.path, None)
                self._send(server.get(self.path.split("?", 1)[0]))

            def do_HEAD(self) -> None:  # noqa: N802
                server._record("HEAD", self.path, None)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                body = self._body()
                server._record("POST", self.path, body)
                self._send(server.post(self.path.split("?", 1)[0], body))

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{self.url_suffix}"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def get(self, path: str) -> Reply:
        """The answer to ``GET path`` (default: 404)."""
        return Reply(404, {"error": {"message": f"no {path} here"}})

    def post(self, path: str, body: Any) -> Reply:
        """The answer to ``POST path`` with the parsed ``body``."""
        raise NotImplementedError

    def _record(self, method: str, path: str, body: Any) -> None:
        with self._lock:
            self.recorded.append(RecordedRequest(method, path, body))

    def next_id(self, prefix: str) -> str:
        """``prefix_0001``, ``prefix_0002`` … (one counter per server)."""
        with self._lock:
            self._ids += 1
            return f"{prefix}_{self._ids:04d}"

    def posted(self, path_suffix: str) -> list[Any]:
        """Bodies of the ``POST`` requests whose path ends with ``path_suffix``, in order."""
        with self._lock:
            return [r.body for r in self.recorded if r.method == "POST"
                    and r.path.split("?", 1)[0].endswith(path_suffix)]
