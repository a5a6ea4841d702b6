"""A file of keys a push would publish (:func:`ctxgate.gate.scope.git._pushed_secrets`).

"commit and push my changes" → ``git add -A && git commit -m wip && git push`` with an
untracked, not ignored ``.env`` ran: the push was requested, and nothing looked at what it
carried. Real repositories with a real bare remote, per test."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ctxgate.gate.scope import unnamed_targets

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(tmp_path, "init", "-q", str(work))
    (work / "app.py").write_text("print(1)\n")
    (work / ".gitignore").write_text("build/\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "init")
    git(work, "remote", "add", "origin", str(remote))
    git(work, "push", "-q", "-u", "origin", "HEAD:main")
    git(work, "branch", "-u", "origin/main")
    (work / "app.py").write_text("print(2)\n")
    (work / ".env").write_text("API_KEY=not-a-real-key\n")
    (work / "build").mkdir()
    (work / "build" / "prod.key").write_text("ignored build output\n")
    return work


ADD_ALL = "git add -A && git commit -m wip && git push"


def test_an_untracked_env_staged_by_the_same_command(repo: Path) -> None:
    found = unnamed_targets("bash", {"command": ADD_ALL}, "commit and push my changes",
                            cwd=str(repo))
    assert found == [".env (a file of keys or passwords, published by the push)"]


def test_a_committed_env_not_yet_pushed(repo: Path) -> None:
    git(repo, "add", ".env")
    git(repo, "commit", "-qm", "oops")
    found = unnamed_targets("bash", {"command": "git push"}, "push my changes", cwd=str(repo))
    assert found and ".env" in found[0]


@pytest.mark.parametrize(("request_text", "command"), [
    ("commit and push my changes", "git add app.py && git commit -m wip && git push"),
    ("commit and push everything including the .env file", ADD_ALL),
    ("commit my changes", "git add -A && git commit -m wip"),  # no push: nothing published
])
def test_what_is_named_or_not_pushed(repo: Path, request_text: str, command: str) -> None:
    assert unnamed_targets("bash", {"command": command}, request_text, cwd=str(repo)) == []


def test_through_the_gate(repo: Path, gate) -> None:
    from ctxgate.gate import ToolCall

    gate.new_run()
    v = gate.decide_sync(ToolCall(tool="Bash", arguments={"command": ADD_ALL}, cwd=str(repo)),
                         user_request="commit and push my changes")
    assert v.outcome == "ask" and v.code == "beyond_request" and ".env" in v.reason, v
    gate.new_run()
    v = gate.decide_sync(ToolCall(tool="Bash", arguments={
        "command": "git add app.py && git commit -m wip && git push"}, cwd=str(repo)),
        user_request="commit and push my changes")
    assert v.outcome == "allow", v
    assert "API_KEY" in (repo / ".env").read_text()  # judging staged nothing
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                            text=True, check=True).stdout
    assert "?? .env" in status
