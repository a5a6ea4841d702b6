"""`hook post` for a shell call that already ran wrapped ends at start-up (integrations.hooks.wrapped).

Real ``python -S …/_launch.py hook post`` processes, as ``hook install`` writes them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ctxgate
from ctxgate.integrations.hooks import handlers
from ctxgate.integrations.hooks.wrapped import SHELL_TOOLS, is_wrapped, skip_post

LAUNCHER = Path(ctxgate.__file__).resolve().parent / "_launch.py"


def _payload(command: str, tool: str = "Bash", event: str = "PostToolUse") -> bytes:
    return json.dumps(
        {
            "hook_event_name": event,
            "tool_name": tool,
            "session_id": "s",
            "tool_input": {"command": command},
            "tool_response": {"stdout": "x" * 50_000, "stderr": ""},
        }
    ).encode()


def _post(raw: bytes, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env.update(
        CTXGATE_HOME=str(home), CTXGATE_NO_DAEMON="1", CTXGATE_CONFIG=str(home / "absent.toml")
    )
    return subprocess.run(
        [sys.executable, "-S", "-X", "importtime", str(LAUNCHER), "hook", "post"],
        input=raw,
        capture_output=True,
        env=env,
        timeout=120,
    )


def test_the_rewritten_command_is_recognised() -> None:
    for read_only in (False, True):
        wrapped = handlers.wrap_shell_command("make -j4", read_only=read_only)
        assert is_wrapped(wrapped) and is_wrapped(f"cd sub && {wrapped}")
        assert handlers.rewrite_shell_command(wrapped) is not None  # still a command
    assert is_wrapped("ctxgate run -- ls") and is_wrapped("python -m ctxgate run -c ls")
    assert not is_wrapped("echo ctxgate run") and not is_wrapped("ls ctxgate")
    assert handlers.SHELL_TOOLS is SHELL_TOOLS


def test_skip_post_only_for_wrapped_shell_calls() -> None:
    wrapped = handlers.wrap_shell_command("make")
    assert skip_post(_payload(wrapped))
    assert skip_post(b"  \n" + _payload(wrapped, tool="exec_command") + b"\n")
    assert not skip_post(_payload("make"))
    assert not skip_post(_payload(wrapped, tool="Grep"))
    assert not skip_post(_payload(wrapped, event="PreToolUse"))
    assert not skip_post(_payload(wrapped)[:-2])  # truncated JSON
    assert not skip_post(_payload(wrapped) + b"{}")  # trailing data
    assert not skip_post(b"\xff ctxgate")


def test_a_wrapped_call_s_post_hook_prints_nothing_and_loads_nothing(tmp_path: Path) -> None:
    proc = _post(_payload(handlers.wrap_shell_command("make")), tmp_path / "home")
    assert proc.returncode == 0 and proc.stdout == b""
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert "ctxgate.integrations.hooks.wrapped" in names
    assert not names & {
        "site",
        "json",
        "re",
        "argparse",
        "ctxgate.cli",
        "socket",
        "ctxgate.integrations.hooks.handlers",
    }


@pytest.mark.parametrize("command", ["seq 1 20000", "X=1; seq 1 20000"])
def test_an_unwrapped_call_is_still_digested(tmp_path: Path, command: str) -> None:
    """Not wrapped: the full hook post runs, on the same bytes (stdin is replayed)."""
    raw = json.dumps(
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command + " # ctxgate"},
            "tool_response": {
                "stdout": "".join(f"{i}\n" for i in range(20000)),
                "stderr": "",
                "interrupted": False,
            },
        }
    ).encode()
    proc = _post(raw, tmp_path / "home")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert "[archive id " in json.dumps(out)
