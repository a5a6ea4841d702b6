"""The read-only sandbox, for real: writing commands change nothing, reading ones see the same.

Every mechanism this machine offers is exercised with real processes on a real tree (files, a
git repository, a fake $HOME, a directory under /tmp); a mechanism that is not available here
is skipped with the reason that names what is missing, and on Linux at least one must work.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxgate.sandbox import MECHANISMS_ENV, ReadOnlyRun, SandboxInfo, detect, sandbox_argv
from ctxgate.sandbox.detect import LINUX_MECHANISMS

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="these tests run the Linux mechanisms")

SRC = Path(__file__).resolve().parents[2] / "src"


def all_mechanisms() -> SandboxInfo:
    saved = os.environ.pop(MECHANISMS_ENV, None)
    try:
        return detect(probe_all=True)
    finally:
        if saved is not None:
            os.environ[MECHANISMS_ENV] = saved


@pytest.fixture(params=LINUX_MECHANISMS)
def mechanism(request: pytest.FixtureRequest) -> str:
    status = all_mechanisms().status(request.param)
    assert status is not None
    if not status.available:
        pytest.skip(f"{request.param} is not available on this machine: {status.why}")
    return request.param


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """A work tree with files and a git repository, a $HOME, and a directory under /tmp."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "f").write_text("hello\nworld\n")
    (work / "existing").write_text("keep me\n")
    (work / "sub").mkdir()
    (work / "sub" / "g.txt").write_text("nested\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "first"]):
        subprocess.run(cmd, cwd=work, env=env, check=True, capture_output=True)
    (work / "f").write_text("hello\nchanged\n")  # so `git status` has something to say
    home = tmp_path / "home"
    home.mkdir()
    (home / ".profile").write_text("# nothing\n")
    outside = Path(tempfile.mkdtemp(prefix="ctxgate-sandbox-", dir="/tmp"))
    (outside / "t").write_text("tmp file\n")
    try:
        yield {"work": work, "home": home, "tmp": outside}
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def snapshot(*roots: Path) -> dict[str, tuple]:
    """Every path under the roots: kind, mode, size, mtime (ns) and content hash."""
    state: dict[str, tuple] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in [*dirnames, *filenames, ""]:
                path = os.path.join(dirpath, name) if name else dirpath
                st = os.lstat(path)
                digest = ""
                if os.path.isfile(path) and not os.path.islink(path):
                    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
                state[path] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_uid, digest)
    return state


def run(argv: list[str], tree: dict[str, Path]) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(tree["home"]), "OUT": str(tree["tmp"]), "LC_ALL": "C"}
    return subprocess.run(argv, cwd=tree["work"], env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=60)


WRITES = [
    "touch x",
    "echo hi > f",
    "echo hi >> f",
    "rm existing",
    "mkdir d",
    "touch existing",  # only the mtime would change
    "chmod 600 f",
    "mv f moved",
    "ln -s f link",
    "truncate -s 0 existing",
    "rm -rf sub",
    "touch \"$OUT/x\"",
    "echo hi > \"$OUT/t\"",
    "rm \"$OUT/t\"",
    "touch \"$HOME/x\"",
    "echo hi >> \"$HOME/.profile\"",
    "mkdir \"$HOME/d\"",
    "git commit -q --allow-empty -m sneaky",
    "git checkout -q -- f",
    "python3 -c \"open('py-x', 'w').write('x')\"",
    "for p in /proc/[0-9]*; do echo x > $p/cwd/escaped; done; test -e escaped",
    "cp f /dev/shm/ctxgate-sandbox-test && cp /dev/shm/ctxgate-sandbox-test ./copied",
]


@pytest.mark.parametrize("command", WRITES)
def test_a_write_fails_and_changes_nothing(mechanism: str, tree: dict[str, Path],
                                           command: str) -> None:
    before = snapshot(*tree.values())
    proc = run(sandbox_argv(mechanism, ["bash", "-c", command], cwd=str(tree["work"])), tree)
    assert proc.returncode != 0, (command, proc.stdout, proc.stderr)
    assert snapshot(*tree.values()) == before, (command, proc.stderr)
    assert not Path("/dev/shm/ctxgate-sandbox-test").exists()


