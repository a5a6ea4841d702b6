"""A broken archive never blocks a command, nor the gate (issue 13, part 4).

Each state is made for real, as root too (where ``chmod`` does not stop writes): a read-only
bind mount or a full tmpfs in a private mount namespace (``unshare -m``; ``unshare -rm`` for
non-root where user namespaces are allowed, else ``chmod 0500`` for non-root), a file size
limit (``RLIMIT_FSIZE``), a truncated, garbled or exclusively locked ``archive.db``, a home
under a regular file, and ``archive.db`` as a directory. In each, ``ctxgate run`` (a real
subprocess) must run the command (a side-effect file appears), keep its exit code (3), print
the output bounded by the digest budget with ``not archived (<why>; fix: …)`` and the count
of lost bytes, and ``ctxgate gate check`` / ``hook pre`` of ``ls`` must still be decided.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

DIGEST_MAX_BYTES = 6_000
"""The default [firewall] digest_max_bytes: the bounded view never exceeds it (+ newline)."""

# ~200 KB of incompressible text in 2,000 lines, a side effect, exit 3.
COMMAND = ("echo ran > {side}; head -c 150000 /dev/urandom | base64 -w 100; exit 3")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CTXGATE_") or k == "CTXGATE_NO_DAEMON"}
    env["CTXGATE_HOME"] = str(home)
    env["CTXGATE_CONFIG"] = str(home.parent / "no-config.toml")
    return env


@dataclass
class State:
    """How to run ctxgate inside one broken-archive state."""

    home: Path
    wrap: list[str] = field(default_factory=list)
    """Argv prefix (a private mount namespace that sets the state up), or empty."""
    preexec: Callable[[], None] | None = None

    def run(self, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([*self.wrap, sys.executable, "-m", "ctxgate", *args],
                              input=stdin, capture_output=True, env=_env(self.home),
                              timeout=120, preexec_fn=self.preexec)


def _namespace_prefix() -> list[str] | None:
    """``unshare`` argv that gives a private mount namespace we may mount in, or None."""
    if shutil.which("unshare") is None:
        return None
    for prefix in (["unshare", "-m"], ["unshare", "-rm"]):
        probe = subprocess.run([*prefix, "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                               capture_output=True, timeout=30)
        if probe.returncode == 0:
            return prefix
    return None


NAMESPACE = _namespace_prefix()


def _in_namespace(setup: str) -> list[str]:
    if NAMESPACE is None:
        pytest.skip("no private mount namespace here (unshare -m / -rm refused); "
                    "the read-only and full-disk states need one as root")
    return [*NAMESPACE, "sh", "-c", setup + ' && exec "$@"', "sh"]


def _make_archive(home: Path) -> None:
    """A real archive with entries (and the audit log), as a previous session left it."""
    proc = State(home).run("run", "-c", "seq 1 50000")
    assert proc.returncode == 0, proc.stderr
    for suffix in ("-wal", "-shm"):
        (home / f"archive.db{suffix}").unlink(missing_ok=True)


@contextmanager
def broken(kind: str, tmp: Path) -> Iterator[State]:
    home = tmp / "home"
    if kind in ("read-only home", "read-only home, archive exists"):
        if kind == "read-only home":
            home.mkdir(mode=0o700)
        else:
            _make_archive(home)
        if os.geteuid() != 0:
            home.chmod(0o500)
            yield State(home)
            home.chmod(0o700)
            return
        yield State(home, _in_namespace(
            f"mount --bind {home} {home} && mount -o remount,bind,ro {home}"))
    elif kind == "full disk before the database exists":
        home.mkdir(mode=0o700)
        yield State(home, _in_namespace(
            f"mount -t tmpfs -o size=64k,mode=0700 tmpfs {home} && "
            f"{{ head -c 1000000 /dev/zero > {home}/fill 2>/dev/null; true; }}"))
    elif kind == "file size limit (RLIMIT_FSIZE)":
        home.mkdir(mode=0o700)

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))

        yield State(home, preexec=limit)
    elif kind == "truncated archive.db":
        _make_archive(home)
        os.truncate(home / "archive.db", 3000)
        yield State(home)
    elif kind == "garbled archive.db":
        home.mkdir(mode=0o700)
        (home / "archive.db").write_bytes(os.urandom(65_536))
        yield State(home)
    elif kind == "locked archive.db":
        _make_archive(home)
        held = tmp / "held"
        holder = subprocess.Popen([sys.executable, "-c", (
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('PRAGMA locking_mode=EXCLUSIVE')\n"
            "c.execute('BEGIN EXCLUSIVE')\n"
            "c.execute('CREATE TABLE IF NOT EXISTS holder (x)')\n"
            "open(sys.argv[2], 'w').close()\n"
            "time.sleep(300)\n"), str(home / "archive.db"), str(held)])
        try:
            deadline = time.monotonic() + 30
            while not held.exists():
                assert time.monotonic() < deadline and holder.poll() is None
                time.sleep(0.05)
            with pytest.raises(sqlite3.OperationalError, match="locked"):  # really locked
                sqlite3.connect(home / "archive.db", timeout=0.2).execute(
                    "SELECT COUNT(*) FROM sqlite_master").fetchone()
            yield State(home)
        finally:
            holder.kill()
            holder.wait()
    elif kind == "home under a regular file":
        (tmp / "file").write_text("not a directory\n")
        yield State(tmp / "file" / "home")
    elif kind == "archive.db is a directory":
        (home / "archive.db").mkdir(parents=True)
        yield State(home)
    else:
        raise AssertionError(kind)


STATES = {
    "read-only home": "read-only or not writable",
    "read-only home, archive exists": "read-only or not writable",
    "full disk before the database exists": "is full",
    "file size limit (RLIMIT_FSIZE)": "disk I/O error",
    "truncated archive.db": "archive.db is corrupt",
    "garbled archive.db": "archive.db is not a SQLite database",
    "locked archive.db": "archive.db is locked by another process",
    "home under a regular file": "cannot be created (a parent is not a directory)",
    "archive.db is a directory": "is a directory, not a database file",
}


@pytest.mark.parametrize("kind", list(STATES))
def test_a_broken_archive_runs_the_command_and_the_gate_still_decides(
        kind: str, tmp_path: Path) -> None:
    side = tmp_path / "side-effect"
    with broken(kind, tmp_path) as state:
        started = time.monotonic()
        proc = state.run("run", "-c", COMMAND.format(side=side))
        elapsed = time.monotonic() - started
        check = state.run("gate", "check", "--tool", "bash", "--args", '{"command": "ls"}')
        pre = state.run("hook", "pre", stdin=json.dumps({
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "ls"}, "session_id": "s", "tool_use_id": "t"}).encode())
    # the command ran, its exit code is kept
    assert side.read_text() == "ran\n", proc.stderr
    assert proc.returncode == 3, proc.stderr
    assert elapsed < 30  # a locked file is given up on after 3 s, not 60
    # the output is bounded (the digest budget) and says why it is not archived and what to do
    out = proc.stdout.decode()
    assert len(proc.stdout) <= DIGEST_MAX_BYTES + 1, len(proc.stdout)
    assert out.startswith("[ctxgate digest: shell output, 202,000 bytes, 2,000 lines")
    assert "exit 3]" in out and "[not archived; digest: " in out
    (marker,) = [line for line in out.splitlines() if line.startswith("[not archived (")]
    assert STATES[kind] in marker.split("; fix: ")[0], marker  # why
    assert len(marker.split("; fix: ")[1]) > 20  # and what to do
    assert "at least 196,000 of the 202,000 output bytes are omitted below and lost]" in out
    assert "--- no drill down: the output is not archived ---" in out
    # the gate still decides a read-only call (fast path), and the hook does not block it
    assert check.returncode == 0, check.stderr
    assert check.stdout.decode().startswith("allow: "), check.stdout
    assert pre.returncode == 0, pre.stderr
    decision = json.loads(pre.stdout)["hookSpecificOutput"]
    assert decision.get("permissionDecision") != "deny", decision


def test_the_disk_filling_mid_stream_keeps_the_command_running(tmp_path: Path) -> None:
    """An archive that opens fine but fails on the first flush (8 chunks) in a 1 MiB tmpfs."""
    home = tmp_path / "home"
    home.mkdir()
    side = tmp_path / "side"
    command = (f"head -c 12000000 /dev/urandom | base64 -w 120; echo ran > {side}; "
               "echo the-last-line; exit 3")
    state = State(home, _in_namespace(f"mount -t tmpfs -o size=1m,mode=0700 tmpfs {home}"))
    proc = state.run("run", "-c", command)
    assert proc.returncode == 3, proc.stderr
    assert side.read_text() == "ran\n"  # the command ran to its end after the store failed
    out = proc.stdout.decode()
    assert len(proc.stdout) <= DIGEST_MAX_BYTES + 1
    assert "[not archived (the disk holding " in out and "is full; fix: " in out, out[:1500]
    assert "output bytes are omitted below and lost]" in out
    assert "the-last-line" in out  # the tail is shown


def test_raw_output_is_complete_and_says_it_was_not_stored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "archive.db").write_bytes(b"garbage" * 1000)
    proc = State(home).run("run", "--raw", "-c", "seq 1 100000; exit 3")
    assert proc.returncode == 3
    assert proc.stdout == b"".join(b"%d\n" % i for i in range(1, 100001))
    assert (b"ctxgate: not archived (archive.db is not a SQLite database (garbled or foreign "
            b"file); fix: move it aside") in proc.stderr
    assert b"the output above is complete; it was not stored" in proc.stderr


def test_a_small_output_is_shown_whole_and_the_note_goes_to_stderr(tmp_path: Path) -> None:
    """Below the threshold in bytes nothing is stored (the passthrough path), so there is
    nothing to report; an output the full path handles says it was not stored."""
    home = tmp_path / "file" / "home"
    (tmp_path / "file").write_text("x")
    proc = State(home).run("run", "-c", "echo hello; exit 5")
    assert proc.returncode == 5 and proc.stdout == b"hello\n" and proc.stderr == b""
    # 2,292 bytes (over min_tokens in bytes), ~1,200 tokens: verbatim through the full path
    proc = State(home).run("run", "-c", "seq 1 600; exit 5")
    assert proc.returncode == 5
    assert proc.stdout == b"".join(b"%d\n" % i for i in range(1, 601))
    assert b"ctxgate: not archived (" in proc.stderr
    assert b"the output is shown whole; it was not stored" in proc.stderr


def test_a_corrupt_audit_file_does_not_deny(tmp_path: Path) -> None:
    """The audit log is its own file now; even when that one is garbled the gate decides."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "audit.db").write_bytes(os.urandom(20_000))
    proc = State(home).run("gate", "check", "--tool", "bash", "--args", '{"command": "ls"}')
    assert proc.returncode == 0 and proc.stdout.decode().startswith("allow: ")
    assert proc.stderr.decode().count("gate decisions are not recorded") == 1


