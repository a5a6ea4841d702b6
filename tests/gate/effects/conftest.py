"""A real git repository per test, and a private $HOME, for the effect rules."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), "-c", "user.email=t@example.com", "-c",
                           "user.name=t", *args], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".bashrc").write_text("alias ll='ls -l'\n")
    (h / ".ssh" / "config").write_text("Host *\n")
    monkeypatch.setenv("HOME", str(h))
    return h


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    """Tracked src/app.py and README.md, ignored build/ with output, an untracked scratch file,
    and a tracked file with uncommitted changes."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hello')\n")
    (root / "src" / "dirty.py").write_text("x = 1\n")
    (root / "README.md").write_text("# demo\n")
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("object")
    (root / "src" / "cache.pyc").write_text("bytecode")
    (root / "scratch.txt").write_text("notes\n")
    (root / "src" / "dirty.py").write_text("x = 2  # not committed\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    (d / "data.txt").write_text("precious\n")
    return d