def test_the_write_error_is_read_only_or_permission(mechanism: str,
                                                    tree: dict[str, Path]) -> None:
    proc = run(sandbox_argv(mechanism, ["bash", "-c", "touch x"]), tree)
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert "Read-only file system" in err or "Permission denied" in err, err


READS = [
    "cat f",
    "ls -la",
    "ls -laR sub",
    "git status",
    "git log --format=%s",
    "git diff",
    "find . -path ./.git -prune -o -type f -print | sort",
    "wc -c f existing",
    "grep -rn hello .",
    "head -c 64 /etc/passwd",
    "echo quiet > /dev/null && cat existing",
    "cat \"$HOME/.profile\" \"$OUT/t\"",
    "id -u",
]


@pytest.mark.parametrize("command", READS)
def test_a_read_gives_byte_identical_output(mechanism: str, tree: dict[str, Path],
                                            command: str) -> None:
    plain = run(["bash", "-c", command], tree)
    before = snapshot(*tree.values())
    boxed = run(sandbox_argv(mechanism, ["bash", "-c", command]), tree)
    assert plain.returncode == 0, plain.stderr
    assert boxed.returncode == 0, boxed.stderr
    assert boxed.stdout == plain.stdout
    assert boxed.stderr == plain.stderr
    assert snapshot(*tree.values()) == before


def test_exit_status_and_signals_pass_through(mechanism: str, tree: dict[str, Path]) -> None:
    assert run(sandbox_argv(mechanism, ["bash", "-c", "exit 7"]), tree).returncode == 7
    killed = run(sandbox_argv(mechanism, ["bash", "-c", "kill -TERM $$"]), tree)
    assert killed.returncode in (128 + 15, -15)
    missing = run(sandbox_argv(mechanism, ["no-such-program-xyz"]), tree)
    assert missing.returncode not in (0, 125)


def test_a_mechanism_really_works_on_linux() -> None:
    info = all_mechanisms()
    assert info.mechanism is not None, f"no read-only sandbox works here: {info.why_not}"
    assert any(s.available for s in info.checked)


def test_the_environment_variable_limits_and_orders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MECHANISMS_ENV, "")
    none = detect()
    assert none.mechanism is None
    assert f"not selected by {MECHANISMS_ENV}" in none.why_not
    monkeypatch.setenv(MECHANISMS_ENV, "landlock,namespace")
    info = detect()
    assert info.checked[0].name == "landlock"


# -- ctxgate run --sandbox read-only, through the real command line ------------------------------