def test_hook_post_digests_a_large_output_even_with_a_broken_archive(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "archive.db").write_bytes(os.urandom(10_000))
    output = "".join(f"line {i} of a long build log\n" for i in range(20_000))
    proc = State(home).run("hook", "post", stdin=json.dumps({
        "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "make"},
        "tool_response": {"stdout": output, "stderr": "", "interrupted": False},
        "session_id": "s", "tool_use_id": "t"}).encode())
    assert proc.returncode in (0, 2), proc.stderr  # the harness shows the digest, not 500 KB
    shown = proc.stdout.decode() + proc.stderr.decode()
    assert "[not archived (archive.db is not a SQLite database" in shown
    assert len(shown.encode()) < 20_000


def test_an_unreachable_redis_archive_runs_the_command(tmp_path: Path) -> None:
    home = tmp_path / "home"
    side = tmp_path / "side"
    env = dict(_env(home), CTXGATE_ARCHIVE__BACKEND="redis",
               CTXGATE_ARCHIVE__REDIS_URL="redis://127.0.0.1:1/0")  # nothing listens on port 1
    proc = subprocess.run([sys.executable, "-m", "ctxgate", "run", "-c",
                           COMMAND.format(side=side)], capture_output=True, env=env, timeout=60)
    assert proc.returncode == 3 and side.read_text() == "ran\n"
    out = proc.stdout.decode()
    assert len(proc.stdout) <= DIGEST_MAX_BYTES + 1
    assert "[not archived (the Redis archive failed to connect (ConnectionError: " in out
    assert "fix: check that the server answers (redis-cli ping)" in out
