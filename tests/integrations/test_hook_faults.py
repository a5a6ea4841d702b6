"""`ctxgate hook pre` cannot fail open: every fault ends in exit 2 with a reason on stderr.

Real `python -m ctxgate hook pre` subprocesses. Each of SIGTERM, SIGINT, SIGHUP and SIGPIPE is
delivered at three moments — during start-up (as soon as the hook has a handler, while its
worker imports), while the decision is in progress (a backend that never answers), and while
the answer is being written (a reader that does not read) — and stdout closed by the reader;
malformed payloads; and a decision stuck in a C call that holds the GIL (the watchdog must
fire on time). Linux only: the moments are observed through ``/proc``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="observes the hook's moments through /proc (Linux)")

TESTS_DIR = Path(__file__).resolve().parent.parent
BACKENDS = "tests.integrations.scripted_backends"
BLOCKED = "ctxgate blocked this call: "
SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE]


def env_for(backend: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(TESTS_DIR.parent) + os.pathsep + env.get("PYTHONPATH", "")
    env["CTXGATE_GATE__BACKEND"] = f"{BACKENDS}:{backend}"
    env["CTXGATE_GATE__TIMEOUT_SECONDS"] = "120"
    env["CTXGATE_HOME"] = str(tmp_path / "home")
    env["CTXGATE_TEST_RUN_ID"] = uuid.uuid4().hex
    env.update(extra)
    return env


def payload(command: str, tmp_path: Path) -> bytes:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {
        "role": "user", "content": "please delete the build dir"}}) + "\n", encoding="utf-8")
    return json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": command}, "session_id": "s1",
                       "tool_use_id": "t1", "transcript_path": str(transcript)}).encode()


def spawn(env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ctxgate", "hook", "pre", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)


def catches(pid: int, sig: int) -> bool:
    """Whether process ``pid`` has a handler for ``sig`` (SigCgt in /proc/PID/status)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = int(next(line.split()[1] for line in text.splitlines() if line.startswith("SigCgt")),
               16)
    return bool(mask >> (sig - 1) & 1)


def wait_for(predicate, timeout: float = 60, what: str = "condition") -> float:
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.001)
    return time.monotonic() - started


