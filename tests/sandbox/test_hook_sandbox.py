"""The hook sandboxes exactly the fast-path allows, and the rewritten command really runs so.

Through real `ctxgate hook pre` subprocesses with a scripted decision model (a test double for
the model only; the gate, its fast path and the hook are the real ones).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgate.integrations.hooks.handlers import wrap_shell_command
from ctxgate.sandbox import MECHANISMS_ENV, detect

ROOT = Path(__file__).resolve().parents[2]
JUDGE = "tests.integrations.scripted_backends:keyword_judge"


def pre(command: str, transcript: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CTXGATE_") or k == "CTXGATE_NO_DAEMON"}
    env.update(CTXGATE_HOME=os.environ["CTXGATE_HOME"], CTXGATE_GATE__BACKEND=JUDGE,
               PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'src'}{os.pathsep}"
                          + env.get("PYTHONPATH", ""))
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command}, "session_id": "s1", "tool_use_id": "t1",
               "transcript_path": str(transcript)}
    proc = subprocess.run([sys.executable, "-m", "ctxgate", "hook", "pre"],
                          input=json.dumps(payload).encode(), capture_output=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["hookSpecificOutput"]


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"type": "user", "message": {
        "role": "user", "content": "please delete the build dir and list the files"}}) + "\n")
    return path


def test_fast_path_allow_is_rewritten_with_the_sandbox(transcript: Path) -> None:
    out = pre("ls -la", transcript)
    command = out["updatedInput"]["command"]
    assert " --sandbox read-only " in command
    assert command == wrap_shell_command("ls -la", read_only=True)


def test_model_allow_is_rewritten_without_the_sandbox(transcript: Path) -> None:
    out = pre("rm -rf build/", transcript)  # the scripted model allows it: requested
    command = out["updatedInput"]["command"]
    assert "--sandbox" not in command
    assert command == wrap_shell_command("rm -rf build/")


def test_the_rewritten_fast_path_command_cannot_write(tmp_path: Path) -> None:
    if detect().mechanism is None:
        pytest.skip(f"no read-only sandbox on this machine: {detect().why_not}")
    work = tmp_path / "w"
    work.mkdir()
    (work / "f").write_text("data\n")
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}"
                                       + os.environ.get("PYTHONPATH", "")}
    env.pop(MECHANISMS_ENV, None)
    wrote = subprocess.run(["bash", "-c", wrap_shell_command("touch x; cat f", read_only=True)],
                           cwd=work, env=env, capture_output=True, timeout=60)
    assert sorted(p.name for p in work.iterdir()) == ["f"]
    assert wrote.returncode == 0  # `cat f` succeeded last; the shell's status is kept
    assert b"data\n" in wrote.stdout
    failed = subprocess.run(["bash", "-c", wrap_shell_command("echo x > f", read_only=True)],
                            cwd=work, env=env, capture_output=True, timeout=60)
    assert failed.returncode == 1
    assert (work / "f").read_text() == "data\n"
    assert b"a write failed" in failed.stderr
