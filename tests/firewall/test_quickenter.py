"""The hooks' wrapper under ``--sandbox read-only`` starts no second interpreter, and the
sandbox it enters still refuses writes, passes bytes and exit codes through and fails closed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ctxgate.firewall import quickenter
from ctxgate.sandbox import MECHANISMS_ENV, detect
from ctxgate.sandbox.detect import LINUX_MECHANISMS

LAUNCH = Path(quickenter.__file__).parents[1] / "_launch.py"
ENTER = "_enter.py"


def _usable(name: str) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    saved = os.environ.get(MECHANISMS_ENV)
    os.environ[MECHANISMS_ENV] = name
    try:
        return detect().mechanism == name
    finally:
        if saved is None:
            os.environ.pop(MECHANISMS_ENV, None)
        else:
            os.environ[MECHANISMS_ENV] = saved


@pytest.fixture(params=LINUX_MECHANISMS)
def mechanism(request: pytest.FixtureRequest) -> str:
    if not _usable(request.param):
        pytest.skip(f"{request.param} is not usable on this machine")
    return str(request.param)


def _env(tmp_path: Path, mechanism: str) -> dict[str, str]:
    rt = tmp_path / "rt"
    rt.mkdir(mode=0o700, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    return {**env, MECHANISMS_ENV: mechanism, "CTXGATE_RUNTIME_DIR": str(rt),
            "CTXGATE_HOME": str(tmp_path / "home")}


def _wrapper(command: str, *, sandbox: bool = True) -> list[str]:
    return [sys.executable, "-S", str(LAUNCH), "run",
            *(["--sandbox", "read-only"] if sandbox else []), "-c", command]


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _descendants(pid: int) -> list[tuple[str, str]]:
    """(exe, cmdline) of every process below ``pid``."""
    tree, out, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            todo.append(child)
            try:
                exe = os.path.realpath(f"/proc/{child}/exe")
                cmd = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            out.append((exe, cmd.decode(errors="replace")))
    return out


def test_the_wrapper_starts_no_second_interpreter(mechanism: str, tmp_path: Path) -> None:
    env = _env(tmp_path, mechanism)
    proc = subprocess.Popen(_wrapper("exec sleep 30"), env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        below: list[tuple[str, str]] = []
        while time.monotonic() < deadline:
            below = _descendants(proc.pid)
            if any(cmd.startswith("sleep 30") for _, cmd in below):
                break
            time.sleep(0.05)
        assert any(cmd.startswith("sleep 30") for _, cmd in below), below
        python = os.path.realpath(sys.executable)
        assert not [cmd for _, cmd in below if ENTER in cmd], below  # no helper interpreter
        if mechanism == "bwrap":  # bwrap and the command only: no Python at all
            assert not [exe for exe, _ in below if exe == python], below
        else:  # forks of the wrapper (same command line), never a new interpreter start
            wrapper_cmd = " ".join(_wrapper("exec sleep 30"))
            assert all(cmd.strip() == wrapper_cmd for exe, cmd in below if exe == python), below
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 128 + signal.SIGTERM  # forwarded and passed on, as unsandboxed
    assert b"SIGTERM forwarded to the command" in out + err


def test_a_write_on_the_fast_path_fails_and_changes_nothing(mechanism: str,
                                                            tmp_path: Path) -> None:
    target = tmp_path / "made.txt"
    (tmp_path / "kept.txt").write_text("before\n")
    out = subprocess.run(
        _wrapper(f"echo x > {target}; echo y >> {tmp_path / 'kept.txt'}; "
                 f"rm -f {tmp_path / 'kept.txt'}"),
        env=_env(tmp_path, mechanism), stdin=subprocess.DEVNULL, capture_output=True,
        timeout=60)
    assert out.returncode != 0
    assert not target.exists()
    assert (tmp_path / "kept.txt").read_text() == "before\n"
    assert f"read-only sandbox ({mechanism}; fast path); a write failed" in out.stderr.decode()


def test_output_and_exit_codes_are_the_unsandboxed_ones(mechanism: str,
                                                        tmp_path: Path) -> None:
    env = _env(tmp_path, mechanism)
    for command in ("printf 'a\\0b\\377\\n'; printf 'err\\n' >&2; exit 3",
                    "yes | head -1",  # SIGPIPE at its default in the sandbox too
                    "kill -TERM $$",
                    "exit 0"):
        plain = subprocess.run(_wrapper(command, sandbox=False), env=env,
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        boxed = subprocess.run(_wrapper(command), env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=60)
        assert (boxed.returncode, boxed.stdout) == (plain.returncode, plain.stdout), command
        if command == "yes | head -1":
            assert boxed.stdout == b"y\n" and b"Broken pipe" not in boxed.stdout


def test_a_failed_setup_in_the_fork_runs_nothing(tmp_path: Path) -> None:
    if not _usable("namespace"):
        pytest.skip("the namespace mechanism is not usable here")
    helper = quickenter.load_helper()
    marker = tmp_path / "ran"

    def refuse() -> None:
        raise helper.SetupError("unshare: refused by the test")  # type: ignore[attr-defined]

    saved = helper._unshare_namespaces  # type: ignore[attr-defined]
    helper._unshare_namespaces = refuse  # type: ignore[attr-defined]
    try:
        started = quickenter.fork_enter("namespace", ["touch", str(marker)], False)
    finally:
        helper._unshare_namespaces = saved  # type: ignore[attr-defined]
    assert started is not None
    pid, fd = started
    data = b""
    while chunk := os.read(fd, 4096):
        data += chunk
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == quickenter.SETUP_FAILED
    assert b"ctxgate sandbox: namespace setup failed: unshare: refused by the test" in data
    assert not marker.exists()


def test_it_declines_when_another_thread_runs() -> None:
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        assert quickenter.fork_enter("namespace", ["true"], False) is None
    finally:
        stop.set()
        worker.join()
    assert quickenter.fork_enter("bwrap", ["true"], False) is None  # a program: spawned


def test_a_large_output_continues_in_the_full_firewall_on_the_same_child(
        mechanism: str, tmp_path: Path) -> None:
    target = tmp_path / "made.txt"
    out = subprocess.run(_wrapper(f"seq 1 200000; touch {target}; exit 4"),
                         env=_env(tmp_path, mechanism), stdin=subprocess.DEVNULL,
                         capture_output=True, timeout=120)
    assert out.returncode == 4
    assert not target.exists()
    assert b"200,001 lines" in out.stdout and b"exit 4" in out.stdout
    assert f"read-only sandbox ({mechanism}; fast path)".encode() in out.stdout