def ctxgate_run(tree: dict[str, Path], home: Path, *args: str,
                mechanisms: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env.update(CTXGATE_HOME=str(home), HOME=str(tree["home"]),
               PYTHONPATH=str(SRC) + os.pathsep + env.get("PYTHONPATH", ""))
    if mechanisms is not None:
        env[MECHANISMS_ENV] = mechanisms
    return subprocess.run([sys.executable, "-m", "ctxgate", "run", *args], cwd=tree["work"],
                          env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)


def test_cli_run_sandboxed_write_leaves_nothing_and_tells_the_model(
        mechanism: str, tree: dict[str, Path], clean_environ: Path) -> None:
    before = snapshot(tree["work"])
    proc = ctxgate_run(tree, clean_environ, "--sandbox", "read-only", "-c", "touch x",
                       mechanisms=mechanism)
    assert proc.returncode == 1
    assert not (tree["work"] / "x").exists()
    assert snapshot(tree["work"]) == before
    shown = proc.stdout.decode() + proc.stderr.decode()
    assert f"ctxgate: this command ran in a read-only sandbox ({mechanism}; fast path); " \
           "a write failed" in shown
    assert shown.count("read-only sandbox") == 1


def test_cli_run_sandboxed_read_is_verbatim_without_a_note(
        mechanism: str, tree: dict[str, Path], clean_environ: Path) -> None:
    proc = ctxgate_run(tree, clean_environ, "--sandbox", "read-only", "--", "cat", "f",
                       mechanisms=mechanism)
    assert proc.returncode == 0
    assert proc.stdout == b"hello\nchanged\n"
    assert proc.stderr == b""


def test_cli_run_without_any_sandbox_runs_and_says_why_once(
        tree: dict[str, Path], clean_environ: Path) -> None:
    proc = ctxgate_run(tree, clean_environ, "--sandbox", "read-only", "-c", "touch x",
                       mechanisms="")
    assert proc.returncode == 0
    assert (tree["work"] / "x").exists()  # documented: not blocked, only reported
    err = proc.stderr.decode()
    assert err.count("not sandboxed: ") == 1
    assert f"not selected by {MECHANISMS_ENV}" in err


def test_cli_run_rejects_an_unknown_sandbox(tree: dict[str, Path],
                                            clean_environ: Path) -> None:
    proc = ctxgate_run(tree, clean_environ, "--sandbox", "write-some", "--", "true",
                       mechanisms=None)
    assert proc.returncode == 2
    assert "the only sandbox is 'read-only'" in proc.stderr.decode()


def test_write_watch_sees_a_message_split_across_reads() -> None:
    info = SandboxInfo(mechanism="landlock")
    guard = ReadOnlyRun(info=info)
    guard.feed(b"touch: cannot touch 'x': Read-only fi")
    guard.feed(b"le system\n")
    assert guard.notes(1) and "a write failed" in guard.notes(1)[0]
    assert guard.notes(0) == ()  # a command that succeeded needs no note
    quiet = ReadOnlyRun(info=info)
    quiet.feed(b"error: no such file\n")
    assert quiet.notes(1) == ()


# -- as an unprivileged user (the user-namespace path of `namespace`) ---------------------------

NOBODY = 65534


@pytest.fixture
def nobody_tree() -> Iterator[Path]:
    """A tree owned by uid 65534 under /tmp, for running the mechanisms as that user."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to an unprivileged user; this run is already "
                    "unprivileged, so the tests above cover that path")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed, so no switch to uid 65534")
    root = Path(tempfile.mkdtemp(prefix="ctxgate-sandbox-nobody-", dir="/tmp"))
    try:
        os.chmod(root, 0o755)
        shutil.copy(Path(__file__).resolve().parents[2] / "src/ctxgate/sandbox/_enter.py",
                    root / "_enter.py")
        os.chmod(root / "_enter.py", 0o644)
        work = root / "work"
        work.mkdir()
        (work / "f").write_text("hello\n")
        (work / "existing").write_text("keep\n")
        for path in (work, work / "f", work / "existing"):
            os.chown(path, NOBODY, NOBODY)
        yield work
    finally:
        shutil.rmtree(root, ignore_errors=True)


def as_nobody(argv: list[str]) -> list[str]:
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", *argv]


@pytest.mark.parametrize("command", ["touch x", "echo hi > f", "rm existing", "mkdir d"])
def test_unprivileged_user_cannot_write_either(mechanism: str, nobody_tree: Path,
                                               command: str) -> None:
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else None
    if mechanism != "bwrap" and python is None:
        pytest.skip("no system /usr/bin/python3 that uid 65534 can run")
    argv = sandbox_argv(mechanism, ["bash", "-c", command])
    if mechanism != "bwrap":
        argv = [python, "-I", "-S", str(nobody_tree.parent / "_enter.py"), *argv[4:]]
    control = subprocess.run(as_nobody(["bash", "-c", "touch control && rm control"]),
                             cwd=nobody_tree, capture_output=True, timeout=60)
    assert control.returncode == 0, control.stderr  # unsandboxed, this user can write here
    before = snapshot(nobody_tree)
    proc = subprocess.run(as_nobody(argv), cwd=nobody_tree, capture_output=True, timeout=60)
    assert proc.returncode != 0, proc.stderr
    assert snapshot(nobody_tree) == before
    reads = subprocess.run(as_nobody([*argv[:-1], "cat f; id -u"]), cwd=nobody_tree,
                           capture_output=True, timeout=60)
    assert reads.stdout == f"hello\n{NOBODY}\n".encode(), reads.stderr


def test_cli_run_sandboxed_timeout_stops_the_command(mechanism: str, tree: dict[str, Path],
                                                     clean_environ: Path) -> None:
    import time

    started = time.monotonic()
    proc = ctxgate_run(tree, clean_environ, "--sandbox", "read-only", "--timeout", "1", "--",
                       "sleep", "30", mechanisms=mechanism)
    assert proc.returncode == 124
    assert time.monotonic() - started < 15
    assert "stopped after the 1 s timeout" in proc.stderr.decode()
