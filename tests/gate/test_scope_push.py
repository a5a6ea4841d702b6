"""A file of keys a push would publish, and repository hooks a commit or push skips
(:func:`ctxgate.gate.scope.git._pushed_secrets`, :func:`~ctxgate.gate.scope.git._skipped_hooks`).

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


def test_through_the_gate(repo: Path, judge) -> None:
    v = judge("Bash", {"command": ADD_ALL}, repo, "commit and push my changes")
    assert v.outcome == "ask" and v.code == "beyond_request" and ".env" in v.reason, v
    v = judge("Bash", {"command": "git add app.py && git commit -m wip && git push"}, repo,
              "commit and push my changes")
    assert v.outcome == "allow", v
    assert "API_KEY" in (repo / ".env").read_text()  # judging staged nothing
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                            text=True, check=True).stdout
    assert "?? .env" in status


@pytest.mark.parametrize(("request_text", "command", "said"), [
    ("commit my changes", "git commit --no-verify -am wip", "--no-verify"),
    ("commit my changes", "git commit -n -am wip", "--no-verify"),
    ("push my changes", "git push --no-verify", "--no-verify"),
    ("commit my changes", "HUSKY=0 git commit -am wip", "HUSKY=0"),
    ("commit my changes", "SKIP=gitleaks,detect-secrets git commit -am wip", "gitleaks"),
    ("commit my changes", "git -c core.hooksPath=/dev/null commit -am wip", "hooks turned off"),
    ("commit my changes", "git --git-dir .git commit --no-verify -am wip", "--no-verify"),
])
def test_skipped_hooks_are_asked_about(repo: Path, judge, request_text: str, command: str,
                                       said: str) -> None:
    """Before, each ran: a commit is recoverable, so nothing looked at the checks it skips."""
    v = judge("Bash", {"command": command}, repo, request_text)
    assert v.outcome == "ask" and v.code == "beyond_request" and said in v.reason, v


@pytest.mark.parametrize(("request_text", "command"), [
    ("commit my changes, skip the hooks", "git commit --no-verify -am wip"),
    ("commit without running the hooks", "HUSKY=0 git commit -am wip"),
    ("commit my changes", "git commit -am wip"),
    ("commit my changes with the message 'fix n'", "git commit -am 'fix n'"),
])
def test_hooks_skipped_on_request_or_not_at_all(repo: Path, judge, request_text: str,
                                                command: str) -> None:
    v = judge("Bash", {"command": command}, repo, request_text)
    assert v.outcome == "allow", v
