"""The decision daemon, driven by real `python -m ctxgate hook pre|post` subprocesses.

Started on demand, a 0600 socket in a 0700 directory, one daemon served many calls, idle
exit, a stale socket, a changed configuration, switched off by config, the audit log and
one-time grants through the daemon, and verdicts byte-identical to in-process ones.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import BACKENDS, Daemons, alive, pre_payload

EXPIRES = re.compile(rb"expires \d{4}-\d\d-\d\d \d\d:\d\d UTC")

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="reads daemon pids through /proc (Linux)")


@pytest.fixture
def daemons(tmp_path: Path):
    d = Daemons(tmp_path)
    yield d
    d.stop()


def test_first_call_starts_a_private_daemon_that_serves_the_next_calls(daemons: Daemons,
                                                                       tmp_path: Path) -> None:
    code, out, err = daemons.hook("pre", pre_payload("ls", tmp_path))
    assert code == 0, err
    assert "--sandbox read-only -c ls" in json.loads(out)["hookSpecificOutput"][
        "updatedInput"]["command"]
    [pid] = daemons.wait_pids(1)
    [sock] = daemons.sockets()
    st = sock.lstat()
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_uid == os.getuid()
    assert stat.S_IMODE(daemons.run_dir.stat().st_mode) == 0o700
    for command in ("git status", "rm -rf build/", "cat README.md"):
        code, _out, err = daemons.hook("pre", pre_payload(command, tmp_path))
        assert code == 0, err
    assert daemons.pids() == [pid]  # one daemon, started once


def test_idle_daemon_exits_and_removes_its_socket(tmp_path: Path) -> None:
    d = Daemons(tmp_path, CTXGATE_DAEMON__IDLE_SECONDS="1")
    try:
        code, _out, err = d.hook("pre", pre_payload("ls", tmp_path))
        assert code == 0, err
        started = time.monotonic()
        while d.pids() or d.sockets():
            assert time.monotonic() - started < 20, (d.pids(), d.sockets(), d.logs())
            time.sleep(0.05)
        assert "exiting (idle)" in d.logs()
        code, _out, err = d.hook("pre", pre_payload("ls", tmp_path))  # a successor starts
        assert code == 0, err
        assert len(d.wait_pids(1)) == 1
    finally:
        d.stop()


def test_stale_socket_of_a_killed_daemon_is_replaced(daemons: Daemons, tmp_path: Path) -> None:
    assert daemons.hook("pre", pre_payload("ls", tmp_path))[0] == 0
    [pid] = daemons.wait_pids(1)
    os.kill(pid, signal.SIGKILL)  # no clean-up: the socket file stays, nobody listens
    while alive(pid):
        time.sleep(0.01)
    [sock] = daemons.sockets()
    code, out, err = daemons.hook("pre", pre_payload("rm -rf build/", tmp_path,
                                                     request="show me the disk usage"))
    assert code == 0, err
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    [new] = daemons.wait_pids(1)
    assert new != pid and daemons.sockets() == [sock]


def test_verdicts_through_the_daemon_are_byte_identical(daemons: Daemons,
                                                        tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hello\n", encoding="utf-8")
    cases = [
        ("pre", pre_payload("ls", tmp_path), ()),
        ("pre", pre_payload("rm -rf build/", tmp_path), ()),
        ("pre", pre_payload("rm -rf build/", tmp_path, request="what is here?"), ()),
        ("pre", pre_payload("rm -rf build/", tmp_path), ("--approve",)),
        ("pre", pre_payload("rm -rf build/", tmp_path), ("--no-rewrite",)),
        ("pre", pre_payload("", tmp_path, tool="Read",
                            tool_input={"file_path": str(tmp_path / "README.md")}), ()),
        ("pre", pre_payload("ls", tmp_path), ("--harness", "codex")),
        ("pre", pre_payload("ls", tmp_path), ("--harness", "cursor")),
        ("pre", b"not json at all", ()),
        ("pre", pre_payload("", tmp_path, tool_input={"command": None}), ()),
        ("post", json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Grep",
                             "tool_input": {"pattern": "x"},
                             "tool_response": {"content": "\n".join(
                                 f"src/m{i}.py:{i}: match x {i}" for i in range(4000))}}
                            ).encode(), ()),
        ("post", json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Grep",
                             "tool_input": {}, "tool_response": "small"}).encode(), ()),
        ("post", b"[1, 2]", ()),
    ]
    for event, data, args in cases:
        via_daemon = daemons.hook(event, data, *args)
        in_process = daemons.in_process(event, data, *args)
        if event == "post":  # a digest names its expiry to the minute, which may roll over
            via_daemon, in_process = (
                (c, EXPIRES.sub(b"expires (time)", out), err)
                for c, out, err in (via_daemon, in_process))
        assert via_daemon == in_process, (event, data[:200], args)
    assert len(daemons.pids()) == 1  # the daemon did answer them
    blocked = [c for c in (daemons.hook("pre", b"not json at all"),) if c[0] == 2]
    assert blocked and b"not valid JSON" in blocked[0][2]


def test_a_changed_config_file_gets_its_own_daemon(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[gate]\nbackend = "{BACKENDS}:keyword_judge"\n', encoding="utf-8")
    d = Daemons(tmp_path, backend=None, CTXGATE_CONFIG=str(config))
    try:
        data = pre_payload("rm -rf build/", tmp_path)  # "please delete the build dir"
        code, out, err = d.hook("pre", data)
        assert code == 0, err
        assert "updatedInput" in json.loads(out)["hookSpecificOutput"]  # requested: allowed
        [first] = d.wait_pids(1)
        config.write_text(f'[gate]\nbackend = "{BACKENDS}:wary"\n', encoding="utf-8")
        code, out, err = d.hook("pre", data)
        assert code == 0, err
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert first in d.wait_pids(2)  # a second daemon; the first waits for its idle exit
    finally:
        d.stop()


def test_daemon_switched_off_by_config_leaves_a_marker_and_hooks_decide_in_process(
        tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[daemon]\nenabled = false\n", encoding="utf-8")
    d = Daemons(tmp_path, CTXGATE_CONFIG=str(config))
    try:
        for _ in range(2):
            code, out, err = d.hook("pre", pre_payload("ls", tmp_path))
            assert code == 0, err
            assert "updatedInput" in json.loads(out)["hookSpecificOutput"]
        assert list(d.run_dir.glob("g-*.off")) and d.sockets() == [] and d.pids() == []
    finally:
        d.stop()


def test_audit_log_and_one_time_grant_work_through_the_daemon(daemons: Daemons,
                                                              tmp_path: Path) -> None:
    data = pre_payload("rm -rf build/", tmp_path, request="what is in here?")
    code, out, _ = daemons.hook("pre", data)
    answer = json.loads(out)["hookSpecificOutput"]
    assert code == 0 and answer["permissionDecision"] == "deny"
    approve_id = answer["permissionDecisionReason"].split("ctxgate gate approve ")[1][:12]
    env = {k: v for k, v in daemons.env.items() if k != "CTXGATE_GATE__BACKEND"}
    granted = subprocess.run([sys.executable, "-m", "ctxgate", "gate", "approve", approve_id],
                             env=env, capture_output=True, text=True, timeout=120)
    assert granted.returncode == 0, granted.stderr
    code, out, err = daemons.hook("pre", data)
    assert code == 0, err
    assert "updatedInput" in json.loads(out)["hookSpecificOutput"]  # approved, once
    code, out, _ = daemons.hook("pre", data)
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert len(daemons.pids()) == 1
    with sqlite3.connect(tmp_path / "home" / "audit.db") as db:
        outcomes = [tuple(row) for row in db.execute(
            "SELECT verdict, approved FROM gate_audit ORDER BY id")]
    assert outcomes == [("deny", 0), ("allow", 1), ("deny", 0)]


def test_the_installed_command_starts_without_site_and_answers_the_same(daemons: Daemons,
                                                                        tmp_path: Path) -> None:
    """`hook install` writes `python -S …/_launch.py hook pre`: answered by the daemon, or in
    process after loading site itself, it prints what `python -m ctxgate hook pre` prints."""
    installed = json.loads(subprocess.run(
        [sys.executable, "-m", "ctxgate", "hook", "install"], env=daemons.env,
        capture_output=True, text=True, check=True, timeout=120).stdout)
    command = installed["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert " -S " in command and command.endswith("_launch.py hook pre")
    for data in (pre_payload("ls", tmp_path),
                 pre_payload("rm -rf build/", tmp_path, request="what is here?")):
        reference = daemons.in_process("pre", data)
        for extra in ({}, {"CTXGATE_NO_DAEMON": "1"}):
            got = subprocess.run(command, shell=True, input=data, capture_output=True,
                                 env={**daemons.env, **extra}, timeout=120, cwd=tmp_path)
            assert (got.returncode, got.stdout, got.stderr) == reference, extra
    assert len(daemons.pids()) == 1


def test_warnings_a_request_prints_reach_the_hooks_stderr(daemons: Daemons,
                                                          tmp_path: Path) -> None:
    """An audit log that cannot be opened is reported on stderr; through the daemon too."""
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "audit.db").mkdir()  # a directory: the audit log cannot open
    data = pre_payload("rm -rf build/", tmp_path, request="what is here?")
    via_daemon = daemons.hook("pre", data)
    assert b"gate decisions are not recorded" in via_daemon[2]
    assert via_daemon == daemons.in_process("pre", data)
    assert len(daemons.pids()) == 1
