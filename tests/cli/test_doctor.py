"""`ctxgate doctor` names each broken state in one line, and `--fix` repairs what it can.

Each state is made for real in a private home (CTXGATE_HOME), a private user home (HOME) and
a project directory: garbled, truncated and foreign databases, a home that cannot be written
(a read-only bind mount in a private mount namespace as root, where chmod stops nothing; a
home under a regular file), hook files whose interpreter was removed, and damaged model
files (their pins changed in-process: the shipped files are never touched). Every state is
checked through the real command line: the one line, the exit status, and for fixable ones
that ``--fix`` repairs it without losing a byte and that the next ``doctor`` is clean.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


class Place:
    """A ctxgate home, a user home and a project directory, and doctor run in them."""

    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "ctxgate-home"
        self.user = tmp / "user"
        self.project = tmp / "project"
        self.config = tmp / "no-config.toml"
        self.runtime = tmp / "run"
        for directory in (self.user, self.project):
            directory.mkdir()

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")
               and k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
        env.update(CTXGATE_HOME=str(self.home), CTXGATE_CONFIG=str(self.config),
                   CTXGATE_NO_DAEMON="1", HOME=str(self.user),
                   CTXGATE_RUNTIME_DIR=str(self.runtime),
                   PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{env.get('PYTHONPATH', '')}")
        return env

    def run(self, *args: str, wrap: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
        return subprocess.run([*wrap, sys.executable, "-m", "ctxgate", *args],
                              capture_output=True, text=True, env=self.env(),
                              cwd=self.project, timeout=120)

    def doctor(self, *args: str, wrap: tuple[str, ...] = ()) -> tuple[int, dict[str, str]]:
        """Exit status and ``{check name: its line}`` of ``ctxgate doctor``."""
        proc = self.run("doctor", *args, wrap=wrap)
        assert proc.returncode in (0, 1), proc.stderr
        lines = {}
        body = proc.stdout.split("\nchecks:\n", 1)[1]
        for line in body.splitlines():
            if line.startswith("  "):
                status, rest = line.split(None, 1)
                name, message = rest.split(": ", 1)
                lines[name] = f"{status} {message}"
        return proc.returncode, lines


@pytest.fixture
def place(tmp_path: Path) -> Place:
    return Place(tmp_path)


def test_a_clean_place_passes_every_check(place: Place) -> None:
    code, lines = place.doctor()
    assert code == 0, lines
    assert set(lines) == {"home", "archive", "audit", "model", "hooks", "mcp", "daemon",
                          "sandbox"}
    assert all(line.startswith("ok ") for line in lines.values()), lines


def _archive_with_entries(place: Place) -> bytes:
    proc = place.run("run", "-c", "seq 1 50000")
    assert proc.returncode == 0 and "not archived" not in proc.stdout, proc.stdout
    for suffix in ("-wal", "-shm"):
        (place.home / f"archive.db{suffix}").unlink(missing_ok=True)
    return (place.home / "archive.db").read_bytes()


BROKEN_DATABASES = {
    "garbled archive.db": ("archive", "archive.db is not a SQLite database (garbled or "
                                      "foreign file)"),
    "truncated archive.db": ("archive", "archive.db is corrupt"),
    "archive.db is a directory": ("archive", "{path} is a directory, not a database file"),
    "garbled audit.db": ("audit", "audit.db is not a SQLite database (garbled or foreign "
                                  "file)"),
}


@pytest.mark.parametrize("kind", list(BROKEN_DATABASES))
def test_a_broken_database_is_named_and_moved_aside_by_fix(kind: str, place: Place) -> None:
    name, why = BROKEN_DATABASES[kind]
    path = place.home / f"{name}.db"
    why = why.format(path=path)
    if kind == "truncated archive.db":
        _archive_with_entries(place)
        os.truncate(path, 3000)
    elif kind == "archive.db is a directory":
        (path / "inside").mkdir(parents=True)
    else:
        place.home.mkdir()
        path.write_bytes(os.urandom(40_000))
    old = b"dir" if path.is_dir() else path.read_bytes()

    code, lines = place.doctor()
    assert code == 1
    assert lines[name].startswith(f"PROBLEM {why}"), lines[name]
    assert f"fix: ctxgate doctor --fix (moves it to {path}.broken-" in lines[name]
    assert "keeping every byte" in lines[name]
    assert all(line.startswith("ok ") for n, line in lines.items() if n != name), lines

    code, lines = place.doctor("--fix")
    assert code == 0, lines
    assert lines[name].startswith(f"fixed {why}"), lines[name]
    assert f"a new empty {name}.db is in place" in lines[name]
    (aside,) = place.home.glob(f"{name}.db.broken-*[0-9]")
    assert str(aside) in lines[name]
    assert (b"dir" if aside.is_dir() else aside.read_bytes()) == old  # nothing is lost

    code, lines = place.doctor()
    assert code == 0 and lines[name] == f"ok {path} passes quick_check", lines
    if name == "archive":  # the new archive stores outputs again
        proc = place.run("run", "-c", "seq 1 50000")
        assert proc.returncode == 0 and "not archived" not in proc.stdout, proc.stdout
        assert proc.stdout.startswith("[ctxgate digest: "), proc.stdout[:300]
    else:
        proc = place.run("gate", "check", "--tool", "bash", "--args", '{"command": "ls"}')
        assert proc.returncode == 0 and "not recorded" not in proc.stderr, proc.stderr


def test_a_json_report_lists_the_checks(place: Place) -> None:
    place.home.mkdir()
    (place.home / "archive.db").write_bytes(b"not sqlite at all" * 100)
    proc = place.run("doctor", "--json")
    assert proc.returncode == 1
    facts = json.loads(proc.stdout)
    assert facts["problems"] == 1
    (archive,) = [c for c in facts["checks"] if c["name"] == "archive"]
    assert archive["ok"] is False and archive["fixable"] is True and archive["fixed"] is False
    assert archive["message"].startswith("archive.db is not a SQLite database")
    assert {"name", "ok", "message", "fixable", "fixed"} == set(archive)
    fixed = json.loads(place.run("doctor", "--json", "--fix").stdout)
    (archive,) = [c for c in fixed["checks"] if c["name"] == "archive"]
    assert archive["ok"] is True and archive["fixed"] is True and fixed["problems"] == 0


def test_a_home_under_a_regular_file_is_named_and_not_fixable(place: Place,
                                                               tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    place.home = tmp_path / "file" / "home"
    code, lines = place.doctor()
    assert code == 1
    assert lines["home"] == (f"PROBLEM {place.home} cannot be created: {tmp_path / 'file'} is "
                             "not a directory; set CTXGATE_HOME to a writable directory")
    code, lines = place.doctor("--fix")
    assert code == 1 and lines["home"].startswith("PROBLEM ")


def _private_mount_namespace() -> list[str] | None:
    from test_broken_archive import _namespace_prefix  # the one probe (same directory)

    return _namespace_prefix()


def test_a_read_only_home_is_named(place: Place) -> None:
    """As root (which chmod does not stop) the home is a read-only bind mount in a private
    mount namespace; otherwise it is chmod 0500."""
    _archive_with_entries(place)
    if os.geteuid() != 0:
        place.home.chmod(0o500)
        try:
            code, lines = place.doctor()
        finally:
            place.home.chmod(0o700)
        assert code == 1
        assert lines["home"].startswith(f"PROBLEM {place.home} is not writable ("), lines
        return
    prefix = _private_mount_namespace()
    if prefix is None:
        pytest.skip("no private mount namespace here (unshare -m / -rm refused); as root only "
                    "a read-only mount makes a home read-only")
    home = place.home
    wrap = (*prefix, "sh", "-c", f"mount --bind {home} {home} && mount -o remount,bind,ro "
            f'{home} && exec "$@"', "sh")
    code, lines = place.doctor(wrap=wrap)
    assert code == 1
    assert lines["home"] == (f"PROBLEM {home} is on a read-only file system (Read-only file "
                             "system); make it writable or set CTXGATE_HOME to a writable "
                             "directory"), lines
    assert lines["archive"].startswith("ok "), lines  # the archive itself is sound
    code, lines = place.doctor("--fix", wrap=wrap)
    assert code == 1 and lines["home"].startswith("PROBLEM ")


def _mode_bits_bind() -> tuple[str, ...]:
    """A prefix under which this process's user is held to the mode bits: as root, without
    the capabilities that override them (root still owns the home, as a user owns theirs)."""
    if os.geteuid() != 0:
        return ()
    assert shutil.which("setpriv"), "setpriv (util-linux) is needed to drop root's DAC override"
    return ("setpriv", "--bounding-set=-dac_override,-dac_read_search",
            "--inh-caps=-dac_override,-dac_read_search")


def test_a_home_lacking_its_owners_write_bit_is_fixed(place: Place) -> None:
    wrap = _mode_bits_bind()
    place.home.mkdir()
    place.home.chmod(0o500)
    try:
        code, lines = place.doctor(wrap=wrap)
        assert code == 1
        assert lines["home"].startswith(f"PROBLEM {place.home} is not writable ("), lines
        assert f"fix: ctxgate doctor --fix (chmod u+rwx {place.home})" in lines["home"]
        code, lines = place.doctor("--fix", wrap=wrap)
        assert code == 0 and lines["home"].startswith("fixed "), lines
        assert place.home.stat().st_mode & 0o700 == 0o700
        assert place.doctor(wrap=wrap)[1]["home"] == f"ok {place.home} is writable"
    finally:
        place.home.chmod(0o700)


def _removed_interpreter(tmp: Path) -> str:
    """The path of an interpreter that existed (a venv's python) and was removed."""
    venv = tmp / "old-venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python3").symlink_to(sys.executable)
    shutil.rmtree(tmp / "old-venv")
    return str(venv / "python3")


