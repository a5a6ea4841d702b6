"""Helpers of the daemon tests: real `python -m ctxgate hook pre|post` subprocesses with the
daemon on, a private runtime directory, and the daemons they start, stopped afterwards."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parents[2]
BACKENDS = "tests.integrations.scripted_backends"
BLOCKED = "ctxgate blocked this call: "


class Daemons:
    """A runtime directory for one test and the environment of hooks that use it."""

    def __init__(self, tmp_path: Path, backend: str | None = "keyword_judge", **extra: str):
        # short: a Unix socket path must stay under 108 bytes
        self.run_dir = Path(tempfile.mkdtemp(prefix="cgd", dir="/tmp"))
        os.chmod(self.run_dir, 0o700)
        self.tmp = tmp_path
        env = {k: v for k, v in os.environ.items() if k != "CTXGATE_NO_DAEMON"}
        env["PYTHONPATH"] = str(TESTS_DIR.parent) + os.pathsep + env.get("PYTHONPATH", "")
        env["CTXGATE_RUNTIME_DIR"] = str(self.run_dir)
        env["CTXGATE_HOME"] = str(tmp_path / "home")
        env["CTXGATE_GATE__TIMEOUT_SECONDS"] = "120"
        env["CTXGATE_TEST_RUN_ID"] = uuid.uuid4().hex
        if backend is not None:
            env["CTXGATE_GATE__BACKEND"] = f"{BACKENDS}:{backend}"
        env.update(extra)
        self.env = env

    def hook(self, event: str, data: bytes, *args: str, env: dict[str, str] | None = None,
             timeout: float = 120) -> tuple[int, bytes, bytes]:
        proc = subprocess.run([sys.executable, "-m", "ctxgate", "hook", event, *args],
                              input=data, capture_output=True, env=env or self.env,
                              timeout=timeout, cwd=self.tmp)
        return proc.returncode, proc.stdout, proc.stderr

    def in_process(self, event: str, data: bytes, *args: str) -> tuple[int, bytes, bytes]:
        return self.hook(event, data, *args, env={**self.env, "CTXGATE_NO_DAEMON": "1"})

    def sockets(self) -> list[Path]:
        return sorted(self.run_dir.glob("g-*.sock"))

    def pids(self) -> list[int]:
        """Pids of the live daemons of this directory (from their lock files)."""
        found = []
        for lock in self.run_dir.glob("g-*.lock"):
            text = lock.read_text().strip()
            if text.isdigit() and alive(int(text)):
                found.append(int(text))
        return sorted(found)

    def wait_pids(self, count: int, timeout: float = 30) -> list[int]:
        until = time.monotonic() + timeout
        while len(self.pids()) != count:
            if time.monotonic() > until:
                raise AssertionError(f"expected {count} live daemon(s), have {self.pids()}; "
                                     f"logs: {self.logs()}")
            time.sleep(0.02)
        return self.pids()

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in self.run_dir.glob("g-*.log"))

    def stop(self) -> None:
        import shutil

        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def learn_socket(self) -> Path:
        """Start a daemon with one call, stop it cleanly; the path its successor would use."""
        code, _out, err = self.hook("pre", pre_payload("ls", self.tmp))
        assert code == 0, err
        [pid] = self.wait_pids(1)
        [sock] = self.sockets()
        os.kill(pid, signal.SIGTERM)
        until = time.monotonic() + 20
        while alive(pid) or sock.exists():
            assert time.monotonic() < until, self.logs()
            time.sleep(0.01)
        return sock


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in state


def transcript(tmp_path: Path, request: str) -> str:
    path = tmp_path / f"t-{uuid.uuid4().hex[:8]}.jsonl"
    path.write_text(json.dumps({"type": "user", "message": {"role": "user",
                                                             "content": request}}) + "\n",
                    encoding="utf-8")
    return str(path)


def pre_payload(command: str, tmp_path: Path, request: str = "please delete the build dir",
                tool: str = "Bash", tool_input: dict | None = None) -> bytes:
    return json.dumps({"hook_event_name": "PreToolUse", "tool_name": tool,
                       "tool_input": tool_input if tool_input is not None
                       else {"command": command},
                       "session_id": "s1", "tool_use_id": "t1", "cwd": str(tmp_path),
                       "transcript_path": transcript(tmp_path, request)}).encode()


FAKE_SERVER = r"""
import json, os, socket, sys
path, mode, seen = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
old = os.umask(0o177); s.bind(path); os.umask(old); s.listen(8)
print("ready", flush=True)
count = 0
while True:
    conn, _ = s.accept()
    count += 1
    with open(seen, "w") as fh:
        fh.write(str(count))
    if mode == "silent":
        continue  # keep the connection open, never answer
    for _frame in range(2):  # take the whole request (header, body) first, like a daemon
        size = int.from_bytes(conn.recv(8, socket.MSG_WAITALL), "big")
        while size:
            size -= len(conn.recv(min(size, 1 << 20)))
    reply = {"protocol": json.dumps({"status": "protocol", "protocol": 99}).encode(),
             "garbage": b"this is not json",
             "exit1": json.dumps({"status": "ok", "result": {
                 "stdout": "", "stderr": "", "exit_code": 1}}).encode()}[mode]
    conn.sendall(len(reply).to_bytes(8, "big") + reply)
    conn.close()
"""


def fake_server(path: Path, mode: str, seen: Path) -> subprocess.Popen:
    """A process listening on ``path`` that answers every connection as ``mode`` says."""
    proc = subprocess.Popen([sys.executable, "-c", FAKE_SERVER, str(path), mode, str(seen)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def connections(seen: Path) -> int:
    return int(seen.read_text()) if seen.exists() else 0
