"""The small-output run path's sandbox (ctxgate.firewall.quicksandbox) agrees with ctxgate.sandbox."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgate.firewall import quicksandbox
from ctxgate.gate.daemon.protocol import runtime_dir
from ctxgate.sandbox import ReadOnlyRun, detect, sandbox_argv
from ctxgate.sandbox.detect import ENTER_SCRIPT


def test_runtime_dir_and_helper_path_match_their_sources(tmp_path: Path) -> None:
    for env in (
        {},
        {"CTXGATE_RUNTIME_DIR": str(tmp_path)},
        {"XDG_RUNTIME_DIR": "/run/u"},
        {"XDG_RUNTIME_DIR": "relative", "TMPDIR": "/t"},
    ):
        assert quicksandbox.runtime_dir(env) == runtime_dir(env)
    assert Path(quicksandbox.ENTER_SCRIPT) == ENTER_SCRIPT


@pytest.mark.parametrize("mechanism", ["bwrap", "namespace", "landlock"])
def test_wrap_builds_what_sandbox_argv_builds(mechanism: str) -> None:
    found = quicksandbox.Detected(mechanism, "")
    assert quicksandbox.wrap(found, ["ls", "-l"]) == sandbox_argv(mechanism, ["ls", "-l"])
    assert quicksandbox.wrap(quicksandbox.Detected(None, "x"), ["ls"]) == ["ls"]


def test_which_finds_what_shutil_which_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "tool").write_text("")  # not executable: skipped
    (tmp_path / "b" / "tool").write_text("#!/bin/sh\n")
    (tmp_path / "b" / "tool").chmod(0o755)
    (tmp_path / "a" / "adir").mkdir()  # a directory: skipped
    monkeypatch.chdir(tmp_path / "b")
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    for path in (f"{a}:{b}", f"{b}:{a}", a, "", ":", f"{a}::{a}", None):
        if path is None:
            monkeypatch.delenv("PATH", raising=False)
        else:
            monkeypatch.setenv("PATH", path)
        for name in ("tool", "adir", "missing", "sh"):
            assert quicksandbox.which(name) == shutil.which(name), (path, name)
    monkeypatch.setenv("PATH", f"{a}:{b}")
    assert quicksandbox.which("tool") == str(tmp_path / "b" / "tool")


def test_wrapping_for_bwrap_loads_no_sandbox_package() -> None:
    """The fast path's bwrap argv comes without importing ctxgate.sandbox (subprocess,
    shutil, dataclasses: tens of milliseconds per hooked call)."""
    src = Path(quicksandbox.__file__).parents[2]
    code = (
        f"import sys; sys.path.insert(0, {str(src)!r})\n"
        "from ctxgate.firewall import quicksandbox as q\n"
        "argv = q.wrap(q.Detected('bwrap', ''), ['ls', '-l'])\n"
        "assert argv[-3:] == ['--', 'ls', '-l'], argv\n"
        "bad = {'ctxgate.sandbox', 'subprocess', 'shutil', 'dataclasses'} & set(sys.modules)\n"
        "print(sorted(bad))\n"
    )
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_the_note_without_a_sandbox_is_read_only_run_s() -> None:
    found = quicksandbox.Detected(None, "nothing here")
    assert ReadOnlyRun(info=found).notes(0) == (quicksandbox.not_sandboxed_note(found),)


def test_detection_is_remembered_per_boot_in_a_private_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not os.path.exists("/proc/sys/kernel/random/boot_id"):
        pytest.skip("no boot id on this platform: it probes every time")
    env = {**os.environ, "CTXGATE_RUNTIME_DIR": str(tmp_path / "rt")}
    first = quicksandbox.detected(env)
    assert first.mechanism == detect().mechanism
    cache = Path(quicksandbox.cache_path(env) or "")
    assert cache.parent == tmp_path / "rt" and cache.name.startswith(quicksandbox.CACHE_NAME)
    assert cache.is_file() and (cache.stat().st_mode & 0o077) == 0
    # a changed answer in the file is believed (that is the cache) ...
    lines = cache.read_text().split("\n")
    cache.write_text("\n".join([lines[0], "landlock", ""]) + "\n")
    assert quicksandbox.detected(env).mechanism == "landlock"
    # ... but not for another key (another mechanism choice) ...
    monkeypatch.setenv(quicksandbox.MECHANISMS_ENV, "")
    assert quicksandbox.detected({**env, quicksandbox.MECHANISMS_ENV: ""}).mechanism is None
    monkeypatch.delenv(quicksandbox.MECHANISMS_ENV)
    # ... nor from a directory others can write
    cache.write_text("\n".join([lines[0], "landlock", ""]) + "\n")
    os.chmod(tmp_path / "rt", 0o777)
    assert quicksandbox.detected(env).mechanism == first.mechanism


def test_each_key_has_its_own_cache_file(tmp_path: Path) -> None:
    """Two checkouts (or PATHs) sharing a runtime directory keep both answers."""
    if not os.path.exists("/proc/sys/kernel/random/boot_id"):
        pytest.skip("no boot id on this platform: nothing is remembered")
    env = {**os.environ, "CTXGATE_RUNTIME_DIR": str(tmp_path / "rt")}
    other = {**env, "PATH": env.get("PATH", "") + ":/nonexistent-ctxgate-test"}
    first, second = quicksandbox.cache_path(env), quicksandbox.cache_path(other)
    assert first and second and first != second
    quicksandbox.detected(env)
    quicksandbox.detected(other)
    assert os.path.isfile(first) and os.path.isfile(second)
    lines = Path(first).read_text().split("\n")
    assert lines[0] == quicksandbox._key(env)
    assert Path(second).read_text().split("\n")[0] == quicksandbox._key(other)
    assert quicksandbox.cache_suffix("a") != quicksandbox.cache_suffix("b")
    assert quicksandbox.cache_suffix("") == "811c9dc5"  # FNV-1a's offset basis