def test_hooks_that_run_a_removed_interpreter_are_named_and_reinstalled(
        place: Place, tmp_path: Path) -> None:
    gone = _removed_interpreter(tmp_path)
    launcher = ROOT / "src" / "ctxgate" / "_launch.py"
    claude = place.user / ".claude" / "settings.json"
    claude.parent.mkdir()
    mine = {"type": "command", "command": "echo my own hook"}
    claude.write_text(json.dumps({
        "model": "opus",
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [mine]},
                {"matcher": "*", "hooks": [{"type": "command", "timeout": 60, "command":
                                            f"{gone} -S {launcher} hook pre --no-rewrite"}]}],
            "PostToolUse": [{"matcher": "*", "hooks": [
                {"type": "command", "command": f"{gone} -S {launcher} hook post"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        }}, indent=1))
    old_claude = claude.read_bytes()
    codex = place.project / ".codex" / "hooks.json"
    codex.parent.mkdir()
    removed_launcher = tmp_path / "old-site" / "ctxgate" / "_launch.py"
    codex.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command",
         "command": f"{sys.executable} -S {removed_launcher} hook pre --harness codex"}]}]}}))

    code, lines = place.doctor()
    assert code == 1
    assert lines["hooks"] == (
        f"PROBLEM {claude} runs {gone}, which no longer exists; {codex} runs "
        f"{removed_launcher}, which no longer exists; fix: ctxgate doctor --fix (reinstalls "
        "them for this interpreter, keeping other hooks)"), lines["hooks"]

    code, lines = place.doctor("--fix")
    assert code == 0, lines
    assert lines["hooks"].startswith("fixed rewrote ctxgate's hooks to run "), lines["hooks"]
    assert f"{claude} (previous version: {claude}.ctxgate-backup)" in lines["hooks"]
    assert Path(f"{claude}.ctxgate-backup").read_bytes() == old_claude

    data = json.loads(claude.read_text())
    assert data["model"] == "opus"
    assert data["hooks"]["Stop"] == [{"hooks": [{"type": "command",
                                                 "command": "notify-send done"}]}]
    pre = [h["command"] for g in data["hooks"]["PreToolUse"] for h in g["hooks"]]
    post = [h["command"] for g in data["hooks"]["PostToolUse"] for h in g["hooks"]]
    assert pre[0] == "echo my own hook" and len(pre) == 2 and len(post) == 1
    for command in (pre[1], post[0]):
        interpreter, *_ = command.split()
        assert interpreter == sys.executable and os.path.exists(interpreter), command
        assert gone not in command
    assert pre[1].endswith(" hook pre --no-rewrite")  # the user's choice of flags is kept
    (codex_pre,) = [h["command"] for g in json.loads(codex.read_text())["hooks"]["PreToolUse"]
                    for h in g["hooks"]]
    assert codex_pre.endswith(" hook pre --harness codex")
    assert str(removed_launcher) not in codex_pre

    code, lines = place.doctor()
    assert code == 0
    assert lines["hooks"] == "ok ctxgate hooks in 2 file(s), every interpreter exists"