def finish(proc: subprocess.Popen, data: bytes | None = None) -> tuple[int, bytes, bytes]:
    for stream in ("stdin", "stdout"):  # the test closed it: communicate() must not touch it
        if getattr(proc, stream) is not None and getattr(proc, stream).closed:
            setattr(proc, stream, None)
    try:
        out, err = proc.communicate(data, timeout=120)
    except BrokenPipeError:  # pragma: no cover - communicate() normally swallows it
        out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def leftover_processes(run_id: str) -> list[int]:
    """Processes still alive that carry this test's run id (a worker the hook failed to kill)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = next((line for line in (entry / "status").read_text().splitlines()
                          if line.startswith("State:")), "")
        except OSError:
            continue
        if f"CTXGATE_TEST_RUN_ID={run_id}".encode() in environ.split(b"\0") and "Z" not in state:
            found.append(int(entry.name))
    return found


def assert_blocked(code: int, err: bytes, *words: str) -> None:
    text = err.decode("utf-8", "replace")
    assert code == 2, (code, text)
    assert BLOCKED in text, text
    for word in words:
        assert word in text, text


# -- signals at three moments --------------------------------------------------------------------

@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_during_start_up_blocks(sig: int, tmp_path: Path) -> None:
    env = env_for("keyword_judge", tmp_path)
    proc = spawn(env)
    # all four handlers are installed together, SIGPIPE last (Python itself catches SIGINT
    # from the start, so its bit says nothing about ours)
    waited = wait_for(lambda: catches(proc.pid, signal.SIGPIPE) or proc.poll() is not None,
                      what="the handlers")
    print(f"\nhandlers installed {waited * 1000:.0f} ms after spawn")
    assert proc.poll() is None, "the hook ended before it was signalled"
    os.kill(proc.pid, sig)
    code, out, err = finish(proc, payload("rm -rf build/", tmp_path))
    assert_blocked(code, err, signal.Signals(sig).name)
    assert out == b""
    time.sleep(0.05)
    assert leftover_processes(env["CTXGATE_TEST_RUN_ID"]) == []


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_while_the_decision_is_in_progress_blocks(sig: int, tmp_path: Path) -> None:
    flag = tmp_path / "deciding"
    env = env_for("hangs_after_flag", tmp_path, CTXGATE_TEST_DECIDING_FLAG=str(flag))
    proc = spawn(env, "--deadline", "90")
    assert proc.stdin is not None
    proc.stdin.write(payload("rm -rf build/", tmp_path))
    proc.stdin.close()
    wait_for(lambda: flag.exists() and flag.read_text() != "", what="the decision to start")
    worker = int(flag.read_text())
    assert worker != proc.pid  # the decision runs in the worker, not in the spawned process
    started = time.monotonic()
    os.kill(proc.pid, sig)
    code, out, err = finish(proc)
    assert time.monotonic() - started < 5
    assert_blocked(code, err, signal.Signals(sig).name)
    assert out == b""
    time.sleep(0.05)
    assert not Path(f"/proc/{worker}").exists() or "Z" in Path(
        f"/proc/{worker}/status").read_text().split("State:")[1][:5]
    assert leftover_processes(env["CTXGATE_TEST_RUN_ID"]) == []


def big_allowed_answer(tmp_path: Path) -> tuple[subprocess.Popen, dict[str, str]]:
    """A hook whose (allow + rewrite) answer is ~900 kB, far over a pipe's 64 KiB buffer; the
    reader does not read, so once the answer starts flowing the hook is stuck writing it."""
    env = env_for("keyword_judge", tmp_path)
    proc = spawn(env, "--deadline", "90")
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(payload("echo " + "x" * 900_000, tmp_path))
    proc.stdin.close()
    ready, _, _ = select.select([proc.stdout], [], [], 90)
    assert ready, "the hook never started writing its answer"
    time.sleep(0.2)  # the pipe is full: the hook is blocked in write()
    assert proc.poll() is None
    return proc, env


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_while_the_answer_is_written_blocks(sig: int, tmp_path: Path) -> None:
    proc, env = big_allowed_answer(tmp_path)
    os.kill(proc.pid, sig)
    code, out, err = finish(proc)
    assert_blocked(code, err, signal.Signals(sig).name)
    assert 0 < len(out) < 900_000  # part of an allow was written; exit 2 makes it void
    assert leftover_processes(env["CTXGATE_TEST_RUN_ID"]) == []


def test_stdout_closed_while_the_answer_is_written_blocks(tmp_path: Path) -> None:
    proc, _env = big_allowed_answer(tmp_path)
    assert proc.stdout is not None
    proc.stdout.close()
    code, _out, err = finish(proc)
    assert_blocked(code, err, "closed the hook's output")


def test_stdout_closed_from_the_start_blocks_a_deny(tmp_path: Path) -> None:
    """A deny is an answer on stdout with exit 0; with no reader it becomes exit 2."""
    env = env_for("keyword_judge", tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)
    proc = subprocess.Popen([sys.executable, "-m", "ctxgate", "hook", "pre"],
                            stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE,
                            env=env)
    os.close(write_end)
    transcript = tmp_path / "t.jsonl"
    data = json.loads(payload("rm -rf build/", tmp_path))
    transcript.write_text(json.dumps({"type": "user", "message": {
        "role": "user", "content": "show me the disk usage"}}) + "\n", encoding="utf-8")
    code, _out, err = finish(proc, json.dumps(data).encode())
    assert_blocked(code, err, "closed the hook's output")


# -- malformed payloads --------------------------------------------------------------------------

def pre(tool_input: object = ..., *, tool: str = "Bash") -> bytes:
    data: dict[str, object] = {"hook_event_name": "PreToolUse", "tool_name": tool}
    if tool_input is not ...:
        data["tool_input"] = tool_input
    return json.dumps(data).encode()


@pytest.mark.parametrize(("raw", "reason"), [
    (b"not json at all", "not valid JSON"),
    (b'[{"tool_name": "Bash"}]', "JSON list, not an object"),
    (pre(), "has no tool_input"),
    (pre(None), "tool_input is null"),
    (pre(["ls"]), "tool_input is an array"),
    (pre({"command": None}), "tool_input.command of a Bash call is null"),
    (pre({"command": 7}), "tool_input.command of a Bash call is a number"),
    (pre({"command": ""}), "tool_input.command of a Bash call is empty"),
    (pre({"command": " \n\t"}), "tool_input.command of a Bash call is empty"),
    (pre({}), "tool_input.command of a Bash call is missing"),
    (pre({"command": ["ls", "-l"]}), "tool_input.command of a Bash call is an array"),
    (pre({"command": []}, tool="shell"), "is an array that is empty"),
], ids=["not-json", "array", "no-tool_input", "tool_input-null", "tool_input-array",
        "command-null", "command-number", "command-empty", "command-blank", "command-missing",
        "bash-argv", "codex-empty-argv"])
def test_malformed_payload_blocks_and_names_the_field(raw: bytes, reason: str,
                                                      tmp_path: Path) -> None:
    proc = spawn(env_for("keyword_judge", tmp_path))
    code, out, err = finish(proc, raw)
    assert_blocked(code, err, reason)
    assert out == b""


def test_fifty_megabyte_command_is_blocked_fast(tmp_path: Path) -> None:
    raw = pre({"command": "echo " + "A" * (50 * 1024 * 1024)})
    started = time.monotonic()
    proc = spawn(env_for("keyword_judge", tmp_path))
    code, out, err = finish(proc, raw)
    elapsed = time.monotonic() - started
    assert_blocked(code, err, "52,428,805 bytes, over the 1,048,576-byte limit")
    assert out == b"" and elapsed < 15  # was 26 s (and allowed) before the limit
    print(f"\n50 MB command blocked in {elapsed:.2f} s")


# -- the watchdog --------------------------------------------------------------------------------

def test_watchdog_fires_on_time_while_the_decision_holds_the_gil(tmp_path: Path) -> None:
    """The backend spends ~15 s in one `re.match` (no GIL release, no signal checks): a watchdog
    thread in that process would wait for it; the supervisor does not."""
    env = env_for("gil_hog", tmp_path)
    deadline = 2.0
    started = time.monotonic()
    proc = spawn(env, "--deadline", str(deadline))
    code, out, err = finish(proc, payload("rm -rf build/", tmp_path))
    elapsed = time.monotonic() - started
    assert_blocked(code, err, f"did not decide within {deadline:g} s")
    assert out == b""
    assert elapsed < deadline + 1.0, elapsed
    print(f"\nGIL-holding decision blocked after {elapsed:.2f} s (deadline {deadline:g} s)")
    time.sleep(0.05)
    assert leftover_processes(env["CTXGATE_TEST_RUN_ID"]) == []


def test_worker_crash_blocks(tmp_path: Path) -> None:
    """A worker killed outright (here by SIGKILL, as an OOM killer would) still blocks."""
    flag = tmp_path / "deciding"
    env = env_for("hangs_after_flag", tmp_path, CTXGATE_TEST_DECIDING_FLAG=str(flag))
    proc = spawn(env, "--deadline", "90")
    assert proc.stdin is not None
    proc.stdin.write(payload("rm -rf build/", tmp_path))
    proc.stdin.close()
    wait_for(lambda: flag.exists() and flag.read_text() != "", what="the decision to start")
    os.kill(int(flag.read_text()), signal.SIGKILL)
    code, _out, err = finish(proc)
    assert_blocked(code, err, "worker was killed by SIGKILL")


def test_a_normal_answer_passes_through_the_supervisor(tmp_path: Path) -> None:
    proc = spawn(env_for("keyword_judge", tmp_path))
    code, out, err = finish(proc, payload("rm -rf build/", tmp_path))
    assert code == 0, err
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["updatedInput"]["command"].endswith("-c 'rm -rf build/'")


# -- hook post: a fault never blocks (the call already ran) and never leaves an answer --------

def test_post_with_stdout_closed_exits_1_with_a_warning_and_no_traceback(tmp_path: Path) -> None:
    env = env_for("keyword_judge", tmp_path)
    big = "\n".join(f"row {i}: " + "x" * 40 for i in range(3000))
    read_end, write_end = os.pipe()
    os.close(read_end)
    proc = subprocess.Popen([sys.executable, "-m", "ctxgate", "hook", "post"],
                            stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE,
                            env=env)
    os.close(write_end)
    code, _out, err = finish(proc, json.dumps({
        "hook_event_name": "PostToolUse", "tool_name": "mcp__files__search", "tool_input": {},
        "tool_response": [{"type": "text", "text": big}]}).encode())
    text = err.decode()
    assert code == 1, text
    assert "passed through unchanged" in text and "Traceback" not in text


def test_post_interrupted_exits_1_without_an_answer(tmp_path: Path) -> None:
    env = env_for("keyword_judge", tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "ctxgate", "hook", "post"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    wait_for(lambda: catches(proc.pid, signal.SIGTERM) or proc.poll() is not None,
             what="the post hook's handler")
    os.kill(proc.pid, signal.SIGTERM)
    code, out, err = finish(proc, b"{}")
    assert code == 1 and out == b""
    assert "interrupted by SIGTERM" in err.decode()
