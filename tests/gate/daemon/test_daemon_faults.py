"""A daemon that fails never lets a call through: it blocks, or the hook decides in-process.

Real hook and daemon subprocesses: a daemon that hangs holding the GIL (blocked within the
deadline, and the daemon is stopped), one killed mid-decision, a signal to the hook while the
daemon decides, a listener of another protocol version or speaking garbage, a socket owned by
another user, a directory that is not private, and a socket that other users cannot connect to.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import BLOCKED, Daemons, alive, connections, fake_server, pre_payload

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="reads daemon pids through /proc (Linux)")
ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make another user's files")
NOBODY = 65534


def spawn(d: Daemons, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ctxgate", "hook", "pre", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=d.env, cwd=d.tmp)


def test_a_daemon_that_hangs_blocks_within_the_deadline_and_is_stopped(tmp_path: Path) -> None:
    d = Daemons(tmp_path, backend="gil_hog")
    try:
        assert d.hook("pre", pre_payload("ls", tmp_path))[0] == 0  # fast path: no model
        [pid] = d.wait_pids(1)
        started = time.monotonic()
        code, out, err = d.hook("pre", pre_payload("rm -rf build/", tmp_path),
                                "--deadline", "2")
        elapsed = time.monotonic() - started
        assert code == 2 and out == b"", err
        assert BLOCKED.encode() in err
        assert elapsed < 3.0, elapsed
        until = time.monotonic() + 5
        while alive(pid):
            assert time.monotonic() < until, "the hung daemon was left running"
            time.sleep(0.01)
        code, _out, err = d.hook("pre", pre_payload("ls", tmp_path))  # a fresh one serves
        assert code == 0, err
    finally:
        d.stop()


def test_a_daemon_killed_mid_decision_blocks(tmp_path: Path) -> None:
    flag = tmp_path / "deciding"
    d = Daemons(tmp_path, backend="hangs_after_flag", CTXGATE_TEST_DECIDING_FLAG=str(flag))
    try:
        proc = spawn(d, "--deadline", "90")
        out, err = _kill_decider_then_finish(proc, flag, pre_payload("rm -rf build/", tmp_path))
        assert proc.returncode == 2 and out == b"", err
        assert b"daemon ended before it answered" in err
    finally:
        d.stop()


def _kill_decider_then_finish(proc: subprocess.Popen, flag: Path,
                              data: bytes) -> tuple[bytes, bytes]:
    assert proc.stdin is not None
    proc.stdin.write(data)
    proc.stdin.close()
    until = time.monotonic() + 60
    while not (flag.exists() and flag.read_text()):
        assert time.monotonic() < until, "the decision never started"
        time.sleep(0.005)
    decider = int(flag.read_text())
    assert decider != proc.pid
    os.kill(decider, signal.SIGKILL)
    proc.stdin = None
    return proc.communicate(timeout=60)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_while_the_daemon_decides_blocks(sig: int, tmp_path: Path) -> None:
    flag = tmp_path / "deciding"
    d = Daemons(tmp_path, backend="hangs_after_flag", CTXGATE_TEST_DECIDING_FLAG=str(flag))
    try:
        proc = spawn(d, "--deadline", "90")
        assert proc.stdin is not None
        proc.stdin.write(pre_payload("rm -rf build/", tmp_path))
        proc.stdin.close()
        proc.stdin = None
        until = time.monotonic() + 60
        while not (flag.exists() and flag.read_text()):
            assert time.monotonic() < until
            time.sleep(0.005)
        os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 2 and out == b"", err
        assert BLOCKED.encode() in err and signal.Signals(sig).name.encode() in err
    finally:
        d.stop()


@pytest.mark.parametrize("mode", ["protocol", "garbage"])
def test_a_listener_of_another_protocol_is_not_used(mode: str, tmp_path: Path) -> None:
    d = Daemons(tmp_path)
    try:
        sock = d.learn_socket()
        seen = tmp_path / "seen"
        server = fake_server(sock, mode, seen)
        try:
            data = pre_payload("rm -rf build/", tmp_path, request="what is here?")
            got = d.hook("pre", data)
            assert connections(seen) == 1  # it was asked, and its answer was not used
            assert got == d.in_process("pre", data)
            assert json.loads(got[1])["hookSpecificOutput"]["permissionDecision"] == "deny"
        finally:
            server.kill()
    finally:
        d.stop()


def test_an_answer_with_a_status_that_lets_the_call_run_blocks(tmp_path: Path) -> None:
    """Exit 1 would be a non-blocking error (the call runs): only 0 and 2 are passed on."""
    d = Daemons(tmp_path)
    try:
        sock = d.learn_socket()
        server = fake_server(sock, "exit1", tmp_path / "seen")
        try:
            code, out, err = d.hook("pre", pre_payload("ls", tmp_path))
            assert code == 2 and out == b"" and b"answered exit status 1" in err, err
        finally:
            server.kill()
    finally:
        d.stop()


def test_a_listener_that_never_answers_blocks_within_the_deadline(tmp_path: Path) -> None:
    d = Daemons(tmp_path)
    try:
        sock = d.learn_socket()
        seen = tmp_path / "seen"
        server = fake_server(sock, "silent", seen)
        try:
            started = time.monotonic()
            code, out, err = d.hook("pre", pre_payload("ls", tmp_path), "--deadline", "1.5")
            assert time.monotonic() - started < 2.5
            assert code == 2 and out == b"" and BLOCKED.encode() in err, err
            assert connections(seen) == 1
        finally:
            server.kill()  # the hook killed the peer it timed out on: here, this fake
    finally:
        d.stop()


@ROOT
def test_a_socket_owned_by_another_user_is_never_connected_to(tmp_path: Path) -> None:
    d = Daemons(tmp_path)
    try:
        sock = d.learn_socket()
        seen = tmp_path / "seen"
        server = fake_server(sock, "protocol", seen)
        try:
            os.chown(sock, NOBODY, NOBODY)
            data = pre_payload("ls", tmp_path)
            got = d.hook("pre", data)
            assert got[0] == 0 and got == d.in_process("pre", data)
            assert connections(seen) == 0  # not even connected: the environment stays here
        finally:
            server.kill()
    finally:
        d.stop()


@pytest.mark.parametrize("problem", ["mode", "owner", "symlink"])
def test_a_directory_that_is_not_private_is_refused(problem: str, tmp_path: Path) -> None:
    if problem == "owner" and os.geteuid() != 0:
        pytest.skip("needs root to make another user's directory")
    d = Daemons(tmp_path)
    try:
        if problem == "mode":
            os.chmod(d.run_dir, 0o755)
        elif problem == "owner":
            os.chown(d.run_dir, NOBODY, NOBODY)
        else:
            real = tmp_path / "real"
            real.mkdir(mode=0o700)
            d.env["CTXGATE_RUNTIME_DIR"] = str(tmp_path / "link")
            (tmp_path / "link").symlink_to(real)
        data = pre_payload("rm -rf build/", tmp_path)
        got = d.hook("pre", data)
        assert got[0] == 0 and got == d.in_process("pre", data)
        runtime = tmp_path / "real" if problem == "symlink" else d.run_dir
        assert list(runtime.glob("g-*.sock")) == []
    finally:
        d.stop()


@ROOT
def test_other_users_cannot_connect_to_the_socket_nor_be_served(tmp_path: Path) -> None:
    d = Daemons(tmp_path)
    try:
        assert d.hook("pre", pre_payload("ls", tmp_path))[0] == 0
        [sock] = d.sockets()
        os.chmod(d.run_dir, 0o711)  # let nobody reach the socket file; its 0600 must hold
        probe = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\n"
                 "try:\n    s.connect(sys.argv[1])\nexcept PermissionError:\n"
                 "    print('refused')\nelse:\n    print('connected')\n")
        python = "/usr/bin/python3"  # one that user nobody may run
        if not os.access(python, os.X_OK):
            pytest.skip("no system python3 for user nobody")
        out = subprocess.run([python, "-c", probe, str(sock)], capture_output=True,
                             text=True, timeout=60, user=NOBODY, group=NOBODY, cwd="/")
        assert out.stdout.strip() == "refused", out.stderr
        os.chmod(sock, 0o666)  # the control: the file mode was what refused it, and past it
        out = subprocess.run([python, "-c", probe, str(sock)], capture_output=True,
                             text=True, timeout=60, user=NOBODY, group=NOBODY, cwd="/")
        assert out.stdout.strip() == "connected", out.stderr
        until = time.monotonic() + 10  # ... the daemon's peer check refuses another uid
        while f"refused a connection from uid {NOBODY}" not in d.logs():
            assert time.monotonic() < until, d.logs()
            time.sleep(0.02)
    finally:
        d.stop()