def test_mcp_entries_that_start_a_removed_interpreter_are_named_and_repointed(
        place: Place, tmp_path: Path) -> None:
    import tomllib

    gone = _removed_interpreter(tmp_path)
    claude = place.user / ".claude.json"
    other = {"type": "stdio", "command": "npx", "args": ["-y", "some-server"]}
    args = ["-m", "ctxgate", "mcp", "serve", "--request", "summarise the repo"]
    claude.write_text(json.dumps({"theme": "dark", "mcpServers": {
        "other": other, "ctxgate": {"type": "stdio", "command": gone, "args": args,
                                    "env": {}}}}, indent=2))
    old_claude = claude.read_bytes()
    codex = place.project / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text('model = "o4"\n\n[mcp_servers.ctxgate]\n'
                     f'command = "{gone}"\nargs = ["-m", "ctxgate", "mcp", "serve"]\n')

    code, lines = place.doctor()
    assert code == 1
    assert lines["mcp"] == (
        f"PROBLEM {claude} starts {gone!r}, which no longer exists; {codex} starts {gone!r}, "
        "which no longer exists; fix: ctxgate doctor --fix (points it at this interpreter, "
        "keeping its arguments and the file's other entries)"), lines["mcp"]

    code, lines = place.doctor("--fix")
    assert code == 0, lines
    assert lines["mcp"].startswith(f"fixed rewrote ctxgate's MCP server entry to start "
                                   f"{sys.executable}: "), lines["mcp"]
    assert Path(f"{claude}.ctxgate-backup").read_bytes() == old_claude
    data = json.loads(claude.read_text())
    assert data["theme"] == "dark" and data["mcpServers"]["other"] == other
    assert data["mcpServers"]["ctxgate"]["command"] == sys.executable
    assert data["mcpServers"]["ctxgate"]["args"] == args  # the user's --request is kept
    toml = tomllib.loads(codex.read_text())
    assert toml["model"] == "o4"
    assert toml["mcp_servers"]["ctxgate"] == {"command": sys.executable,
                                              "args": ["-m", "ctxgate", "mcp", "serve"]}

    code, lines = place.doctor()
    assert code == 0
    assert lines["mcp"] == "ok ctxgate MCP server in 2 client file(s), every interpreter exists"


def test_hooks_of_a_live_interpreter_are_fine(place: Place) -> None:
    settings = place.project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": f"{sys.executable} -m ctxgate hook pre"}]}]}}))
    code, lines = place.doctor()
    assert code == 0 and lines["hooks"].startswith("ok ctxgate hooks in 1 file(s)")


def test_damaged_model_files_are_named_with_the_reinstall_line(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """In-process (the pins are changed, never the shipped files): one file differs from its
    pin and one is missing; doctor names both, --fix cannot repair them and says so by its
    exit status, and hooks to a removed interpreter are not rewritten meanwhile (they would
    deny every call the model judges)."""
    from typer.testing import CliRunner

    from ctxgate.cli import app
    from ctxgate.gate.backends import pins

    monkeypatch.setitem(pins.PINNED_SHA256, "effect.json", "0" * 64)
    monkeypatch.setitem(pins.PINNED_SHA256, "gone.bin", "0" * 64)
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)
    gone = _removed_interpreter(tmp_path)
    hooks = json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": f"{gone} -m ctxgate hook pre"}]}]}})
    (user / ".claude" / "settings.json").write_text(hooks)
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    for args in (["doctor"], ["doctor", "--fix"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 1, result.output
        (line,) = [x for x in result.output.splitlines() if x.startswith("  PROBLEM model: ")]
        assert line.startswith("  PROBLEM model: local model file effect.json differs from "
                               "its pinned SHA-256, gone.bin is missing (in "), line
        assert line.endswith("reinstall ctxgate (pip install --force-reinstall --no-deps "
                             "ctxgate)"), line
        (line,) = [x for x in result.output.splitlines() if x.startswith("  PROBLEM hooks: ")]
        assert line.endswith("not rewritten while the local model files are damaged "
                             "(reinstall ctxgate first)"), line
    assert (user / ".claude" / "settings.json").read_text() == hooks


def test_a_daemon_directory_that_is_not_private_is_made_private(place: Place) -> None:
    place.runtime.mkdir(mode=0o755)
    place.runtime.chmod(0o755)
    code, lines = place.doctor()
    assert code == 1
    assert lines["daemon"] == (f"PROBLEM {place.runtime} has mode 0755, not 0700, so hooks "
                               "never use the decision daemon (slower); fix: ctxgate doctor "
                               f"--fix (chmod 700 {place.runtime})")
    code, lines = place.doctor("--fix")
    assert code == 0 and lines["daemon"] == f"fixed {place.runtime} made private (chmod 700)"
    assert place.runtime.stat().st_mode & 0o777 == 0o700


def test_sockets_of_dead_daemons_are_removed_and_a_live_ones_kept(place: Place) -> None:
    import fcntl
    import socket

    place.runtime.mkdir(mode=0o700)
    for key in ("dead", "live"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(place.runtime / f"g-{key}.sock"))
        sock.close()  # the file stays, as a killed daemon leaves it
        (place.runtime / f"g-{key}.lock").write_text("123\n")
    with open(place.runtime / "g-live.lock") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a running daemon holds its lock
        code, lines = place.doctor()
        assert code == 0  # harmless: a starting daemon unlinks it
        assert lines["daemon"] == (f"ok {place.runtime} is private; 1 socket(s) of daemons "
                                   "that are no longer running (g-dead.sock…), harmless; "
                                   "ctxgate doctor --fix removes them")
        code, lines = place.doctor("--fix")
        assert code == 0
        assert lines["daemon"] == f"fixed removed 1 stale socket(s) in {place.runtime}"
        assert not (place.runtime / "g-dead.sock").exists()
        assert (place.runtime / "g-live.sock").exists()
        assert (place.runtime / "g-dead.lock").exists()  # a lock file is never removed
        assert place.doctor()[1]["daemon"] == f"ok {place.runtime} is private, no stale sockets"
